import { EventEmitter } from 'node:events';
import { isWellFormedPat, type AuditEntry } from '@postern/contract';
import { sql } from 'drizzle-orm';
import type { Store, Tx } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import { auditEvents } from '../../db/schema.js';
import { clientKeyOf } from '../auth/rate-limit.js';
import { toAuditEntry } from './present.js';

// The one way anything enters the audit log: `audit.record({ actor, address, action, target, before, after })`.
// The row is inserted at once (synchronous, one small insert), secrets are scrubbed from the snapshots first, and
// every live subscriber (the console's audit page) gets the entry. Nothing ever updates or deletes a row but the
// retention sweep (retention.ts).

export type AuditActor =
  /** A console account (any role: the kind is named for the spec's one admin): who, and how its session signed in. */
  | { kind: 'admin'; name: string | null; accountId?: number | null; via?: string | null }
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

/**
 * An entry any client can cause as often as it likes: a refused sign-in (401, 429), a failed re-check of the password
 * or a code, an accepted password still waiting for its second factor. Summed per client and window (`recordSummed`).
 */
export interface SummedRecord {
  actor: AuditActor;
  /** The client's address (request.ip): counted per IPv4 address or IPv6 /64, as the sign-in limiter counts. */
  address: string;
  action: string;
  target?: AuditTarget | null;
  /** Why, e.g. 'wrong username or password', 'rate limited': the summary counts each. */
  reason: string;
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
  /**
   * Records an entry a client can cause at will (docs/api.md "Audit log"), so that a flood costs a bounded number of
   * rows and write transactions: the first per client and action in a window is written at once (an operator sees an
   * attack start), at most SUMMED_FIRST_ROWS_PER_WINDOW of them per window; everything after it is counted in memory
   * and written as one summary row per client at the window's end ("N failed sign-ins from A between t1 and t2"),
   * all summaries in one write. A client quiet for a whole window starts over. Resolves when its row, if any, is
   * written.
   */
  recordSummed(entry: SummedRecord): Promise<void>;
  /**
   * Ends the window now: writes the summaries counted so far (a timer does it every SUMMARY_WINDOW_MS). `final`: the
   * app is closing, nothing is counted after it (the timer stops).
   */
  flushSummed(options?: { final?: boolean }): Promise<void>;
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

/** How long summed entries gather before their summary rows are written (docs/api.md "Audit log"). */
export const SUMMARY_WINDOW_MS = 10 * 60_000;
/** Rows written at once per window for clients not seen in the window before; beyond, they are only counted. */
export const SUMMED_FIRST_ROWS_PER_WINDOW = 100;
/** Clients counted one by one per window (~1 KB each at most); beyond, one row sums up all further clients. */
export const SUMMED_MAX_CLIENTS = 10_000;
/** Usernames kept per summary: enough to tell one attacked name from a spray, bounded. */
const SUMMED_MAX_NAMES = 5;

const SUMMARY_NOUNS: Record<string, [string, string]> = {
  'auth.sign-in-failed': ['failed sign-in', 'failed sign-ins'],
  'auth.recheck-failed': ['failed re-check', 'failed re-checks'],
  'auth.password-accepted': ['accepted password', 'accepted passwords'],
  // Visitors of protected services (modules/access/exchange-routes.ts).
  'access.sign-in': ['visitor sign-in', 'visitor sign-ins'],
  'access.sign-in-failed': ['failed visitor sign-in', 'failed visitor sign-ins'],
  'access.refused': ['refused visitor', 'refused visitors'],
  'access.share-link-used': ['share-link use', 'share-link uses'],
  'access.sign-out': ['visitor sign-out', 'visitor sign-outs'],
};

/** What one client did in the current window, beyond the row written at once. */
interface Tally {
  entry: SummedRecord;
  /** The address of the summary: the one seen, or the client's /64 when several of it were. */
  address: string | null;
  count: number;
  firstMs: number;
  lastMs: number;
  reasons: Map<string, number>;
  names: Set<string>;
  /** The target's id while every entry named the same one. */
  targetId: number | null;
}

function summaryOf(tally: Tally, where: string): AuditRecord {
  const { entry, count } = tally;
  const [one, many] = SUMMARY_NOUNS[entry.action] ?? ['entry', 'entries'];
  const first = new Date(tally.firstMs).toISOString();
  const last = new Date(tally.lastMs).toISOString();
  const reasons = [...tally.reasons].map(([reason, n]) => ({ reason, count: n }));
  const names = [...tally.names];
  const name = names.length === 1 ? (names[0] ?? null) : null;
  const actor: AuditActor =
    entry.actor.kind === 'admin' || entry.actor.kind === 'anonymous' ? { kind: entry.actor.kind, name } : entry.actor;
  return {
    actor,
    address: tally.address,
    action: entry.action,
    target: entry.target ? { type: entry.target.type, id: tally.targetId, name } : null,
    detail:
      `${count} ${count === 1 ? one : many} from ${where} between ${first} and ${last}: ` +
      reasons.map((r) => `${r.count} ${r.reason}`).join(', '),
    after: { count, first, last, reasons, usernames: names },
  };
}

/** How long health changes gather before they are written in one insert. */
export const HEALTH_BATCH_MS = 250;
/** Rows per insert statement (15 columns each, well under SQLite's limit of bound parameters). */
const ROWS_PER_INSERT = 500;

type AuditRow = typeof auditEvents.$inferInsert;

/** The row of `entry`, its snapshots scrubbed of secrets. */
function auditRow(entry: AuditRecord, at: string): AuditRow {
  const { actor } = entry;
  return {
    at,
    actorKind: actor.kind,
    actorName: actor.kind === 'system' ? null : (actor.name ?? null),
    actorTokenId: actor.kind === 'node' ? actor.tokenId : null,
    actorAccountId: actor.kind === 'admin' ? (actor.accountId ?? null) : null,
    actorVia: actor.kind === 'admin' ? (actor.via ?? null) : null,
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
}

/** `rows` inserted in one write, ROWS_PER_INSERT per statement; the rows as stored. */
async function insertRows(db: Store, rows: AuditRow[]): Promise<(typeof auditEvents.$inferSelect)[]> {
  return await db.write(async (tx) => {
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
}

/** Every column of a row, as a placeholder of the same name. */
const AUDIT_COLUMNS = [
  'at',
  'actorKind',
  'actorName',
  'actorTokenId',
  'actorAccountId',
  'actorVia',
  'address',
  'action',
  'targetType',
  'targetId',
  'targetName',
  'nodeId',
  'domain',
  'before',
  'after',
  'detail',
] as const satisfies readonly (keyof AuditRow)[];

// One entry per change through the API: its insert is prepared once per connection (db/prepared.ts), not built by
// drizzle at each call (the JSON columns are encoded from the placeholders' values as in a built insert).
const insertOneQuery = preparedPerDb((tx: Tx) =>
  tx
    .insert(auditEvents)
    .values(Object.fromEntries(AUDIT_COLUMNS.map((column) => [column, sql.placeholder(column)])) as unknown as AuditRow)
    .returning()
    .prepare(),
);

/** A health check's verdict as the gateway's own entry. */
const healthRecord = (change: HealthChange): AuditRecord => ({
  actor: { kind: 'system' },
  action: 'service.health',
  target: { type: change.type, id: change.id, name: change.name ?? null },
  nodeId: change.nodeId,
  domain: change.domain ?? null,
  before: change.from === null ? null : { health: change.from },
  after: { health: change.to },
  detail: change.detail ?? null,
});

const newTally = (entry: SummedRecord): Tally => ({
  entry,
  address: entry.address,
  count: 0,
  firstMs: 0,
  lastMs: 0,
  reasons: new Map(),
  names: new Set(),
  targetId: entry.target?.id ?? null,
});
/** One more entry in `tally`, at `at` (ms). */
function countInto(tally: Tally, entry: SummedRecord, at: number): void {
  if (tally.count === 0) {
    tally.firstMs = at;
    tally.address = entry.address;
    tally.targetId = entry.target?.id ?? null;
  }
  tally.count += 1;
  tally.lastMs = at;
  if (tally.address !== entry.address) tally.address = clientKeyOf(entry.address);
  if ((entry.target?.id ?? null) !== tally.targetId) tally.targetId = null;
  tally.reasons.set(entry.reason, (tally.reasons.get(entry.reason) ?? 0) + 1);
  const name = entry.actor.kind === 'system' ? null : (entry.actor.name ?? null);
  if (name !== null && tally.names.size < SUMMED_MAX_NAMES) tally.names.add(name.slice(0, 64));
}

/**
 * `record` of the audit log. Entries recorded in one turn of the event loop are written in one transaction at its
 * end: the changes a merged data-plane run answered reach their audit hooks together (bench/README.md, "The write
 * path"). Each caller still resolves only once its row is committed, and rejects if it is not. `flushFirst` writes
 * what was gathered before (the log stays in order); `written` gets each row as stored.
 */
function batchedRecorder(
  db: Store,
  flushFirst: () => Promise<void>,
  written: (row: typeof auditEvents.$inferSelect) => void,
  toRow: (entry: AuditRecord) => AuditRow,
): (entry: AuditRecord) => Promise<void> {
  let waiting: { row: AuditRow; resolve: () => void; reject: (error: unknown) => void }[] = [];
  const writeWaiting = async (): Promise<void> => {
    const batch = waiting;
    waiting = [];
    const insert = (rows: readonly AuditRow[]) =>
      db.write(async (tx) => {
        const out: (typeof auditEvents.$inferSelect)[] = [];
        for (const row of rows) out.push(await insertOneQuery(tx).get(row));
        return out;
      });
    try {
      await flushFirst();
      const rows = await insert(batch.map(({ row }) => row));
      for (const row of rows) written(row);
      for (const { resolve } of batch) resolve();
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      // One entry that cannot be stored fails its own caller, not the others whose entries shared its turn.
      for (const { row, resolve, reject } of batch) {
        try {
          const [stored] = await insert([row]);
          if (stored) written(stored);
          resolve();
        } catch (alone) {
          reject(alone);
        }
      }
    }
  };
  return (entry) =>
    new Promise((resolve, reject) => {
      if (waiting.length === 0) setImmediate(() => void writeWaiting());
      waiting.push({ row: toRow(entry), resolve, reject });
    });
}

export function createAuditLog(deps: { db: Store; now: () => Date }): AuditLog {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const toRow = (entry: AuditRecord): AuditRow => auditRow(entry, deps.now().toISOString());
  const record = batchedRecorder(
    deps.db,
    () => flush(),
    (row) => emitter.emit('entry', toAuditEntry(row)),
    toRow,
  );

  let pending: AuditRow[] = [];
  let flushTimer: NodeJS.Timeout | null = null;
  async function flush(): Promise<void> {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = null;
    if (pending.length === 0) return;
    const rows = pending;
    pending = [];
    let written: (typeof auditEvents.$inferSelect)[];
    try {
      written = await insertRows(deps.db, rows);
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

  // Summed entries: per action and client, the tally of the current window; `overflow` per action beyond the cap.
  const tallies = new Map<string, Tally>();
  const overflow = new Map<string, Tally>();
  let firstRowsLeft = SUMMED_FIRST_ROWS_PER_WINDOW;
  let windowTimer: NodeJS.Timeout | null = null;
  async function flushSummed(options: { final?: boolean } = {}): Promise<void> {
    const rows: AuditRow[] = [];
    for (const [key, tally] of tallies) {
      // Quiet for a whole window: its next entry is news again.
      if (tally.count === 0) {
        tallies.delete(key);
        continue;
      }
      rows.push(toRow(summaryOf(tally, tally.address ?? 'an unknown address')));
      Object.assign(tally, { count: 0, reasons: new Map(), names: new Set() });
    }
    for (const tally of overflow.values()) {
      rows.push(toRow(summaryOf({ ...tally, address: null }, `more than ${SUMMED_MAX_CLIENTS} further addresses`)));
    }
    overflow.clear();
    firstRowsLeft = SUMMED_FIRST_ROWS_PER_WINDOW;
    if (options.final === true) tallies.clear();
    if (tallies.size === 0 && windowTimer) {
      clearInterval(windowTimer);
      windowTimer = null;
    }
    pending.push(...rows);
    await flush();
  }
  async function recordSummed(entry: SummedRecord): Promise<void> {
    const key = `${entry.action}\n${clientKeyOf(entry.address)}`;
    const tally = tallies.get(key);
    if (tally) {
      countInto(tally, entry, deps.now().getTime());
      return;
    }
    if (tallies.size >= SUMMED_MAX_CLIENTS) {
      const further = overflow.get(entry.action) ?? newTally(entry);
      overflow.set(entry.action, further);
      countInto(further, entry, deps.now().getTime());
      return;
    }
    const fresh = newTally(entry);
    tallies.set(key, fresh);
    windowTimer ??= setInterval(() => void flushSummed().catch(() => undefined), SUMMARY_WINDOW_MS).unref();
    if (firstRowsLeft === 0) {
      countInto(fresh, entry, deps.now().getTime());
      return;
    }
    firstRowsLeft -= 1;
    try {
      await record({
        actor: entry.actor,
        address: entry.address,
        action: entry.action,
        target: entry.target ?? null,
        detail: entry.reason,
      });
    } catch (error) {
      countInto(fresh, entry, deps.now().getTime()); // not lost: the summary carries it
      throw error;
    }
  }

  return {
    record,
    flush,
    recordSummed,
    flushSummed,
    onHealthChange(change) {
      pending.push(toRow(healthRecord(change)));
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
