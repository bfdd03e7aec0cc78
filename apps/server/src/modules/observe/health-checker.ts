import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
// Imported, not the global: a test's fake timers replace the global setImmediate, and a read must still finish.
import { setImmediate as nextTurnAfter } from 'node:timers';
import { HEALTH_CHECK_DEFAULTS, type ServiceHealth, type ServiceType } from '@postern/contract';
import { sql, type SQL } from 'drizzle-orm';
import FlatQueue from 'flatqueue';
import type { ReadDb, Store } from '../../db/client.js';
import { createCoalescer } from '../../lib/serial.js';

// Backend health: every served service's backend is checked from the gateway, through the tunnel, the way nginx
// reaches it (HTTP: GET of the service's path; TCP: a connect; UDP has no answer to wait for and stays unknown).
// Each service has its own schedule and at most one check in flight, each check its own timeout. Checks are paced
// (a cap on checks at once, per node too), so a dead node's checks wait for their timeouts without holding up any
// other node's. A check never blocks the event loop (sockets only), and a backend sees one connection per interval.

export interface HealthTarget {
  type: ServiceType;
  id: number;
  nodeId: number;
  /** `udp` is listed (its state shows unknown) but never checked. */
  probe: 'http' | 'https' | 'tcp' | 'udp';
  host: string;
  port: number;
  path: string;
  intervalSeconds: number;
  timeoutSeconds: number;
}

/** A check's outcome: null error = up. */
export interface ProbeResult {
  error: string | null;
  latencyMs: number;
}

export type Probe = (target: HealthTarget, timeoutMs: number) => Promise<ProbeResult>;

export interface HealthChange {
  health: ServiceHealth;
  /** The state before (unknown for a service seen for the first time). */
  previous: ServiceHealth['state'];
}

export interface HealthChecker {
  start(): void;
  stop(): void;
  /** Reads the services to check from the DB again (after a change; also every few seconds by itself). */
  refresh(): Promise<void>;
  /**
   * The services changed: read them again soon, after the caller's answer, or at once when someone asks for the list
   * first. `changed`: only those services changed (a change's scope), and only their rows are read; absent: every
   * service is read again (at 10,000 services tens of milliseconds of the event loop, at 100,000 ~0.3 s of CPU).
   */
  invalidate(changed?: ChangedServices): void;
  /** Every served service's health (checked or not yet). */
  list(): Promise<ServiceHealth[]>;
  get(type: ServiceType, id: number): Promise<ServiceHealth | undefined>;
  /** Called on every change of state (up ⇄ down, and the first result). Returns an unsubscribe function. */
  onHealthChange(listener: (change: HealthChange) => void): () => void;
}

/** Services whose rows a change touched (created, edited, disabled, deleted). */
export interface ChangedServices {
  http: readonly number[];
  tcp?: readonly number[] | undefined;
}

type TargetRow = [
  type: ServiceType,
  id: number,
  nodeId: number,
  proto: string,
  host: string | null,
  port: number,
  path: string,
  interval: number | null,
  timeout: number | null,
];

/** Targets read per statement, the event loop free in between: one read of 100,000 held it for about a second. */
export const TARGETS_SLICE = 2000;

/**
 * What nginx serves, with the same upstream rule as desired-state.ts: a regular node is reached at its tunnel address.
 * A slice of one table after the id `after` (keyset: a service added meanwhile is read now or at the next refresh).
 */
const targetsWhere = {
  http: (which: SQL, limit: number) =>
    sql`select 'http', s.id, s.node_id, s.backend_proto,
         case when n.is_gateway or n.is_local then s.backend_host else n.address end, s.backend_port, s.path_location,
         s.health_interval_seconds, s.health_timeout_seconds
       from http_services s join nodes n on n.id = s.node_id
       where s.enabled and (n.enabled or n.is_local) and s.apply_error is null and ${which}
       order by s.id limit ${limit}`,
  tcp: (which: SQL, limit: number) =>
    sql`select 'tcp', s.id, s.node_id, s.proto,
         case when n.is_gateway or n.is_local then s.backend_host else n.address end, s.backend_port, '',
         s.health_interval_seconds, s.health_timeout_seconds
       from tcp_services s join nodes n on n.id = s.node_id
       where s.enabled and (n.enabled or n.is_local) and s.apply_error is null and ${which}
       order by s.id limit ${limit}`,
};
const targetsOf = {
  http: (after: number, limit: number) => targetsWhere.http(sql`s.id > ${after}`, limit),
  tcp: (after: number, limit: number) => targetsWhere.tcp(sql`s.id > ${after}`, limit),
};
const idIn = (ids: readonly number[]): SQL =>
  sql`s.id in (${sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  )})`;

