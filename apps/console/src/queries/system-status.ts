import { routes, type SystemStatus } from '@postern/contract';
import { queryOptions } from '@tanstack/react-query';
import { call } from '../lib/api';
import { observeKeys } from './observe-keys';

export const systemStatusQueryOptions = () =>
  queryOptions({
    queryKey: observeKeys.status,
    // The bare route, not the operation: the home page's first visit must not load zod and the operation table for one
    // panel (initial JS budget, e2e/browser/initial-js.test.ts). The answer is the server's own SystemStatus.
    queryFn: async ({ signal }) => (await call(routes.systemStatus, { signal })) as SystemStatus,
    // Health changes and drift checks are pushed (observe-stream.ts); this backs the stream up and moves the totals.
    refetchInterval: 60_000,
  });
