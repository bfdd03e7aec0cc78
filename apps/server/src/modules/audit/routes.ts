import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { AuditEventSchema, operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { registerOperation } from '../../http/operation.js';
import { openSse } from '../../sse.js';
import { exportAuditCsv } from './export.js';
import { listAuditEntries, matchesAuditFilter } from './query.js';

/**
 * `GET /api/audit` (a page, newest first) and `GET /api/audit/stream` (each new matching entry as it is recorded).
 * There is deliberately no call that edits or deletes an entry. The timers that belong to the log (retention) and
 * to temporary exposure (the expiry sweep, which records into it) run while the app is up.
 */
export async function auditRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;

  registerOperation(app, operations.listAudit, async (request) => {
    await deps.audit.flush();
    return await listAuditEntries(deps, request.query);
  });

  // Streamed: the file is written as batches are read, so neither side holds the whole log in memory.
  registerOperation(app, operations.exportAudit, async (request, reply) => {
    const { matching, max, lines } = await exportAuditCsv(deps, request.query);
    const day = deps.now().toISOString().slice(0, 10);
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="postern-audit-${day}.csv"`)
      .header('cache-control', 'no-store')
      .header('x-postern-export-matching', String(matching))
      .header('x-postern-export-rows', String(Math.min(matching, max)))
      .send(Readable.from(lines));
  });

  registerOperation(app, operations.auditStream, async (request, reply) => {
    const filter = request.query;
    const connection = openSse(request, reply);
    const unsubscribe = deps.audit.subscribe((entry) => {
      if (matchesAuditFilter(filter, entry)) connection.sendJson(JSON.stringify(AuditEventSchema.parse(entry)));
    });
    await connection.closed;
    unsubscribe();
  });
}
