import { lt, inArray } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { auditEvents } from '../../db/schema.js';

// Retention (POSTERN_AUDIT_RETENTION_DAYS): entries older than that are deleted in small batches from a timer, each
// batch its own short transaction with a turn of the event loop between them, so a large backlog never holds the
// database (or a request) for long.

export const RETENTION_BATCH = 500;
/** The sweep runs soon after boot, then hourly: retention is counted in days. */
export const RETENTION_INTERVAL_MS = 3_600_000;

/** Deletes at most one batch of expired entries; returns how many went. */
export async function pruneAuditBatch(
  deps: Pick<AppDeps, 'db' | 'now' | 'config'>,
  batch = RETENTION_BATCH,
): Promise<number> {
  const cutoff = new Date(deps.now().getTime() - deps.config.auditRetentionDays * 86_400_000).toISOString();
  const ids = (
    await deps.db.select({ id: auditEvents.id }).from(auditEvents).where(lt(auditEvents.at, cutoff)).limit(batch).all()
  ).map((row) => row.id);
  if (ids.length === 0) return 0;
  const deleted = await deps.db.write((tx) =>
    tx.delete(auditEvents).where(inArray(auditEvents.id, ids)).returning({ id: auditEvents.id }),
  );
  return deleted.length;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Prunes batch after batch, yielding between them, until nothing is older than the retention. */
export async function pruneAuditLog(
  deps: Pick<AppDeps, 'db' | 'now' | 'config'>,
  batch = RETENTION_BATCH,
): Promise<number> {
  let total = 0;
  for (let deleted = await pruneAuditBatch(deps, batch); deleted > 0; deleted = await pruneAuditBatch(deps, batch)) {
    total += deleted;
    await nextTurn();
  }
  return total;
}

export function startAuditRetention(deps: AppDeps, log: FastifyBaseLogger): { stop(): void } {
  const run = async (): Promise<void> => {
    // Several gateways: one prunes (the holder of the lease); a takeover prunes at its next hourly run.
    if (!deps.leases.holds('audit-retention')) return;
    pruneAuditLog(deps).then(
      (deleted) => {
        if (deleted > 0)
          log.info({ deleted, retentionDays: deps.config.auditRetentionDays }, 'audit log: old entries pruned');
      },
      (error: unknown) => log.warn({ err: error }, 'audit log: pruning failed; retried at the next sweep'),
    );
  };
  const first = setTimeout(run, 5000);
  first.unref();
  const timer = setInterval(run, RETENTION_INTERVAL_MS);
  timer.unref();
  return {
    stop() {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
