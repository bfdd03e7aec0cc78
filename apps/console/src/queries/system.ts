import { operations } from '@postern/contract';
import { queryOptions } from '@tanstack/react-query';
import { call } from '../lib/api';

// The gateway's public facts (docs/api.md "System"): its public URL and the pin of its certificate. They change
// only when the gateway restarts with other settings or renews its certificate.

export const systemKeys = { info: ['system', 'info'] as const };

export const systemInfoQueryOptions = () =>
  queryOptions({
    queryKey: systemKeys.info,
    queryFn: ({ signal }) => call(operations.systemInfo, { signal }),
    staleTime: 5 * 60_000,
  });
