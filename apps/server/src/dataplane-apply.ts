import { and, eq, inArray, isNotNull, isNull, ne, or } from 'drizzle-orm';
import type { ServiceType } from '@postern/contract';
import type { AppDeps } from './deps.js';
import type { ReadDb, Tx } from './db/client.js';
import { partsOf, preparedInList } from './db/parts.js';
import { httpServices, nodes, tcpServices } from './db/schema.js';
import { AppError } from './errors.js';
import type { ApplyResult, ApplyScope, Rejections, Verdicts } from './dataplane/types.js';
import { SCOPE_TOPIC, scopePayload } from './cluster/announcements.js';
import { streamKey } from './model/desired-state.js';

/** The row a caller changed: if the data plane sets it aside, the caller hears why. */
export type ChangeRef = { type: ServiceType; id: number } | { type: 'node'; id: number };

type ApplyDeps = Pick<AppDeps, 'db' | 'dataPlane' | 'now' | 'audit'>;

/**
 * What a change to one service touches (dataplane/README.md "Scoped applies"): an HTTP service's hosts, before and
 * after the change ('' or null: no domain); a TCP/UDP service's instances (`streamKey`), before and after.
 */
export function serviceScope(
  type: ServiceType,
  id: number,
  domains: readonly (string | null)[],
  streams: readonly string[] = [],
): ApplyScope {
  if (type === 'tcp') return { hosts: [], http: [], streams: [...new Set(streams)], tcp: [id] };
  return { hosts: [...new Set(domains.map((domain) => domain ?? ''))], http: [id] };
}

/**
 * What a change to nodes touches (dataplane/README.md "Scoped applies"): their peers, and the hosts and instances of
 * their services (two indexed reads: http_services_node_idx, tcp_services_node_idx). Read in a delete's
 * transaction (the services go with the node) or after any other change; a service moved meanwhile is its own
 * change's scope.
 */
export async function nodeScope(db: ReadDb, ids: readonly number[]): Promise<ApplyScope> {
  const http = await db
    .select({ id: httpServices.id, domain: httpServices.domain })
    .from(httpServices)
    .where(inArray(httpServices.nodeId, [...ids]))
    .all();
  const tcp = await db
    .select({ id: tcpServices.id, proto: tcpServices.proto, port: tcpServices.port })
    .from(tcpServices)
    .where(inArray(tcpServices.nodeId, [...ids]))
    .all();
  return {
    hosts: [...new Set(http.map((row) => row.domain))],
    http: http.map((row) => row.id),
    ...(tcp.length > 0
      ? { streams: [...new Set(tcp.map((row) => streamKey(row.proto, row.port)))], tcp: tcp.map((row) => row.id) }
      : {}),
    nodes: [...ids],
  };
}

/**
 * Asks the data plane to converge on what the DB now says (`scope`: only what the change touches; absent: all).
 * Call it after the DB change has committed (SQLite transactions never wait on I/O). Rows the data plane cannot
 * apply are set aside, not served, with the reason stored as their `applyError` (every other row is served); the
 * caller whose row was set aside gets a 400 naming the problem. A failure of the whole data plane (nginx or the
 * tunnel down) is a 503: the change is saved and applied as soon as it recovers.
 */
export async function applyChanges(deps: ApplyDeps, cause?: ChangeRef, scope?: ApplyScope): Promise<void> {
  // The other gateways converge at the same time (each runs its own data plane on the same rows). A lost
  // announcement is caught by their periodic drift check.
  const payload = scope === undefined ? null : scopePayload(scope);
  await (payload === null ? deps.db.announce() : deps.db.announce(SCOPE_TOPIC, payload)).catch(() => undefined);
  const result = await deps.dataPlane.apply(scope);
  await recordOnce(deps, result);
  const own =
    cause === undefined
      ? undefined
      : (cause.type === 'node' ? result.rejected.nodes : result.rejected[cause.type]).get(cause.id);
  if (own !== undefined) throw new AppError('dataplane_rejected', own);
  if (!result.ok)
    throw new AppError('dataplane_unavailable', `Saved, but the gateway could not apply it yet: ${result.message}`);
}

/** Each run's bookkeeping, by its result: the callers a run served share it (reconcile/run-queue.ts). */
const recorded = new WeakMap<ApplyResult, Promise<void>>();

