import type { Account, CurrentAccount, Role } from '@postern/contract';
import { rolePermissions } from '@postern/contract';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearToken, readToken } from '../../lib/session';
import { buildNode } from '../../test/fixtures';
import { fakeApi, renderInRouter } from '../services/service-test-fixtures';
import { AccountsPage } from './accounts-page';
import { InvitePage } from './invite-page';

const stamp = '2026-11-27T05:00:00.000Z';

const account = (id: number, username: string, role: Role, overrides: Partial<Account> = {}): Account => ({
  id,
  username,
  role,
  enabled: true,
  passwordSignIn: true,
  twoFactor: false,
  identity: null,
  lastSignInAt: null,
  nodes: null,
  created_at: stamp,
  updated_at: stamp,
  ...overrides,
});

const me = (role: Role): CurrentAccount => ({
  id: 1,
  username: 'admin',
  role,
  passwordSignIn: true,
  twoFactor: false,
  identity: null,
  via: 'password',
  permissions: [...rolePermissions[role]],
  nodes: null,
});

const list = <T,>(data: T[]) => ({ data, page: 1, limit: 100, total: data.length });

describe('the Accounts page', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('lists accounts with role, status, second factor and how they sign in; one’s own row has no actions', async () => {
    fakeApi((method, path) => {
      if (path === '/api/auth/account') return { status: 200, body: me('owner') };
      if (path === '/api/accounts')
        return {
          status: 200,
          body: list([
            account(1, 'admin', 'owner'),
            account(2, 'alice@corp.test', 'viewer', {
              twoFactor: true,
              enabled: false,
              passwordSignIn: false,
              identity: { providerId: 3, providerName: 'Corp IdP', email: 'alice@corp.test' },
            }),
          ]),
        };
      return undefined;
    });
    renderInRouter(() => <AccountsPage />);
    const alice = (await screen.findByText('alice@corp.test')).closest('tr') as HTMLElement;
    expect(within(alice).getByLabelText<HTMLSelectElement>('Role of alice@corp.test').value).toBe('viewer');
    expect(within(alice).getByText('Disabled')).toBeTruthy();
    expect(within(alice).getByText('On')).toBeTruthy();
    expect(within(alice).getByText('Corp IdP only')).toBeTruthy();
    const own = screen.getByText('(you)').closest('tr') as HTMLElement;
    expect(within(own).queryByRole('combobox')).toBeNull();
    expect(within(own).queryByRole('button')).toBeNull();
  });

  it('changes a role with the contract’s PATCH, and resets a lost second factor after a confirmation', async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/auth/account') return { status: 200, body: me('owner') };
      if (path === '/api/accounts')
        return { status: 200, body: list([account(2, 'bob', 'viewer', { twoFactor: true })]) };
      if (method === 'PATCH' && path === '/api/accounts/2') return { status: 200, body: account(2, 'bob', 'operator') };
      if (method === 'PATCH' && path === '/api/accounts/2/reset-two-factor')
        return { status: 200, body: account(2, 'bob', 'viewer') };
      return undefined;
    });
    renderInRouter(() => <AccountsPage />);
    fireEvent.change(await screen.findByLabelText('Role of bob'), { target: { value: 'operator' } });
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PATCH' && c.path === '/api/accounts/2')?.body).toEqual({
        role: 'operator',
      }),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Actions for bob' }));
    fireEvent.click(await screen.findByRole('menuitem', { name: 'Reset two-factor sign-in' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Reset' }));
    await waitFor(() => expect(calls.some((c) => c.path === '/api/accounts/2/reset-two-factor')).toBe(true));
  });

  it('limits an operator to the nodes the owner ticks, and back to every node', async () => {
    const nodes = [buildNode({ id: 4, name: 'edge-a' }), buildNode({ id: 7, name: 'edge-b' })];
    const calls = fakeApi((method, path) => {
      if (path === '/api/auth/account') return { status: 200, body: me('owner') };
      if (path === '/api/accounts')
        return { status: 200, body: list([account(2, 'olga', 'operator'), account(3, 'ada', 'admin')]) };
      if (path === '/api/nodes') return { status: 200, body: list(nodes) };
      if (method === 'PATCH' && path === '/api/accounts/2')
        return { status: 200, body: account(2, 'olga', 'operator', { nodes: [7] }) };
      return undefined;
    });
    renderInRouter(() => <AccountsPage />);
    const olga = (await screen.findByText('olga')).closest('tr') as HTMLElement;
    expect(within(olga).getByText('All nodes')).toBeTruthy();
    // An admin sees every node: nothing to choose.
    expect(within(screen.getByText('ada').closest('tr') as HTMLElement).queryByText('All nodes')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Actions for olga' }));
    fireEvent.click(await screen.findByRole('menuitem', { name: 'Choose nodes…' }));
    fireEvent.click(await screen.findByLabelText('edge-b'));
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PATCH' && c.path === '/api/accounts/2')?.body).toEqual({ nodes: [7] }),
    );
    await waitFor(() => expect(screen.queryByLabelText('edge-b')).toBeNull());
    // The node list is read only for the dialog, not for the page.
    expect(calls.filter((c) => c.path === '/api/nodes')).toHaveLength(1);
  });

  it('shows an invite’s link once, after the owner named the person and the role', async () => {
    const url = 'https://gateway.test/invite#abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';
    const calls = fakeApi((method, path) => {
      if (path === '/api/auth/account') return { status: 200, body: me('owner') };
      if (method === 'POST' && path === '/api/invites')
        return {
          status: 201,
          body: {
            id: 9,
            username: 'carol@corp.test',
            role: 'operator',
            createdBy: 'admin',
            expiresAt: stamp,
            state: 'pending',
            created_at: stamp,
            url,
          },
        };
      return undefined;
    });
    renderInRouter(() => <AccountsPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'Invite someone' }));
    fireEvent.change(screen.getByLabelText('Username', { exact: false }), { target: { value: 'carol@corp.test' } });
    fireEvent.change(screen.getByLabelText('Role'), { target: { value: 'operator' } });
    fireEvent.click(screen.getByRole('button', { name: 'Make the invite link' }));
    expect((await screen.findByLabelText<HTMLInputElement>('Invite link')).value).toBe(url);
    expect(calls.find((c) => c.method === 'POST' && c.path === '/api/invites')?.body).toEqual({
      username: 'carol@corp.test',
      role: 'operator',
    });
    fireEvent.click(screen.getByRole('button', { name: 'Got it!' }));
    await waitFor(() => expect(screen.queryByLabelText('Invite link')).toBeNull());
  });

  it('tells any other role that accounts are the owners’, without asking for them', async () => {
    const calls = fakeApi((_, path) => (path === '/api/auth/account' ? { status: 200, body: me('admin') } : undefined));
    renderInRouter(() => <AccountsPage />);
    expect(await screen.findByText('Only an owner may see and manage accounts.')).toBeTruthy();
    expect(calls.some((c) => c.path === '/api/accounts')).toBe(false);
  });
});

