import { defaults, operations, type ServiceOverviewQuery } from '@postern/contract';
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { call } from '../lib/api';
import type { ServicesSearch } from '../lib/list-search';
import { observeKeys } from './observe-keys';
import { serviceKeys } from './services';

// The services overview (GET /api/services): keyed under `services`, so every service change refreshes
// it, as it does the node and domain tables.

export type OverviewRequest = Partial<Omit<ServiceOverviewQuery, 'page' | 'limit'>> & { page: number; limit: number };

/** The URL's view as the API takes it; absent fields are left out. */
export function toOverviewRequest(search: ServicesSearch): OverviewRequest {
  return {
    page: search.page ?? 1,
    limit: search.limit ?? defaults.pageSize,
    ...(search.q ? { q: search.q } : {}),
    ...(search.kind ? { kind: search.kind } : {}),
    ...(search.status ? { status: search.status } : {}),
    ...(search.node ? { nodeId: search.node } : {}),
    ...(search.domain ? { domain: search.domain } : {}),
    ...(search.sort ? { sort: search.sort } : {}),
    ...(search.order ? { order: search.order } : {}),
  };
}

export const serviceOverviewQueryOptions = (request: OverviewRequest) =>
  queryOptions({
    queryKey: [...serviceKeys.all, 'overview', request] as const,
    queryFn: ({ signal }) => call(operations.listServiceOverview, { query: request, signal }),
    placeholderData: keepPreviousData,
    // Node status and certificates are not pushed here: read again now and then.
    refetchInterval: 30_000,
  });

/** The figures (health, traffic, sparkline) of one page's rows only, not of every service. */
export const pageFiguresQueryOptions = (rows: readonly { type: 'http' | 'tcp'; service: { id: number } }[]) => {
  const services = rows.map((row) => `${row.type}:${String(row.service.id)}`).join(',');
  return queryOptions({
    queryKey: [...observeKeys.all, 'figures', 'page', services] as const,
    queryFn: ({ signal }) => call(operations.serviceFigures, { query: { services }, signal }),
    enabled: services !== '',
    refetchInterval: 60_000,
    placeholderData: keepPreviousData,
  });
};
