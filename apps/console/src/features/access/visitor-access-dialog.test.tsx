import { accessMessages, type ShareLink, type VisitorSession } from '@postern/contract';
import { act, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dismissToast, getToasts } from '../../lib/toast-store';
import { buildHttpService, fakeApi, renderWithProviders } from '../services/service-test-fixtures';
import { buildPolicy, buildServiceAccess } from './access-test-fixtures';
import { VisitorAccessDialog } from './visitor-access-dialog';

// A service's Visitor Access: the policy applied now, share links (create, shown once, revoke) and sessions (end).

const link = (overrides: Partial<ShareLink> = {}): ShareLink => ({
  id: 5,
  serviceId: 9,
  name: 'for-bob',
  pathPrefix: null,
  expiresAt: '2099-01-01T00:00:00.000Z',
  revoked: false,
  lastUsedAt: null,
  uses: 0,
  created_at: '2026-11-22T10:00:00Z',
  ...overrides,
});
const session = (overrides: Partial<VisitorSession> = {}): VisitorSession => ({
  id: 12,
  serviceId: 9,
  method: 'sso',
  user: 'alice',
  email: 'alice@example.com',
  groups: ['ops'],
  address: '198.51.100.7',
  shareLinkId: null,
  created_at: new Date(Date.now() - 5 * 60_000).toISOString(),
  expiresAt: '2099-01-01T00:00:00.000Z',
  revoked: false,
  ...overrides,
});
const page = (data: unknown[]) => ({ status: 200, body: { data, page: 1, limit: 5, total: data.length } });
const protectedWithLinks = buildServiceAccess({
  mode: 'protected',
  own: buildPolicy({ shareLinks: true }),
  setBy: 'admin',
  effective: { ...buildPolicy({ shareLinks: true }), source: 'service' },
});

afterEach(() => {
  vi.unstubAllGlobals();
  for (const toast of getToasts()) dismissToast(toast.id);
});

describe('Visitor Access dialog', () => {
  it('creates a share link and shows its URL once, with a copy button', async () => {
    const url = 'https://app.example.com/_postern/access/share?token=abc';
    const calls = fakeApi((method, path) => {
      if (path.endsWith('/access')) return { status: 200, body: protectedWithLinks };
      if (method === 'POST') return { status: 201, body: { ...link({ pathPrefix: '/docs' }), url } };
      return page([]);
    });
    renderWithProviders(<VisitorAccessDialog service={buildHttpService()} onClose={vi.fn()} />);
    expect(await screen.findByText('Its own policy')).toBeTruthy();
    expect(await screen.findByText('No share links yet.')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '+ Create share link' }));
    const form = screen.getByRole('dialog', { name: 'Create Share Link' });
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'for-bob' } });
    fireEvent.change(within(form).getByLabelText('Only below path (Optional)'), { target: { value: '/docs' } });
    fireEvent.change(within(form).getByLabelText('Expires'), { target: { value: '86400' } });
    await act(async () => fireEvent.click(within(form).getByRole('button', { name: 'Save' })));

    expect(calls.find((call) => call.method === 'POST')).toMatchObject({
      path: '/api/services/4/http/9/share-links',
      body: { name: 'for-bob', pathPrefix: '/docs', ttl: 86400 },
    });
    const created = await screen.findByRole('dialog', { name: 'Share Link Created' });
    expect(within(created).getByRole<HTMLInputElement>('textbox', { name: 'Share link' }).value).toBe(url);
    expect(within(created).getByRole('button', { name: 'Copy share link' })).toBeTruthy();
    expect(within(created).getByText('The link is only visible once. Make sure to store it securely.')).toBeTruthy();
    fireEvent.click(within(created).getByRole('button', { name: 'Got it!' }));
    expect(screen.queryByDisplayValue(url)).toBeNull();
  });

  it('offers no share link when the policy does not allow them, and says why', async () => {
    fakeApi((method, path) => (path.endsWith('/access') ? { status: 200, body: buildServiceAccess() } : page([])));
    renderWithProviders(<VisitorAccessDialog service={buildHttpService()} onClose={vi.fn()} />);
    expect(await screen.findByText(`${accessMessages.shareLinksOff}.`)).toBeTruthy();
    expect(screen.getByRole<HTMLButtonElement>('button', { name: '+ Create share link' }).disabled).toBe(true);
    expect(screen.getByText('Public: anyone can reach it')).toBeTruthy();
  });

  it('revokes a share link after the confirmation', async () => {
    const calls = fakeApi((method, path) => {
      if (path.endsWith('/access')) return { status: 200, body: protectedWithLinks };
      if (method === 'PATCH') return { status: 200, body: link({ revoked: true }) };
      if (path.endsWith('/share-links')) return page([link({ uses: 3, lastUsedAt: new Date().toISOString() })]);
      return page([]);
    });
    renderWithProviders(<VisitorAccessDialog service={buildHttpService()} onClose={vi.fn()} />);
    expect(await screen.findByText('3 times')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Revoke share link for-bob' }));
    // The confirm dialog's code loads when first asked (components/ui/confirm.tsx).
    expect(await screen.findByRole('dialog', { name: 'Revoke Share Link' })).toBeTruthy();
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Yes, revoke it!' })));
    expect(calls.filter((call) => call.method === 'PATCH').map((call) => call.path)).toEqual([
      '/api/services/4/http/9/share-links/5/revoke',
    ]);
    expect(getToasts().map((toast) => toast.message)).toContain('Share link revoked');
  });

  it('lists who is signed in (method, since, from where) and ends a session', async () => {
    const calls = fakeApi((method, path) => {
      if (path.endsWith('/access')) return { status: 200, body: protectedWithLinks };
      if (method === 'PATCH') return { status: 200, body: session({ revoked: true }) };
      if (path.endsWith('/visitor-sessions'))
        return page([
          session(),
          session({ id: 13, method: 'share', email: null, user: 'share:for-bob', groups: [], address: null }),
          session({ id: 14, method: 'password', email: null, user: null, groups: [], address: '203.0.113.9' }),
        ]);
      return page([]);
    });
    renderWithProviders(<VisitorAccessDialog service={buildHttpService()} onClose={vi.fn()} />);
    const visitors = await screen.findByRole('region', { name: 'Signed-in visitors' });
    expect(await within(visitors).findByText('alice@example.com')).toBeTruthy();
    expect(within(visitors).getByText('198.51.100.7')).toBeTruthy();
    expect(within(visitors).getAllByText('5 minutes ago').length).toBeGreaterThan(0);
    expect(within(visitors).getByText('Share link “for-bob”')).toBeTruthy();
    expect(within(visitors).getByText('Visitor with the password')).toBeTruthy();
    fireEvent.click(within(visitors).getByRole('button', { name: 'End the session of alice@example.com' }));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Yes, end it!' })));
    expect(calls.filter((call) => call.method === 'PATCH').map((call) => call.path)).toEqual([
      '/api/services/4/http/9/visitor-sessions/12/revoke',
    ]);
  });
});