/** Stores a run's rejections once, however many callers it served (a burst merged into one run). */
function recordOnce(deps: ApplyDeps, result: ApplyResult): Promise<void> {
  let recording = recorded.get(result);
  if (recording === undefined) {
    recording =
      result.scopedHttp === undefined
        ? recordRejections(deps, result.rejected, result.newerVerdicts?.())
        : recordScoped(deps, result.rejected, result.scopedHttp, result.scopedTcp, result.scopedNodes);
    recorded.set(result, recording);
  }
  return recording;
}

async function hasStoredRejections(deps: ApplyDeps): Promise<boolean> {
  for (const table of [httpServices, tcpServices, nodes]) {
    const row = await deps.db.select({ id: table.id }).from(table).where(isNotNull(table.applyError)).limit(1).get();
    if (row !== undefined) return true;
  }
  return false;
}

interface NewlyRejected {
  type: ServiceType | 'node';
  id: number;
  nodeId: number;
  name: string;
  domain: string | null;
  message: string;
}

/** A scoped run's rejections: they speak for the HTTP and TCP/UDP services and nodes it read alone. */
async function recordScoped(
  deps: ApplyDeps,
  rejected: Rejections,
  scoped: ReadonlySet<number>,
  scopedTcp: ReadonlySet<number> = new Set(),
  scopedNodes: ReadonlySet<number> = new Set(),
): Promise<void> {
  await recordScopedRejections(deps, 'http', rejected.http, scoped);
  await recordScopedRejections(deps, 'tcp', rejected.tcp, scopedTcp);
  await recordScopedNodeRejections(deps, rejected.nodes, scopedNodes);
}

const NO_NEWER: Verdicts = { http: new Set(), tcp: new Set(), nodes: new Set() };

/**
 * A full run's rejections: every row set aside has its reason stored, every other row's stored reason goes; a row
 * newly set aside (or for a new reason) goes to the audit log too. `newer`: rows scoped runs that read after the full
 * run spoke for, whose stored verdict is theirs (neither set nor cleared here).
 */
async function recordRejections(deps: ApplyDeps, rejected: Rejections, newer = NO_NEWER): Promise<void> {
  // Nothing set aside now and nothing stored as set aside: no write (a commit per change, costly on PostgreSQL).
  if (
    rejected.http.size === 0 &&
    rejected.tcp.size === 0 &&
    rejected.nodes.size === 0 &&
    !(await hasStoredRejections(deps))
  )
    return;
  const own = (rows: ReadonlyMap<number, string>, ids: ReadonlySet<number>): ReadonlyMap<number, string> =>
    ids.size === 0 ? rows : new Map([...rows].filter(([id]) => !ids.has(id)));
  const at = deps.now().toISOString();
  const newlyRejected: NewlyRejected[] = [];
  await deps.db.write(async (tx) => {
    // A node set aside (a subnet its token set that the gateway needs, a route the host refused): the operator sees
    // why on the node. The reason changing rewrites it; the node's updatedAt stays its configuration's.
    await clearServed(tx, 'node', rejected.nodes, newer.nodes);
    newlyRejected.push(...(await storeNodeReasons(tx, own(rejected.nodes, newer.nodes))));
    for (const type of ['http', 'tcp'] as const) {
      // Served again: the stale reason goes.
      await clearServed(tx, type, rejected[type], newer[type]);
      newlyRejected.push(...(await storeServiceReasons(tx, type, own(rejected[type], newer[type]), at)));
    }
  });
  await auditRejections(deps, newlyRejected);
}

/** Clears the stored reason of every row of `kind` not in `rejected` nor in `newer` (stored reasons are few). */
async function clearServed(
  tx: Tx,
  kind: keyof typeof rejectionTables,
  rejected: ReadonlyMap<number, string>,
  newer: ReadonlySet<number>,
): Promise<void> {
  const table = rejectionTables[kind];
  const stored = await tx.select({ id: table.id }).from(table).where(isNotNull(table.applyError)).all();
  const served = stored.map((row) => row.id).filter((id) => !rejected.has(id) && !newer.has(id));
  for (const part of partsOf(served))
    await tx.update(table).set({ applyError: null }).where(inArray(table.id, part)).run();
}

/** Stores each set-aside node's reason; answers those set aside newly or for a new reason (for the audit log). */
async function storeNodeReasons(tx: Tx, rows: ReadonlyMap<number, string>): Promise<NewlyRejected[]> {
  const newlyRejected: NewlyRejected[] = [];
  for (const [id, message] of rows) {
    const changed = await tx
      .update(nodes)
      .set({ applyError: message })
      .where(and(eq(nodes.id, id), or(isNull(nodes.applyError), ne(nodes.applyError, message))))
      .returning({ name: nodes.name })
      .get();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- drizzle types get() as the row; no match gives undefined
    if (changed) newlyRejected.push({ type: 'node', id, nodeId: id, name: changed.name, domain: null, message });
  }
  return newlyRejected;
}

