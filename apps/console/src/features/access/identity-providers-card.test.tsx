import { accessMessages } from '@postern/contract';
import { act, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dismissToast, getToasts } from '../../lib/toast-store';
import { fakeApi, renderWithProviders } from '../services/service-test-fixtures';
import { buildProvider } from './access-test-fixtures';
import { IdentityProvidersCard } from './identity-providers-card';

// Settings › Identity providers: the list, the form with its write-only secret, "Test connection", delete.

const page = (data: unknown[]) => ({ status: 200, body: { data, page: 1, limit: 5, total: data.length } });
const dialog = (name: string) => screen.getByRole('dialog', { name });
const save = () => act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
const openMenu = async (name: string) => {
  fireEvent.click(await screen.findByRole('button', { name: `Actions for identity provider ${name}` }));
};

afterEach(() => {
  vi.unstubAllGlobals();
  for (const toast of getToasts()) dismissToast(toast.id);
});

describe('identity providers card', () => {
  it('adds a provider: the secret is sent once and the scopes as a list', async () => {
    const calls = fakeApi((method) =>
      method === 'POST' ? { status: 201, body: buildProvider() } : { status: 200, body: page([]).body },
    );
    renderWithProviders(<IdentityProvidersCard />);
    expect(await screen.findByText('No identity providers yet')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '+ Add provider' }));
    const form = dialog('Add Identity Provider');
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'Keycloak' } });
    fireEvent.change(within(form).getByLabelText('Issuer URL'), {
      target: { value: 'https://sso.example.com/realms/home/' },
    });
    fireEvent.change(within(form).getByLabelText('Client ID'), { target: { value: 'postern' } });
    fireEvent.change(within(form).getByLabelText('Client secret'), { target: { value: 's3cret' } });
    fireEvent.change(within(form).getByLabelText('Scopes'), { target: { value: 'openid email groups' } });
    await save();
    expect(calls.find((call) => call.method === 'POST')?.body).toEqual({
      name: 'Keycloak',
      // The contract drops a trailing slash: discovery appends /.well-known/openid-configuration.
      issuer: 'https://sso.example.com/realms/home',
      clientId: 'postern',
      clientSecret: 's3cret',
      scopes: ['openid', 'email', 'groups'],
      groupsClaim: 'groups',
    });
    expect(screen.queryByRole('dialog', { name: 'Add Identity Provider' })).toBeNull();
  });

  it('refuses an issuer that is not https before sending', async () => {
    const calls = fakeApi(() => page([]));
    renderWithProviders(<IdentityProvidersCard />);
    fireEvent.click(await screen.findByRole('button', { name: '+ Add provider' }));
    fireEvent.change(screen.getByLabelText('Issuer URL'), { target: { value: 'http://sso.example.com' } });
    expect(screen.getByText(accessMessages.issuer)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    // Under the field and in the test's result.
    expect(screen.getAllByText(accessMessages.issuer).map((node) => node.getAttribute('role'))).toEqual([
      'alert',
      'alert',
    ]);
    expect(calls.filter((call) => call.method === 'POST')).toEqual([]);
  });

  it('edits: an empty secret is left out (kept), the box removes it (null); never shown back', async () => {
    const provider = buildProvider({ policies: 2 });
    const calls = fakeApi((method) => (method === 'PATCH' ? { status: 200, body: provider } : page([provider])));
    renderWithProviders(<IdentityProvidersCard />);
    expect(await screen.findByText('2 policies')).toBeTruthy();
    await openMenu('Keycloak');
    fireEvent.click(screen.getByRole('menuitem', { name: 'Edit' }));
    const secret = screen.getByLabelText<HTMLInputElement>('Client secret');
    expect(secret.value).toBe('');
    expect(secret.placeholder).toBe('Leave empty to keep');
    await save();
    expect(calls.find((call) => call.method === 'PATCH')?.body).not.toHaveProperty('clientSecret');

    await openMenu('Keycloak');
    fireEvent.click(screen.getByRole('menuitem', { name: 'Edit' }));
    fireEvent.click(screen.getByLabelText('Remove the stored secret'));
    expect(screen.getByLabelText<HTMLInputElement>('Client secret').disabled).toBe(true);
    await save();
    expect(calls.filter((call) => call.method === 'PATCH')[1]?.body).toHaveProperty('clientSecret', null);
  });

  it('tests the connection through the gateway and shows what it found, or why not', async () => {
    let answer: { status: number; body: unknown } = {
      status: 200,
      body: {
        issuer: 'https://sso.example.com/realms/home',
        authorizationEndpoint: 'https://sso.example.com/auth',
        tokenEndpoint: 'https://sso.example.com/token',
        userinfoEndpoint: null,
        scopesSupported: ['openid', 'email'],
        claimsSupported: [],
        supportsPkce: true,
      },
    };
    const calls = fakeApi((method, path) => (path === '/api/access/providers/discover' ? answer : page([])));
    renderWithProviders(<IdentityProvidersCard />);
    fireEvent.click(await screen.findByRole('button', { name: '+ Add provider' }));
    fireEvent.change(screen.getByLabelText('Issuer URL'), { target: { value: 'https://sso.example.com/realms/home' } });
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Test connection' })));
    const result = await screen.findByRole('status', { name: 'Test connection result' });
    expect(within(result).getByText('https://sso.example.com/token')).toBeTruthy();
    expect(within(result).getByText('Supported')).toBeTruthy();
    expect(calls.find((call) => call.path === '/api/access/providers/discover')?.body).toEqual({
      issuer: 'https://sso.example.com/realms/home',
    });

    const reason = 'Discovery at https://sso.example.com/realms/home failed: connect ECONNREFUSED';
    answer = {
      status: 422,
      body: { message: 'Validation failed', errors: { body: [{ field: 'issuer', message: reason }] } },
    };
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Test connection' })));
    expect((await screen.findByText(reason)).getAttribute('role')).toBe('alert');
  });

  it("deletes after the confirmation; one in use stays, and the gateway's reason is shown", async () => {
    const provider = buildProvider({ policies: 1 });
    const inUse = accessMessages.providerInUse('Keycloak', 1);
    const calls = fakeApi((method) =>
      method === 'DELETE' ? { status: 400, body: { message: inUse } } : page([provider]),
    );
    renderWithProviders(<IdentityProvidersCard />);
    await openMenu('Keycloak');
    fireEvent.click(screen.getByRole('menuitem', { name: 'Delete' }));
    // The confirm dialog's code loads when first asked (components/ui/confirm.tsx).
    const accept = await screen.findByRole('button', { name: 'Yes, delete it!' });
    await act(async () => fireEvent.click(accept));
    expect(calls.filter((call) => call.method === 'DELETE').map((call) => call.path)).toEqual([
      '/api/access/providers/3',
    ]);
    expect(getToasts().map((toast) => toast.message)).toContain(inUse);
  });
});
