import type { ServiceFigures, ServiceHealth, SystemStatus } from '@postern/contract';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, renderHook } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearToken, storeToken } from '../lib/session';
import { FakeEventSource } from '../test/fake-event-source';
import { currentAccountKey } from './account';
import { observeKeys } from './observe-keys';
import { useObserveStream } from './observe-stream';

const health = (id: number, state: ServiceHealth['state']): ServiceHealth => ({
  type: 'http',
  id,
  nodeId: 1,
  state,
  since: '2026-01-01T00:00:00.000Z',
  lastCheckedAt: '2026-01-01T00:00:00.000Z',
  lastError: state === 'down' ? 'connection refused' : null,
  latencyMs: null,
  intervalSeconds: 30,
  timeoutSeconds: 5,
});
const figures = (id: number, state: ServiceHealth['state']): ServiceFigures => ({
  type: 'http',
  id,
  nodeId: 1,
  requests: 3,
  errors: 0,
  bytes: 10,
  spark: [1, 2],
  health: health(id, state),
});
const status: SystemStatus = {
  drift: null,
  health: { up: 2, down: 0, unknown: 0 },
  traffic: { minutes: 1440, requests: 0, errors: 0, connections: 0, bytesIn: 0, bytesOut: 0, points: [] },
};

/** `nodes`: the signed-in account's node scope (the stream spans every node: a limited account does not open it). */
function setup(nodes: number[] | null = null) {
  const client = new QueryClient();
  client.setQueryData(currentAccountKey, { id: 1, username: 'admin', role: 'owner', via: 'password', nodes });
  const wrapper = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={client}>{children}</QueryClientProvider>
  );
  return { client, wrapper };
}

const healthOf = (client: QueryClient, nodeId: number | null) =>
  client
    .getQueryData<{ data: ServiceFigures[] }>(observeKeys.figures(nodeId))
    ?.data.map((row) => [row.id, row.health?.state]);

describe('the observe stream writes into the query cache', () => {
  beforeEach(() => {
    FakeEventSource.opened = [];
    vi.stubGlobal('EventSource', FakeEventSource);
    vi.stubGlobal(
      'fetch',
      vi.fn(() => Promise.resolve(new Response('{}', { status: 200 }))),
    );
    storeToken('session-token', 60);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    clearToken();
  });

  it("turns a service's badge in every cached figures list on a 'health' event and reads the counts again", () => {
    const { client, wrapper } = setup();
    client.setQueryData(observeKeys.figures(null), { data: [figures(1, 'up'), figures(2, 'up')] });
    client.setQueryData(observeKeys.figures(1), { data: [figures(2, 'up')] });
    client.setQueryData(observeKeys.status, status);
    const invalidate = vi.spyOn(client, 'invalidateQueries');
    renderHook(() => useObserveStream(), { wrapper });
    const source = FakeEventSource.opened[0];
    expect(source?.url).toBe('/api/observe/stream?token=session-token');

    act(() => source?.push(health(2, 'down'), 'health'));
    expect(healthOf(client, null)).toEqual([
      [1, 'up'],
      [2, 'down'],
    ]);
    expect(healthOf(client, 1)).toEqual([[2, 'down']]);
    expect(invalidate).toHaveBeenCalledWith({ queryKey: observeKeys.status });
  });

  it("shows a 'drift' event's result in the system status", () => {
    const { client, wrapper } = setup();
    client.setQueryData(observeKeys.status, status);
    renderHook(() => useObserveStream(), { wrapper });
    const drift = { checkedAt: '2026-01-01T00:01:00.000Z', differences: ['peer abc missing'], repaired: true };
    act(() => FakeEventSource.opened[0]?.push(drift, 'drift'));
    expect(client.getQueryData<SystemStatus>(observeKeys.status)?.drift).toEqual(drift);
  });

  it('ignores an event that is not what it says, and logs it', () => {
    const { client, wrapper } = setup();
    client.setQueryData(observeKeys.figures(null), { data: [figures(1, 'up')] });
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    renderHook(() => useObserveStream(), { wrapper });
    act(() => FakeEventSource.opened[0]?.push({ ...health(1, 'down'), state: 'sideways' }, 'health'));
    expect(healthOf(client, null)).toEqual([[1, 'up']]);
    expect(consoleError).toHaveBeenCalled();
  });

  it('opens one stream for every component that shows health, and closes it when the last one goes', () => {
    const { wrapper } = setup();
    const first = renderHook(() => useObserveStream(), { wrapper });
    const second = renderHook(() => useObserveStream(), { wrapper });
    expect(FakeEventSource.opened).toHaveLength(1);
    first.unmount();
    expect(FakeEventSource.opened[0]?.isClosed).toBe(false);
    second.unmount();
    expect(FakeEventSource.opened[0]?.isClosed).toBe(true);
  });

  it('is not opened for an account limited to some nodes (it carries every node’s services)', () => {
    const { wrapper } = setup([4]);
    renderHook(() => useObserveStream(), { wrapper });
    expect(FakeEventSource.opened).toHaveLength(0);
  });

  it('reads the figures again when the stream reopens after a failure (changes in between were not pushed)', async () => {
    const { client, wrapper } = setup();
    const invalidate = vi.spyOn(client, 'invalidateQueries');
    vi.useFakeTimers();
    try {
      renderHook(() => useObserveStream(), { wrapper });
      act(() => FakeEventSource.opened[0]?.open());
      expect(invalidate).not.toHaveBeenCalled();
      FakeEventSource.opened[0]?.fail();
      await vi.advanceTimersByTimeAsync(1000);
      expect(FakeEventSource.opened).toHaveLength(2);
      act(() => FakeEventSource.opened[1]?.open());
      expect(invalidate).toHaveBeenCalledWith({ queryKey: observeKeys.all });
    } finally {
      vi.useRealTimers();
    }
  });
});
