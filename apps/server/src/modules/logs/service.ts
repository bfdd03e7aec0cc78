import { eq } from 'drizzle-orm';
import type { LogStreamQuery } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { LogSource } from '../../dataplane/types.js';
import { domains, httpServices, tcpServices } from '../../db/schema.js';
import { notFound } from '../../errors.js';

export type LogFilter = Parameters<LogSource['subscribe']>[0];

/**
 * The filter for a stream request, or a 404 when it names no domain or service. `nodeScope`: a service of another
 * node is not found (null: every node's); a domain's log is refused to a scope by the gate (accounts/node-scope.ts).
 */
export async function resolveLogFilter(
  deps: Pick<AppDeps, 'db'>,
  query: Omit<LogStreamQuery, 'token'>,
  nodeScope: readonly number[] | null = null,
): Promise<LogFilter> {
  if (query.domain) {
    const found = await deps.db.select({ id: domains.id }).from(domains).where(eq(domains.domain, query.domain)).get();
    if (!found) throw notFound('Domain');
    return { domain: query.domain };
  }
  // The contract guarantees type and id whenever domain is absent.
  const type = query.type ?? 'http';
  const id = query.id ?? 0;
  const table = type === 'http' ? httpServices : tcpServices;
  const found = await deps.db.select({ nodeId: table.nodeId }).from(table).where(eq(table.id, id)).get();
  if (!found || (nodeScope !== null && !nodeScope.includes(found.nodeId))) throw notFound('Service');
  return { type, id };
}
