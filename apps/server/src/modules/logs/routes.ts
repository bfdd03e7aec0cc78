import type { FastifyInstance } from 'fastify';
import { eq } from 'drizzle-orm';
import { LogStreamQuerySchema, routes, type LogStreamQuery } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { domains, httpServices, tcpServices } from '../../db/schema.js';
import type { LogSource } from '../../dataplane/types.js';
import { notFound } from '../../errors.js';
import type { ZodTypeProvider } from '../../http/zod-provider.js';
import { openSse } from '../../sse.js';

type LogFilter = Parameters<LogSource['subscribe']>[0];

/** The filter for a stream request, or a 404 when it names no domain or service. */
function resolveFilter(deps: AppDeps, query: LogStreamQuery): LogFilter {
  if (query.domain) {
    const found = deps.db.select({ id: domains.id }).from(domains).where(eq(domains.domain, query.domain)).get();
    if (!found) throw notFound('Domain');
    return { domain: query.domain };
  }
  // The contract guarantees type and id whenever domain is absent.
  const type = query.type ?? 'http';
  const id = query.id ?? 0;
  const table = type === 'http' ? httpServices : tcpServices;
  const found = deps.db.select({ id: table.id }).from(table).where(eq(table.id, id)).get();
  if (!found) throw notFound('Service');
  return { type, id };
}

/**
 * `GET /api/logs/stream?domain=…` or `?type=http|tcp&id=…`: server-sent events, each a JSON array of lines.
 * The data plane's log source has one tailer per file; every stream is just one more subscriber to it.
 */
export async function logRoutes(fastify: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(routes.logStream.path, { schema: { querystring: LogStreamQuerySchema } }, async (request, reply) => {
    const filter = resolveFilter(deps, request.query);
    const connection = openSse(request, reply);
    const unsubscribe = deps.dataPlane.logs.subscribe(filter, (lines) => connection.send(lines));
    await connection.closed;
    unsubscribe();
  });
}
