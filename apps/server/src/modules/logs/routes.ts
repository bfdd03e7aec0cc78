import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { requireSession } from '../../http/authenticate.js';
import { registerOperation } from '../../http/operation.js';
import { openSse } from '../../sse.js';
import { resolveLogFilter } from './service.js';

/**
 * `GET /api/logs/stream?domain=…` or `?type=http|tcp&id=…`: server-sent events, each a JSON array of lines.
 * The data plane's log source has one tailer per file; every stream is just one more subscriber to it.
 */
export async function logRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;

  registerOperation(app, operations.logStream, async (request, reply) => {
    const filter = await resolveLogFilter(deps, request.query, requireSession(request).nodeScope);
    const connection = openSse(request, reply);
    const unsubscribe = deps.dataPlane.logs.subscribe(filter, (lines) => connection.send(lines));
    await connection.closed;
    unsubscribe();
  });
}