/** A row of the targets' statements as a target; null for one with no host to reach. */
function targetOf([type, id, nodeId, proto, host, port, path, interval, timeout]: TargetRow): HealthTarget | null {
  if (host === null || host === '') return null;
  const intervalSeconds = interval ?? HEALTH_CHECK_DEFAULTS.intervalSeconds;
  return {
    type,
    id,
    nodeId,
    host,
    port,
    path: path || '/',
    probe: proto as HealthTarget['probe'],
    intervalSeconds,
    // A check never outlives its interval, so checks of one service never overlap.
    timeoutSeconds: Math.min(timeout ?? HEALTH_CHECK_DEFAULTS.timeoutSeconds, intervalSeconds),
  };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => nextTurnAfter(resolve));

export async function loadHealthTargets(db: ReadDb, slice = TARGETS_SLICE): Promise<HealthTarget[]> {
  const targets: HealthTarget[] = [];
  for (const query of [targetsOf.http, targetsOf.tcp]) {
    for (let after = 0; ;) {
      const page = await db.values<TargetRow>(query(after, slice));
      for (const row of page) {
        const target = targetOf(row);
        if (target) targets.push(target);
      }
      const last = page.at(-1);
      if (page.length < slice || last === undefined) break;
      after = last[1];
      await nextTurn();
    }
  }
  return targets;
}

/** The targets of a change's services (fewer than TARGETS_SLICE of each kind): those served, one statement a kind. */
export async function loadChangedTargets(db: ReadDb, changed: ChangedServices): Promise<HealthTarget[]> {
  const targets: HealthTarget[] = [];
  for (const [ids, query] of [
    [changed.http, targetsWhere.http],
    [changed.tcp ?? [], targetsWhere.tcp],
  ] as const) {
    if (ids.length === 0) continue;
    for (const row of await db.values<TargetRow>(query(idIn(ids), ids.length))) {
      const target = targetOf(row);
      if (target) targets.push(target);
    }
  }
  return targets;
}

const sameTarget = (a: HealthTarget, b: HealthTarget) =>
  a.probe === b.probe && a.host === b.host && a.port === b.port && a.path === b.path && a.nodeId === b.nodeId;

/**
 * How long the checker's tick is, and how often it reads the targets again without being asked (every apply asks;
 * at 10,000 services one read costs tens of milliseconds of the event loop, so the safety net is not frequent).
 */
const TICK_MS = 1000;
const REFRESH_EVERY_MS = 30_000;
/**
 * Pacing, so that many services (a boot at 10,000, a node with hundreds coming back) never mean thousands of sockets
 * at once: no more checks run at once than this; due checks beyond it wait, the longest waiting first.
 */
export const MAX_CHECKS_IN_FLIGHT = 512;
/** Per node, so that a dead node's checks (each waiting for its timeout) never hold the slots of every other node. */
export const MAX_CHECKS_IN_FLIGHT_PER_NODE = 32;

interface Entry {
  target: HealthTarget;
  health: ServiceHealth;
  nextAt: number;
  isChecking: boolean;
}

const keyOf = (type: ServiceType, id: number) => `${type}:${id}`;

const unknownHealth = (target: HealthTarget): ServiceHealth => ({
  type: target.type,
  id: target.id,
  nodeId: target.nodeId,
  state: 'unknown',
  since: null,
  lastCheckedAt: null,
  lastError: target.probe === 'udp' ? 'UDP backends are not checked' : null,
  latencyMs: null,
  intervalSeconds: target.intervalSeconds,
  timeoutSeconds: target.timeoutSeconds,
});

/** `health` after a check that gave `result` at `at` (ISO time). */
function healthAfter(health: ServiceHealth, result: ProbeResult, at: string): ServiceHealth {
  const state = result.error === null ? 'up' : 'down';
  return {
    ...health,
    state,
    since: health.state === state ? health.since : at,
    lastCheckedAt: at,
    lastError: result.error,
    latencyMs: result.error === null ? Math.round(result.latencyMs) : null,
  };
}

/**
 * The entries by the time of their next check, soonest first (a binary heap): a tick takes what is due from its head
 * instead of reading (and, with more due than the caps allow, sorting) every entry. At 100,000 services with more
 * due than can run, that read and sort held the event loop for hundreds of milliseconds every second
 * (bench/README.md, sweep-stall.ts). An entry is queued again whenever its time changes; what the queue gives back is
 * skipped when it is out of date (the entry went, was replaced, is being checked, or has another time now).
 */
