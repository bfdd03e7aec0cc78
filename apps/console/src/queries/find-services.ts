import { operations } from '@postern/contract';
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { call } from '../lib/api';
import { serviceKeys } from './services';

// "Find service" (issue 17): every node's services by name or public address. Keyed under `services`, so a change
// to any service (which invalidates that prefix) refreshes the matches too.

export const FIND_PAGE_SIZE = 8;

export const findServicesQueryOptions = (q: string, page: number) =>
  queryOptions({
    queryKey: [...serviceKeys.all, 'find', { q, page }] as const,
    queryFn: ({ signal }) => call(operations.findServices, { query: { q, page, limit: FIND_PAGE_SIZE }, signal }),
    placeholderData: keepPreviousData,
  });