/** Stores each set-aside service's reason; answers those set aside newly or for a new reason (for the audit log). */
async function storeServiceReasons(
  tx: Tx,
  type: ServiceType,
  rows: ReadonlyMap<number, string>,
  at: string,
): Promise<NewlyRejected[]> {
  const table = type === 'http' ? httpServices : tcpServices;
  const newlyRejected: NewlyRejected[] = [];
  for (const [id, message] of rows) {
    const changed = await tx
      .update(table)
      .set({ applyError: message, updatedAt: at })
      .where(and(eq(table.id, id), or(isNull(table.applyError), ne(table.applyError, message))))
      .returning({ nodeId: table.nodeId, name: table.name, domain: table.domain })
      .get();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- drizzle types get() as the row; no match gives undefined
    if (changed) newlyRejected.push({ type, id, ...changed, domain: changed.domain || null, message });
  }
  return newlyRejected;
}

async function auditRejections(deps: ApplyDeps, newlyRejected: readonly NewlyRejected[]): Promise<void> {
  for (const row of newlyRejected) {
    await deps.audit.record({
      actor: { kind: 'system' },
      action: 'dataplane.rejected',
      target: { type: row.type, id: row.id, name: row.name },
      nodeId: row.nodeId,
      domain: row.domain,
      after: { applyError: row.message },
      detail: row.message,
    });
  }
}

const rejectionTables = { http: httpServices, tcp: tcpServices, node: nodes } as const;

/** Per table: the first row stored as set aside of each part of `ids` (a burst's run speaks for thousands). */
const storedRejections = Object.fromEntries(
  Object.entries(rejectionTables).map(([kind, table]) => [
    kind,
    preparedInList<ReadDb, [id: number]>((db, ids) =>
      db
        .select({ id: table.id })
        .from(table)
        .where(and(isNotNull(table.applyError), inArray(table.id, ids)))
        .limit(1)
        .prepare(),
    ),
  ]),
) as Record<keyof typeof rejectionTables, (db: ReadDb, ids: readonly number[]) => Promise<[id: number][]>>;

/** Whether a row of `ids` is stored as set aside. */
const anyStored = async (db: ReadDb, kind: keyof typeof rejectionTables, ids: readonly number[]): Promise<boolean> =>
  (await storedRejections[kind](db, ids)).length > 0;

/** A scoped run's rejections of one kind: only the services it spoke for are written, in one transaction. */
async function recordScopedRejections(
  deps: ApplyDeps,
  type: ServiceType,
  rows: ReadonlyMap<number, string>,
  scoped: ReadonlySet<number>,
): Promise<void> {
  const table = type === 'http' ? httpServices : tcpServices;
  const cleared = [...scoped].filter((id) => !rows.has(id));
  // Nothing set aside and none of these stored as set aside: no write.
  if (rows.size === 0) {
    const stored = await anyStored(deps.db, type, cleared);
    if (!stored) return;
  }
  const at = deps.now().toISOString();
  const newlyRejected: NewlyRejected[] = [];
  await deps.db.write(async (tx) => {
    for (const part of partsOf(cleared))
      await tx
        .update(table)
        .set({ applyError: null })
        .where(and(isNotNull(table.applyError), inArray(table.id, part)))
        .run();
    newlyRejected.push(...(await storeServiceReasons(tx, type, rows, at)));
  });
  await auditRejections(deps, newlyRejected);
}

/** A scoped run's node rejections: only the nodes it spoke for (its scope's) are written, in one transaction. */
async function recordScopedNodeRejections(
  deps: ApplyDeps,
  rows: ReadonlyMap<number, string>,
  scoped: ReadonlySet<number>,
): Promise<void> {
  const cleared = [...scoped].filter((id) => !rows.has(id));
  if (rows.size === 0) {
    const stored = await anyStored(deps.db, 'node', cleared);
    if (!stored) return;
  }
  const newlyRejected: NewlyRejected[] = [];
  await deps.db.write(async (tx) => {
    for (const part of partsOf(cleared))
      await tx
        .update(nodes)
        .set({ applyError: null })
        .where(and(isNotNull(nodes.applyError), inArray(nodes.id, part)))
        .run();
    newlyRejected.push(...(await storeNodeReasons(tx, rows)));
  });
  await auditRejections(deps, newlyRejected);
}