class DueQueue {
  /**
   * Each node's entries by time. A node at its cap of checks in flight is set aside whole for the tick, one step: with
   * one queue for every node, a tick took each of its due entries out and put it back (at 100,000 services on one node
   * at its cap, 100,000 of them every second: 250-600 ms of the event loop a tick, bench/README.md).
   */
  private readonly byNode = new Map<number, FlatQueue<Queued>>();
  /** Nodes by the time of their first entry when queued; `queuedAt` says which of a node's places is current. */
  private readonly nodes = new FlatQueue<number>();
  private readonly queuedAt = new Map<number, number>();
  /** Nodes at their cap this tick, queued again by endTick(). */
  private readonly setAside: number[] = [];

  constructor(private readonly entries: Map<string, Entry>) {}

  schedule(key: string, entry: Entry): void {
    if (entry.target.probe === 'udp') return;
    const { nodeId } = entry.target;
    let queue = this.byNode.get(nodeId);
    if (queue === undefined) {
      queue = new FlatQueue<Queued>();
      this.byNode.set(nodeId, queue);
    }
    queue.push({ key, entry, at: entry.nextAt }, entry.nextAt);
    this.queueNode(nodeId, entry.nextAt);
  }

  /**
   * The next entry due at `at` (the longest waiting first) of a node `isFull` does not refuse, or undefined when none
   * is; a refused node is skipped, with all its entries, until endTick().
   */
  takeDue(at: number, isFull: (nodeId: number) => boolean): { key: string; entry: Entry } | undefined {
    for (;;) {
      const nodeAt = this.nodes.peekValue();
      if (nodeAt === undefined || nodeAt > at) return undefined;
      const nodeId = this.nodes.pop() as number;
      if (this.queuedAt.get(nodeId) !== nodeAt) continue; // an older place of a node queued again since
      this.queuedAt.delete(nodeId);
      const queue = this.byNode.get(nodeId);
      const head = queue === undefined ? undefined : this.currentHead(queue);
      if (queue === undefined || head === undefined) {
        this.byNode.delete(nodeId);
        continue;
      }
      if (head.at > at) this.queueNode(nodeId, head.at);
      else if (isFull(nodeId)) this.setAside.push(nodeId);
      else {
        queue.pop();
        const next = this.currentHead(queue);
        if (next === undefined) this.byNode.delete(nodeId);
        else this.queueNode(nodeId, next.at);
        return head;
      }
    }
  }

  /** The nodes set aside this tick queued again, at their first entry's time. */
  endTick(): void {
    for (const nodeId of this.setAside.splice(0)) {
      const head = this.byNode.get(nodeId)?.peek();
      if (head !== undefined) this.queueNode(nodeId, head.at);
    }
  }

  /** The queue's first entry still current (those gone, replaced, being checked or with another time dropped). */
  private currentHead(queue: FlatQueue<Queued>): Queued | undefined {
    for (let head = queue.peek(); head !== undefined; head = queue.peek()) {
      const { key, entry, at } = head;
      if (this.entries.get(key) === entry && !entry.isChecking && entry.nextAt === at) return head;
      queue.pop();
    }
    return undefined;
  }

  private queueNode(nodeId: number, at: number): void {
    const queuedAt = this.queuedAt.get(nodeId);
    if (queuedAt !== undefined && queuedAt <= at) return;
    this.queuedAt.set(nodeId, at);
    this.nodes.push(nodeId, at);
  }
}

interface Queued {
  key: string;
  entry: Entry;
  at: number;
}

/**
 * The checker's entries made to follow `targets`: kept where the target is the same, new ones checked soon. A slice
 * at a time, the event loop free in between (checks go on meanwhile, each entry whole).
 */
/** One target read: its entry kept (its interval and timeout taken), or a new one checked soon. */
function applyTarget(
  entries: Map<string, Entry>,
  queue: DueQueue,
  target: HealthTarget,
  at: number,
  random: () => number,
): void {
  const key = keyOf(target.type, target.id);
  const entry = entries.get(key);
  if (entry && sameTarget(entry.target, target)) {
    const isIntervalChanged = entry.target.intervalSeconds !== target.intervalSeconds;
    entry.target = target;
    if (isIntervalChanged) {
      entry.nextAt = Math.min(entry.nextAt, at + target.intervalSeconds * 1000);
      queue.schedule(key, entry);
    }
    if (
      entry.health.intervalSeconds !== target.intervalSeconds ||
      entry.health.timeoutSeconds !== target.timeoutSeconds
    )
      entry.health = {
        ...entry.health,
        intervalSeconds: target.intervalSeconds,
        timeoutSeconds: target.timeoutSeconds,
      };
    return;
  }
  // New (or pointed elsewhere): checked soon, spread over a few seconds so a boot does not check all at once.
  const added: Entry = {
    target,
    health: unknownHealth(target),
    nextAt: at + Math.floor(random() * Math.min(3000, target.intervalSeconds * 1000)),
    isChecking: false,
  };
  entries.set(key, added);
  queue.schedule(key, added);
}

