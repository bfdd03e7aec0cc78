import { operations, type ServiceType } from '@postern/contract';
import { queryOptions } from '@tanstack/react-query';
import { call } from '../lib/api';
import { observeKeys } from './observe-keys';

// What the gateway observes (docs/api.md "Observability"): per-service figures for rows, one service's traffic for
// its info view, and the system status of the home page. Figures move every minute, so rows are read again every
// minute; a change of health is pushed as it happens (observe-stream.ts), which this polling only backs up.

export { observeKeys };

export const serviceFiguresQueryOptions = (nodeId: number | null) =>
  queryOptions({
    queryKey: observeKeys.figures(nodeId),
    queryFn: ({ signal }) => call(operations.serviceFigures, { query: nodeId === null ? {} : { nodeId }, signal }),
    refetchInterval: 60_000,
  });

export const serviceTrafficQueryOptions = (nodeId: number, type: ServiceType, id: number) =>
  queryOptions({
    queryKey: observeKeys.traffic(type, id),
    queryFn: ({ signal }) =>
      call(operations.serviceTraffic, { params: { nodeId, type, id }, query: { minutes: 60 }, signal }),
    refetchInterval: 15_000,
  });
