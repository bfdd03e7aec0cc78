import { eq } from 'drizzle-orm';
import type { LogStreamQuery } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { LogSource } from '../../dataplane/types.js';
import { domains, httpServices, tcpServices } from '../../db/schema.js';
import { notFound } from '../../errors.js';

export type LogFilter = Parameters<LogSource['subscribe']>[0];

/** The filter for a stream request, or a 404 when it names no domain or service. */
export async function resolveLogFilter(
  deps: Pick<AppDeps, 'db'>,
  query: Omit<LogStreamQuery, 'token'>,
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
  const found = await deps.db.select({ id: table.id }).from(table).where(eq(table.id, id)).get();
  if (!found) throw notFound('Service');
  return { type, id };
}