/** Every served service read: each one's entry kept or added, the others' removed. */
async function applyTargets(
  entries: Map<string, Entry>,
  queue: DueQueue,
  targets: HealthTarget[],
  at: number,
  random: () => number,
): Promise<void> {
  const seen = new Set<string>();
  let done = 0;
  for (const target of targets) {
    if (++done % TARGETS_SLICE === 0) await nextTurn();
    seen.add(keyOf(target.type, target.id));
    applyTarget(entries, queue, target, at, random);
  }
  done = 0;
  for (const key of entries.keys()) {
    if (++done % TARGETS_SLICE === 0) await nextTurn();
    if (!seen.has(key)) entries.delete(key);
  }
}

/** A change's services read: each one's entry kept or added; one no longer served (deleted, disabled) removed. */
function applyChangedTargets(
  entries: Map<string, Entry>,
  queue: DueQueue,
  changed: ChangedServices,
  targets: HealthTarget[],
  at: number,
  random: () => number,
): void {
  const served = new Set(targets.map((target) => keyOf(target.type, target.id)));
  for (const [type, ids] of [
    ['http', changed.http],
    ['tcp', changed.tcp ?? []],
  ] as const)
    for (const id of ids) if (!served.has(keyOf(type, id))) entries.delete(keyOf(type, id));
  for (const target of targets) applyTarget(entries, queue, target, at, random);
}

/** The checks running now, in all and per node (the caps above). */
class InFlightChecks {
  total = 0;
  private readonly byNode = new Map<number, number>();

  ofNode(nodeId: number): number {
    return this.byNode.get(nodeId) ?? 0;
  }

  begin(nodeId: number): void {
    this.total++;
    this.byNode.set(nodeId, this.ofNode(nodeId) + 1);
  }

  end(nodeId: number): void {
    this.total--;
    const left = (this.byNode.get(nodeId) ?? 1) - 1;
    if (left > 0) this.byNode.set(nodeId, left);
    else this.byNode.delete(nodeId);
  }
}

