import type { ListResponse, Node } from '@postern/contract';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, renderHook } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearToken, storeToken } from '../lib/session';
import { FakeEventSource } from '../test/fake-event-source';
import { buildNode } from '../test/fixtures';
import { nodeKeys, useNodeListStream, useNodeStream } from './nodes';

const node = (id: number, extra: Partial<Node> = {}): Node =>
  buildNode({ id, name: `node-${id}`, address: `10.44.0.${id}`, status: 'offline', ...extra });

function setup() {
  const client = new QueryClient();
  const wrapper = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={client}>{children}</QueryClientProvider>
  );
  return { client, wrapper };
}

describe('node streams write into the query cache', () => {
  beforeEach(() => {
    FakeEventSource.opened = [];
    vi.stubGlobal('EventSource', FakeEventSource);
    // A stream error is followed by one session check through the API client; the session still holds here.
    vi.stubGlobal(
      'fetch',
      vi.fn(() => Promise.resolve(new Response('{}', { status: 200 }))),
    );
    storeToken('session-token', 60);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    clearToken();
  });

  it("replaces the list page with each pushed 'page' event, carrying the token in the URL", () => {
    const { client, wrapper } = setup();
    const params = { page: 1, limit: 10, type: undefined };
    const list: ListResponse<Node> = { data: [node(1), node(2)], page: 1, limit: 10, total: 2 };
    client.setQueryData(nodeKeys.list(params), list);
    renderHook(() => useNodeListStream(params), { wrapper });
    const source = FakeEventSource.opened[0];
    expect(source?.url).toBe('/api/nodes/stream?page=1&limit=10&format=page&token=session-token');
    act(() => source?.push({ ...list, data: [node(1, { status: 'online', transferRx: 2048 }), node(2)] }, 'page'));
    const rows = client.getQueryData<ListResponse<Node>>(nodeKeys.list(params))?.data;
    expect(rows?.map((row) => [row.id, row.status, row.transferRx])).toEqual([
      [1, 'online', 2048],
      [2, 'offline', 0],
    ]);
    expect(client.getQueryData<Node>(nodeKeys.detail(1))?.status).toBe('online');
  });

  it('takes a page with other rows and a new total as it is, without fetching it again (a node was added or removed)', () => {
    const { client, wrapper } = setup();
    const params = { page: 1, limit: 10, type: 'gateways' as const };
    client.setQueryData(nodeKeys.list(params), { data: [node(1)], page: 1, limit: 10, total: 1 });
    const invalidate = vi.spyOn(client, 'invalidateQueries');
    const refetch = vi.spyOn(client, 'refetchQueries');
    renderHook(() => useNodeListStream(params), { wrapper });
    expect(FakeEventSource.opened[0]?.url).toContain('type=gateways');
    act(() => FakeEventSource.opened[0]?.push({ data: [node(1), node(3)], page: 1, limit: 10, total: 2 }, 'page'));
    expect(client.getQueryData<ListResponse<Node>>(nodeKeys.list(params))).toMatchObject({
      total: 2,
      data: [{ id: 1 }, { id: 3 }],
    });
    expect(invalidate).not.toHaveBeenCalled();
    expect(refetch).not.toHaveBeenCalled();
  });

  it("ignores the spec's unnamed array messages (it asked for pages)", () => {
    const { client, wrapper } = setup();
    const params = { page: 1, limit: 10, type: undefined };
    const list: ListResponse<Node> = { data: [node(1)], page: 1, limit: 10, total: 1 };
    client.setQueryData(nodeKeys.list(params), list);
    renderHook(() => useNodeListStream(params), { wrapper });
    act(() => FakeEventSource.opened[0]?.push([node(1, { status: 'online' })]));
    expect(client.getQueryData(nodeKeys.list(params))).toBe(list);
  });

  it('replaces the detail node on each message and closes the stream when the page is left', () => {
    const { client, wrapper } = setup();
    const { unmount } = renderHook(() => useNodeStream(7, true), { wrapper });
    const source = FakeEventSource.opened[0];
    expect(source?.url).toBe('/api/nodes/stream?id=7&token=session-token');
    act(() => source?.push(node(7, { status: 'idle' })));
    expect(client.getQueryData<Node>(nodeKeys.detail(7))?.status).toBe('idle');
    unmount();
    expect(source?.isClosed).toBe(true);
  });

  it('logs a detail stream error and reconnects 1 s later while the session holds (a restarted gateway)', async () => {
    vi.useFakeTimers();
    const { wrapper } = setup();
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    renderHook(() => useNodeStream(7, true), { wrapper });
    act(() => FakeEventSource.opened[0]?.onerror?.(new Event('error')));
    await act(async () => {
      await vi.advanceTimersByTimeAsync(5000);
    });
    expect(FakeEventSource.opened[0]?.isClosed).toBe(true);
    expect(log).toHaveBeenCalled();
    expect(FakeEventSource.opened).toHaveLength(2);
    expect(new URL(FakeEventSource.opened[1]?.url ?? '', 'http://x').searchParams.get('id')).toBe('7');
    log.mockRestore();
    vi.useRealTimers();
  });
});