describe('the invite page', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    clearToken();
  });

  it('says who is invited, makes the account with the chosen password, signs in and goes to Settings', async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/auth/invite')
        return { status: 200, body: { username: 'dave', role: 'viewer', expiresAt: stamp } };
      if (path === '/api/auth/invite/accept') return { status: 201, body: { username: 'dave', role: 'viewer' } };
      if (path === '/api/auth/login') return { status: 200, body: { token: 'new-session', expires_in: 3600 } };
      return undefined;
    });
    window.location.hash = '#the-token';
    const router = renderInRouter(() => <InvitePage />, { path: '/invite' });
    expect(await screen.findByText('dave')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Password', { exact: true }), { target: { value: 'a-long-password' } });
    fireEvent.change(screen.getByLabelText('Repeat the password', { exact: true }), {
      target: { value: 'a-long-password' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Make my account' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/settings'));
    expect(readToken()).toBe('new-session');
    expect(calls.find((c) => c.path === '/api/auth/invite/accept')?.body).toEqual({
      token: 'the-token',
      password: 'a-long-password',
    });
    window.location.hash = '';
  });

  it('shows the server’s reason for a used or expired link, and no form', async () => {
    fakeApi((_, path) =>
      path === '/api/auth/invite'
        ? {
            status: 400,
            body: { code: 'bad_request', message: 'This invite link has expired. Ask an owner for a new one' },
          }
        : undefined,
    );
    window.location.hash = '#old-token';
    renderInRouter(() => <InvitePage />, { path: '/invite' });
    expect(await screen.findAllByText('This invite link has expired. Ask an owner for a new one')).not.toHaveLength(0);
    expect(screen.queryByRole('button', { name: 'Make my account' })).toBeNull();
    window.location.hash = '';
  });
});