export function createHealthChecker(deps: {
  db: Store;
  probe?: Probe;
  now?: () => number;
  random?: () => number;
  /** Default: the served services from the DB. */
  loadTargets?: () => Promise<HealthTarget[]> | HealthTarget[];
}): HealthChecker {
  const probe = deps.probe ?? probeBackend;
  const loadTargets = deps.loadTargets ?? (() => loadHealthTargets(deps.db));
  const now = deps.now ?? Date.now;
  const random = deps.random ?? Math.random;
  const entries = new Map<string, Entry>();
  const queue = new DueQueue(entries);
  const listeners = new Set<(change: HealthChange) => void>();
  let timer: NodeJS.Timeout | null = null;
  let refreshedAt = 0;

  /** A read of every service is owed. */
  let isDirty = false;
  /** Services changed since the last read (read alone unless a read of every service is owed). */
  let changed: { http: Set<number>; tcp: Set<number> } | null = null;
  const isOwed = (): boolean => isDirty || changed !== null;
  // One read at a time (a full one and a change's never overlap, so an older read never lands over a newer): a
  // caller that asks while one is running gets a second one, after it, that sees its change. A change's services
  // alone when that is all that is owed (a test's loadTargets: always everything).
  const sync = createCoalescer(async () => {
    const ids = changed === null ? null : { http: [...changed.http], tcp: [...changed.tcp] };
    changed = null;
    if (isDirty || ids === null || deps.loadTargets || ids.http.length + ids.tcp.length > TARGETS_SLICE) {
      isDirty = false;
      refreshedAt = now();
      await applyTargets(entries, queue, await loadTargets(), now(), random);
      return;
    }
    applyChangedTargets(entries, queue, ids, await loadChangedTargets(deps.db, ids), now(), random);
  });
  const refresh = (): Promise<void> => {
    isDirty = true;
    return sync();
  };

  const inFlight = new InFlightChecks();

  async function check(key: string, entry: Entry): Promise<void> {
    entry.isChecking = true;
    const { target } = entry;
    inFlight.begin(target.nodeId);
    let result: ProbeResult;
    try {
      result = await probe(target, target.timeoutSeconds * 1000);
    } catch (err) {
      result = { error: err instanceof Error ? err.message : String(err), latencyMs: 0 };
    } finally {
      inFlight.end(target.nodeId);
    }
    entry.isChecking = false;
    entry.nextAt = now() + entry.target.intervalSeconds * 1000;
    // The service went away or was pointed elsewhere while this check ran: its result is about nothing served.
    if (entries.get(key) !== entry || !sameTarget(entry.target, target)) return;
    queue.schedule(key, entry);
    const previous = entry.health.state;
    entry.health = healthAfter(entry.health, result, new Date(now()).toISOString());
    if (previous !== entry.health.state) for (const listener of listeners) listener({ health: entry.health, previous });
  }

  const syncQuietly = (): void => {
    sync().catch(() => {
      isDirty = true; // the database did not answer: read everything at the next read or tick
      refreshedAt = 0;
    });
  };
  const refreshQuietly = (): void => {
    isDirty = true;
    syncQuietly();
  };

  function tick(): void {
    if (now() - refreshedAt >= REFRESH_EVERY_MS) refreshQuietly();
    const at = now();
    // The longest waiting first; more due than the caps allow stay due for the next tick. A node at its cap keeps
    // its due checks (set aside for this tick) without holding up any other node's.
    const isFull = (nodeId: number): boolean => inFlight.ofNode(nodeId) >= MAX_CHECKS_IN_FLIGHT_PER_NODE;
    while (inFlight.total < MAX_CHECKS_IN_FLIGHT) {
      const item = queue.takeDue(at, isFull);
      if (item === undefined) break;
      void check(item.key, item.entry);
    }
    queue.endTick();
  }

  const refreshIfDirty = async (): Promise<void> => {
    if (isOwed()) await sync();
  };

  return {
    start() {
      refreshQuietly();
      timer = setInterval(tick, TICK_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
    refresh,
    invalidate(services) {
      const wasOwed = isOwed();
      if (services === undefined) isDirty = true;
      else {
        changed ??= { http: new Set(), tcp: new Set() };
        for (const id of services.http) changed.http.add(id);
        for (const id of services.tcp ?? []) changed.tcp.add(id);
      }
      if (wasOwed) return;
      setImmediate(() => {
        if (isOwed() && timer !== null) syncQuietly(); // stopped (or never started): the next reader reads
      });
    },
    list: async () => {
      await refreshIfDirty();
      return [...entries.values()].map((entry) => entry.health);
    },
    get: async (type, id) => {
      await refreshIfDirty();
      return entries.get(keyOf(type, id))?.health;
    },
    onHealthChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

/** One check of a backend, as nginx would reach it. */
export function probeBackend(target: HealthTarget, timeoutMs: number): Promise<ProbeResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  return new Promise((resolve) => {
    let isDone = false;
    const finish = (error: string | null) => {
      if (isDone) return;
      isDone = true;
      clearTimeout(deadline);
      resolve({ error, latencyMs: elapsed() });
    };
    const deadline = setTimeout(() => {
      finish(`no answer within ${timeoutMs / 1000} s`);
      socketOwner.destroy();
    }, timeoutMs);
    let socketOwner: { destroy(): void };
    if (target.probe === 'tcp') {
      const socket = connect({ host: target.host, port: target.port });
      socketOwner = socket;
      socket.once('connect', () => {
        finish(null);
        socket.destroy();
      });
      socket.once('error', (err) => finish(describe(err)));
      return;
    }
    const send = target.probe === 'https' ? httpsRequest : httpRequest;
    const request = send({
      host: target.host,
      port: target.port,
      path: target.path,
      method: 'GET',
      agent: false,
      // The backend's certificate is not checked: nginx does not check it either, and a health check must judge
      // the backend's answer, not its certificate.
      rejectUnauthorized: false,
      headers: { 'user-agent': 'postern-health-check', connection: 'close' },
    });
    socketOwner = request;
    request.once('response', (response) => {
      const status = response.statusCode ?? 0;
      // The status line is the answer; the body is not wanted.
      response.destroy();
      request.destroy();
      finish(status >= 500 ? `HTTP ${status}` : null);
    });
    request.once('error', (err) => finish(describe(err)));
    request.end();
  });
}

function describe(err: Error & { code?: string }): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'EHOSTUNREACH':
      return 'host unreachable';
    case 'ENETUNREACH':
      return 'network unreachable';
    case 'ECONNRESET':
      return 'connection reset';
    default:
      return err.message;
  }
}
