import { operations } from '@postern/contract';
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { call } from '../lib/api';
import { domainKeys } from './domains';
import { nodeKeys } from './nodes';
import { serviceKeys } from './services';

// Ctrl+K "Find": services by name or public address, nodes by name or address, domains by name.
// Each is keyed under its resource, so a change to any of them refreshes the matches too.

export const FIND_PAGE_SIZE = 8;
/** Nodes and domains: a few each, after the services (the most numerous, and what is looked for most). */
export const FIND_OTHERS_SIZE = 5;

export const findServicesQueryOptions = (q: string, page: number) =>
  queryOptions({
    queryKey: [...serviceKeys.all, 'find', { q, page }] as const,
    queryFn: ({ signal }) => call(operations.findServices, { query: { q, page, limit: FIND_PAGE_SIZE }, signal }),
    placeholderData: keepPreviousData,
  });

export const findNodesQueryOptions = (q: string) =>
  queryOptions({
    queryKey: [...nodeKeys.all, 'find', q] as const,
    queryFn: ({ signal }) =>
      call(operations.listNodes, { query: { q, page: 1, limit: FIND_OTHERS_SIZE, sort: 'name' }, signal }),
    placeholderData: keepPreviousData,
  });

export const findDomainsQueryOptions = (q: string) =>
  queryOptions({
    queryKey: [...domainKeys.all, 'find', q] as const,
    queryFn: ({ signal }) =>
      call(operations.listDomains, { query: { search: q, page: 1, limit: FIND_OTHERS_SIZE }, signal }),
    placeholderData: keepPreviousData,
  });
