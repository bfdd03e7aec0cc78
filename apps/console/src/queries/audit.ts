import { operations, type AuditFilter } from '@postern/contract';
import { queryOptions } from '@tanstack/react-query';
import { call } from '../lib/api';

// The audit log (beyond the spec): read-only, so there are no mutations; the page's stream invalidates the prefix.

export type AuditListParams = AuditFilter & { page: number; limit: number };

export const auditKeys = {
  all: ['audit'] as const,
  list: (params: AuditListParams) => [...auditKeys.all, 'list', params] as const,
};

export const auditListQueryOptions = (params: AuditListParams) =>
  queryOptions({
    queryKey: auditKeys.list(params),
    queryFn: ({ signal }) => call(operations.listAudit, { query: params, signal }),
  });
