import { firstPageRoutes, type Attention } from '@postern/contract';
import { queryOptions } from '@tanstack/react-query';
import { call } from '../lib/api';
import { observeKeys } from './observe-keys';

// What needs attention (GET /api/system/attention): the home page's lists and totals, and the facts service rows use
// to say that their node is offline or their certificate failed. Health changes and drift checks are pushed
// (observe-stream.ts invalidates this); the poll moves the rest (a node going offline, a certificate).

const isList = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && Array.isArray((value as { items?: unknown }).items);

/** Checked by hand (no zod on the first page): an answer of another shape is an error, never a crash of a row. */
export function isAttention(value: unknown): value is Attention {
  if (typeof value !== 'object' || value === null) return false;
  const answer = value as Record<string, unknown>;
  return (
    typeof answer.totals === 'object' &&
    answer.totals !== null &&
    Array.isArray(answer.disconnectedNodeIds) &&
    ['offlineNodes', 'backendsDown', 'certificates', 'setAside'].every((key) => isList(answer[key]))
  );
}

export const attentionQueryOptions = () =>
  queryOptions({
    queryKey: observeKeys.attention,
    // The bare route, not the operation: the home page shows this first, and must not load zod and the operation
    // table for it (initial JS budget). The server serialises it through its schema; its shape is checked here.
    queryFn: async ({ signal }): Promise<Attention> => {
      const answer = await call(firstPageRoutes.attention, { signal });
      if (!isAttention(answer)) throw new Error('unexpected answer from GET /api/system/attention');
      return answer;
    },
    refetchInterval: 30_000,
  });
