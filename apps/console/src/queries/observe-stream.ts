import {
  firstPageRoutes,
  timing,
  type DRIFT_EVENT,
  type DriftStatus,
  type HEALTH_EVENT,
  type ServiceFigures,
  type ServiceHealth,
  type SystemStatus,
} from '@postern/contract';
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { openEventStream } from '../lib/sse';
import { useIsKnownToSeeEveryNode } from './account';
import { observeKeys } from './observe-keys';

// Health changes and drift checks pushed by the gateway (GET /api/observe/stream, events `health` and `drift`) are
// written into the cached figures and system status, so a badge turns the moment the gateway sees the change; the
// queries still poll, slowly, for what is not pushed (traffic, latency). The home page's status panel uses this too,
// so it checks the events by hand instead of with the contract's zod schemas (initial JS budget of `/`).

const HEALTH_STATES = new Set(['up', 'down', 'unknown']);
// The names are the contract's (checked by the types); importing the values would load the contract's observe schemas.
const HEALTH: typeof HEALTH_EVENT = 'health';
const DRIFT: typeof DRIFT_EVENT = 'drift';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

export function isHealthEvent(value: unknown): value is ServiceHealth {
  return (
    isObject(value) &&
    (value.type === 'http' || value.type === 'tcp') &&
    typeof value.id === 'number' &&
    typeof value.nodeId === 'number' &&
    HEALTH_STATES.has(value.state as string)
  );
}

export function isDriftEvent(value: unknown): value is DriftStatus {
  return (
    isObject(value) &&
    typeof value.checkedAt === 'string' &&
    Array.isArray(value.differences) &&
    value.differences.every((difference) => typeof difference === 'string') &&
    typeof value.repaired === 'boolean'
  );
}

/** A service's new health on its row in every cached figures list; the home page's counts are read again. */
export function writeHealthToCache(queryClient: QueryClient, health: ServiceHealth): void {
  queryClient.setQueriesData<{ data: ServiceFigures[] }>(
    { queryKey: [...observeKeys.all, 'figures'] },
    (list) =>
      list && {
        data: list.data.map((row) => (row.type === health.type && row.id === health.id ? { ...row, health } : row)),
      },
  );
  // An event says the new state, not the old one the counts included: the counts come from the server.
  void queryClient.invalidateQueries({ queryKey: observeKeys.status });
  void queryClient.invalidateQueries({ queryKey: observeKeys.attention });
}

export function writeDriftToCache(queryClient: QueryClient, drift: DriftStatus): void {
  queryClient.setQueryData<SystemStatus>(observeKeys.status, (status) => status && { ...status, drift });
  queryClient.setQueryData<{ drift: DriftStatus | null }>(observeKeys.attention, (attention) =>
    attention ? { ...attention, drift } : attention,
  );
}

/** Opens the stream for `queryClient`; returns the function that closes it. */
export function openObserveStream(queryClient: QueryClient): () => void {
  let hasOpened = false;
  return openEventStream({
    path: firstPageRoutes.observeStream.path,
    events: {
      [HEALTH]: (data) => {
        if (isHealthEvent(data)) writeHealthToCache(queryClient, data);
        else console.error('unexpected health event', data);
      },
      [DRIFT]: (data) => {
        if (isDriftEvent(data)) writeDriftToCache(queryClient, data);
        else console.error('unexpected drift event', data);
      },
    },
    onStateChange: (state) => {
      if (state !== 'open') return;
      // Reopened after a failure: what changed while it was closed was never pushed, so it is read again.
      if (hasOpened) void queryClient.invalidateQueries({ queryKey: observeKeys.all });
      hasOpened = true;
    },
    reconnectMs: timing.logReconnectMs,
  });
}

/** One stream per query client however many components show health; closed when the last one unmounts. */
const shared = new Map<QueryClient, { users: number; close: () => void }>();

/**
 * While mounted, health changes and drift checks are written into the cache as they happen. The stream carries every
 * node's services: an account limited to some nodes does not open it (docs/api.md "Node scope").
 */
export function useObserveStream(): void {
  const queryClient = useQueryClient();
  const isAllowed = useIsKnownToSeeEveryNode();
  useEffect(() => {
    if (!isAllowed) return;
    const entry = shared.get(queryClient) ?? { users: 0, close: openObserveStream(queryClient) };
    entry.users += 1;
    shared.set(queryClient, entry);
    return () => {
      entry.users -= 1;
      if (entry.users > 0) return;
      shared.delete(queryClient);
      entry.close();
    };
  }, [queryClient, isAllowed]);
}
