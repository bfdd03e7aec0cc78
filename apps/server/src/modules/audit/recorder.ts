import { EventEmitter } from 'node:events';
import { isWellFormedPat, type AuditEntry } from '@postern/contract';
import type { Store } from '../../db/client.js';
import { auditEvents } from '../../db/schema.js';
import { toAuditEntry } from './present.js';

// The one way anything enters the audit log: `audit.record({ actor, address, action, target, before, after })`.
// The row is inserted at once (synchronous, one small insert), secrets are scrubbed from the snapshots first, and
// every live subscriber (the console's audit page) gets the entry. Nothing ever updates or deletes a row but the
// retention sweep (retention.ts).

export type AuditActor =
  | { kind: 'admin'; name: string | null }
  | { kind: 'node'; tokenId: number; name: string; nodeId: number }
  | { kind: 'system' }
  /** A failed sign-in: the username it tried, if any. */
  | { kind: 'anonymous'; name?: string | null };

export interface AuditTarget {
  /** 'node', 'token', 'domain', 'http', 'tcp', 'user', ... */
  type: string;
  id?: number | null;
  name?: string | null;
}

export interface AuditRecord {
  actor: AuditActor;
  /** The client's address (request.ip); none for the gateway's own actions. */
  address?: string | null;
  /** `<resource>.<verb>`: 'service.update', 'auth.sign-in-failed', 'service.expired', ... */
  action: string;
  target?: AuditTarget | null;
  /** The node the entry concerns; defaults to the acting token's node. */
  nodeId?: number | null;
  domain?: string | null;
  before?: object | null;
  after?: object | null;
  detail?: string | null;
}

/** A health check's verdict on a service changed (the health-check module calls `onHealthChange`). */
export interface HealthChange {
  type: 'http' | 'tcp';
  id: number;
  nodeId: number;
  name?: string | null;
  domain?: string | null;
  /** e.g. 'healthy' / 'unhealthy'; null: not checked before. */
  from: string | null;
  to: string;
  /** Why, e.g. the failed probe's error. */
  detail?: string | null;
}

export interface AuditLog {
  record(entry: AuditRecord): Promise<void>;
  /**
   * Records a service state change from the health checks (actor: the gateway itself). Changes arrive in bursts (a
   * node with hundreds of services goes away, a boot sees every backend): they are written together, one insert per
   * burst, within HEALTH_BATCH_MS; `flush()` writes what is pending at once.
   */
  onHealthChange(change: HealthChange): void;
  /** Writes pending health changes now (readers of the log call it first, so they never miss one). */
  flush(): Promise<void>;
  /** Each recorded entry, as it is recorded; returns the unsubscribe function. */
  subscribe(listener: (entry: AuditEntry) => void): () => void;
}

/** Keys whose values are secrets wherever they appear: never stored, whatever a snapshot carries. */
const SECRET_KEYS = new Set(
  [
    'token',
    'password',
    'currentPassword',
    'newPassword',
    'passwordHash',
    'tokenHash',
    'secret',
    'privateKey',
    'presharedKey',
    'privateKeyEnc',
    'presharedKeyEnc',
    'config',
    'totpSecret',
    'recoveryCodes',
    'code',
    'key',
  ].map((key) => key.toLowerCase()),
);

export const REDACTED = '[redacted]';

/** A deep copy without secret-named keys; a string shaped like an access token is replaced too. */
export function scrubSecrets(value: unknown): unknown {
  if (typeof value === 'string') return isWellFormedPat(value) ? REDACTED : value;
  if (Array.isArray(value)) return value.map(scrubSecrets);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (SECRET_KEYS.has(key.toLowerCase())) continue;
    out[key] = scrubSecrets(inner);
  }
  return out;
}

const snapshot = (value: object | null | undefined): Record<string, unknown> | null =>
  value ? (scrubSecrets(value) as Record<string, unknown>) : null;

/** How long health changes gather before they are written in one insert. */
export const HEALTH_BATCH_MS = 250;
/** Rows per insert statement (15 columns each, well under SQLite's limit of bound parameters). */
const ROWS_PER_INSERT = 500;

export function createAuditLog(deps: { db: Store; now: () => Date }): AuditLog {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const toRow = (entry: AuditRecord): typeof auditEvents.$inferInsert => {
    const { actor } = entry;
    return {
      at: deps.now().toISOString(),
      actorKind: actor.kind,
      actorName: actor.kind === 'system' ? null : (actor.name ?? null),
      actorTokenId: actor.kind === 'node' ? actor.tokenId : null,
      address: entry.address ?? null,
      action: entry.action,
      targetType: entry.target?.type ?? null,
      targetId: entry.target?.id ?? null,
      targetName: entry.target?.name ?? null,
      nodeId: entry.nodeId ?? (actor.kind === 'node' ? actor.nodeId : null),
      domain: entry.domain ?? null,
      before: snapshot(entry.before),
      after: snapshot(entry.after),
      detail: entry.detail ?? null,
    };
  };
  const record = async (entry: AuditRecord): Promise<void> => {
    await flush(); // keeps the log in order
    const row = await deps.db.write(async (tx) => await tx.insert(auditEvents).values(toRow(entry)).returning().get());
    emitter.emit('entry', toAuditEntry(row));
  };

  let pending: (typeof auditEvents.$inferInsert)[] = [];
  let flushTimer: NodeJS.Timeout | null = null;
  async function flush(): Promise<void> {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = null;
    if (pending.length === 0) return;
    const rows = pending;
    pending = [];
    let written: (typeof auditEvents.$inferSelect)[];
    try {
      written = await deps.db.write(async (tx) => {
        const out: (typeof auditEvents.$inferSelect)[] = [];
        for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
          out.push(
            ...(await tx
              .insert(auditEvents)
              .values(rows.slice(i, i + ROWS_PER_INSERT))
              .returning()
              .all()),
          );
        }
        return out;
      });
    } catch (err) {
      pending = [...rows, ...pending]; // kept for the next flush (the database was busy or is closing)
      throw err;
    }
    for (const row of written) emitter.emit('entry', toAuditEntry(row));
  }
  const flushLater = (): void => {
    flush().catch(() => {
      // Kept pending; the next change or reader flushes again.
    });
  };

  return {
    record,
    flush,
    onHealthChange(change) {
      pending.push(
        toRow({
          actor: { kind: 'system' },
          action: 'service.health',
          target: { type: change.type, id: change.id, name: change.name ?? null },
          nodeId: change.nodeId,
          domain: change.domain ?? null,
          before: change.from === null ? null : { health: change.from },
          after: { health: change.to },
          detail: change.detail ?? null,
        }),
      );
      if (!flushTimer) {
        flushTimer = setTimeout(flushLater, HEALTH_BATCH_MS);
        flushTimer.unref();
      }
    },
    subscribe(listener) {
      emitter.on('entry', listener);
      return () => emitter.off('entry', listener);
    },
  };
}
