import type { Node, PersonalAccessToken } from '@postern/contract';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfirmProvider } from '../../components/ui/confirm';
import { Toaster } from '../../components/ui/toast';
import { buildNode } from '../../test/fixtures';
import { TokensCard } from './tokens-card';

const node = buildNode({ id: 3, address: '10.8.0.3' });

const token = (id: number, name: string, extra: Partial<PersonalAccessToken> = {}): PersonalAccessToken => ({
  id,
  name,
  expireAt: null,
  revoked: false,
  lastUsedAt: null,
  created_at: '2026-01-01T00:00:00.000Z',
  ...extra,
});

const tokens = [
  token(1, 'ci-runner'),
  token(2, 'old-laptop', { expireAt: '2020-01-01T00:00:00.000Z' }),
  token(3, 'leaked', { revoked: true }),
];

type Call = { url: string; method: string };

function serve(routes: Record<string, unknown>) {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn((input: string, init: RequestInit = {}) => {
      const method = init.method ?? 'GET';
      calls.push({ url: input, method });
      const body = routes[`${method} ${input.split('?')[0]}`];
      return Promise.resolve(
        new Response(body === undefined ? null : JSON.stringify(body), { status: body === undefined ? 204 : 200 }),
      );
    }),
  );
  return calls;
}

function renderCard(shown: Node = node) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <ConfirmProvider>
        <TokensCard node={shown} />
        <Toaster />
      </ConfirmProvider>
    </QueryClientProvider>,
  );
}

const rowOf = async (name: string) => (await screen.findByText(name)).closest('tr') as HTMLElement;

describe('Node Access Tokens card', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('derives each status: Revoked, else Expired when past, else Active', async () => {
    serve({ 'GET /api/nodes/3/pats': { data: tokens, page: 1, limit: 5, total: 3 } });
    renderCard();
    expect(within(await rowOf('ci-runner')).getByText('Active')).toBeTruthy();
    expect(within(await rowOf('old-laptop')).getByText('Expired')).toBeTruthy();
    expect(within(await rowOf('leaked')).getByText('Revoked')).toBeTruthy();
  });

  it('revokes after the confirmation and marks the row Revoked', async () => {
    const calls = serve({
      'GET /api/nodes/3/pats': { data: tokens, page: 1, limit: 5, total: 3 },
      'PATCH /api/nodes/3/pats/1/revoke': { ...tokens[0], revoked: true },
    });
    renderCard();
    fireEvent.click(within(await rowOf('ci-runner')).getByRole('button', { name: 'Actions for token ci-runner' }));
    fireEvent.click(screen.getByRole('menuitem', { name: 'Revoke' }));
    // The confirm dialog's code loads when first asked (components/ui/confirm.tsx).
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('Revoke Personal Access Token')).toBeTruthy();
    expect(within(dialog).getByText(/not necessarily ended/)).toBeTruthy();
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Yes, revoke token!' })));
    await waitFor(() =>
      expect(within(screen.getByText('ci-runner').closest('tr') as HTMLElement).getByText('Revoked')).toBeTruthy(),
    );
    expect(screen.getByText('Personal Access Token revoked successfully!')).toBeTruthy();
    expect(calls).toContainEqual({ url: '/api/nodes/3/pats/1/revoke', method: 'PATCH' });
  });

  it('deletes nothing when the delete confirmation is cancelled', async () => {
    const calls = serve({ 'GET /api/nodes/3/pats': { data: tokens, page: 1, limit: 5, total: 3 } });
    renderCard();
    fireEvent.click(within(await rowOf('leaked')).getByRole('button', { name: 'Actions for token leaked' }));
    fireEvent.click(screen.getByRole('menuitem', { name: 'Delete' }));
    const dialog = screen.getByRole('dialog');
    expect(within(dialog).getByText('Delete Personal Access Token')).toBeTruthy();
    expect(within(dialog).getByRole('button', { name: 'Yes, delete it!' })).toBeTruthy();
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' })));
    expect(calls.filter((call) => call.method === 'DELETE')).toEqual([]);
  });

  it("shows 'No Access Tokens yet' and no add button for the local node", async () => {
    serve({ 'GET /api/nodes/3/pats': { data: [], page: 1, limit: 5, total: 0 } });
    renderCard({ ...node, isLocal: true });
    expect(await screen.findByText('No Access Tokens yet')).toBeTruthy();
    expect(screen.getByRole('button', { name: '+ Add Token' })).toHaveProperty('disabled', true);
  });
});
