import { and, asc, eq, gt, inArray, like, notInArray, or } from 'drizzle-orm';
// Imported, not the global: a test's fake timers replace the global setImmediate, and a sweep must still finish.
import { setImmediate } from 'node:timers';
import type { AuditEntry, NotificationItem, NotificationPayload, NotificationTestResult } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import {
  certificates,
  domains,
  gateways,
  httpServices,
  nodes,
  notificationAlerts,
  tcpServices,
} from '../../db/schema.js';
import type { DriftReport } from '../../dataplane/types.js';
import { clientKeyOf } from '../auth/rate-limit.js';
import { LIVE_WINDOW_MS } from '../gateways/registry.js';
import type { HealthChecker } from '../observe/health-checker.js';
import { createAddressPolicy, systemResolve, type AddressPolicy, type Resolve } from './address-guard.js';
import { createAlertTracker, type AlertTracker, type Family, type Transition } from './alerts.js';
import { enqueue, enqueueNow } from './queue.js';
import * as render from './render.js';
import { describeFailure } from './senders/http-post.js';
import { sendToChannel, type ChannelConfig } from './senders/index.js';
import { readNotificationSettings } from './settings.js';
import { isNewSignInAddress } from './sign-in-addresses.js';
import { createDeliveryWorker, DEFAULT_DELIVERY_TIMINGS, type DeliveryTimings } from './worker.js';

// Notifications (docs/api.md "Notifications"): what happened becomes a message in the delivery queue.
//
// Where each kind of news comes from, and which gateway says it (with several on one database, each once):
// - backends (the health checks), nodes (WireGuard status combined over the gateways), gateways (heartbeats): every
//   gateway observes them and debounces and groups them (alerts.ts); the holder of the `notifications` lease writes
//   what is due, re-checking the alert rows inside the write, so a message is decided once.
// - certificates: the lease holder reads the certificates table every minute (failed; CA-issued and expiring).
// - drift: each gateway its own (each has its own nginx and WireGuard), the same differences at most once an hour.
// - sign-ins from a new address, two-factor sign-in turned off, changes the data plane set aside: from the audit
//   entries this gateway records (each such entry is recorded once, by the gateway that saw it).
// The delivery worker (worker.ts) runs on the lease holder.

export interface NotifierOptions {
  timings?: Partial<DeliveryTimings>;
  /** Where messages may go; default: the address guard for this gateway (tests let their loopback receivers in). */
  addressPolicy?: AddressPolicy;
  resolve?: Resolve;
  /** How often due alerts are written (ms). */
  tickMs?: number;
  /** How often backends, nodes and gateways are read again in full, and the alert rows (ms). */
  sweepMs?: number;
  /** The backends' health as the observer checks it (tests give one they drive; app.ts passes the observer's). */
  health?: HealthChecker;
  /** CA certificates trusted instead of the system's for HTTPS and SMTP (tests' own CA). */
  ca?: string[];
}

export interface Notifier {
  start(): void;
  stop(): Promise<void>;
  sendTest(channel: ChannelConfig): Promise<NotificationTestResult>;
  /** One full round now: read everything, write what is due, deliver (tests). */
  settle(): Promise<void>;
}

type Log = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };

const CERTIFICATE_SCAN_MS = 60_000;
const DRIFT_REPEAT_MS = 3600_000;
/** Set-aside entries of one apply arrive one by one: gathered this long into one message. */
const SET_ASIDE_GATHER_MS = 1000;

const FAMILIES: Family[] = ['backend', 'node', 'gateway'];

/** What every part of the notifier shares: the app, the health checks, the clock and the worker's door bell. */
interface NotifierContext {
  deps: AppDeps;
  health: HealthChecker;
  origin: () => render.Origin;
  nowMs: () => number;
  /** A message was queued: the delivery worker looks at the queue now. */
  wake: () => void;
}

/** The operator's settings as last read (each sweep). */
interface Settings {
  graceMs: number;
  expiringDays: number;
}

// ---- Observing: backends, nodes and gateways, debounced by the grace period (alerts.ts) ---------------------------

/** Nodes read and observed per turn of the event loop in a sweep. */
const NODE_SWEEP_SLICE = 500;
/** Backends observed (and alerted ones looked up) per turn of the event loop in a sweep. */
const BACKEND_SWEEP_SLICE = 500;

/** The event loop's next turn: what waits (requests, timers) runs before a sweep's next slice. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** What this gateway has seen of backends, nodes and gateways, and which of them the alert rows say are down. */
class Observations {
  readonly tracker: AlertTracker;
  /** Nodes and gateways seen up in this process: only those are reported when they go. */
  private readonly seenUp = new Set<string>();
  /** What the last health verdict of a backend said (its error, for the message). */
  private readonly backendErrors = new Map<string, string | null>();
  private alertedByFamily = new Map<Family, Map<string, number>>();

  constructor(
    private readonly ctx: NotifierContext,
    graceMs: () => number,
  ) {
    this.tracker = createAlertTracker(graceMs);
  }

  backendError(key: string): string | null {
    return this.backendErrors.get(key) ?? null;
  }

  observeBackend(entry: {
    type: string;
    id: number;
    state: string;
    since: string | null;
    lastError: string | null;
  }): void {
    if (entry.state !== 'up' && entry.state !== 'down') return;
    const key = `backend:${entry.type}:${String(entry.id)}`;
    this.backendErrors.set(key, entry.lastError);
    const since = entry.since === null ? this.ctx.nowMs() : Date.parse(entry.since);
    this.tracker.observe({ key, family: 'backend', state: entry.state, sinceMs: since, isAlertable: true });
  }

  /** Reads the alert rows, then everything observed, again in full. */
  async sweep(): Promise<void> {
    await this.reloadAlerted();
    await this.sweepBackends();
    await this.sweepNodes();
    await this.sweepGateways();
  }

  private alertedKeys(family: Family): string[] {
    return [...(this.alertedByFamily.get(family)?.keys() ?? [])];
  }

  /** Keys of a family observed or alerted that are no longer there. */
  private goneKeys(family: Family, present: ReadonlySet<string>): string[] {
    const keys = new Set([...this.tracker.observedKeys(family), ...this.alertedKeys(family)]);
    return [...keys].filter((key) => !present.has(key));
  }

  private forget(family: Family, key: string): void {
    this.tracker.observe({ key, family, state: 'gone', sinceMs: this.ctx.nowMs(), isAlertable: false });
  }

  private async reloadAlerted(): Promise<void> {
    const rows = await this.ctx.deps.db
      .select({ key: notificationAlerts.key, since: notificationAlerts.since })
      .from(notificationAlerts)
      .all();
    const next = new Map<Family, Map<string, number>>(FAMILIES.map((family) => [family, new Map()]));
    for (const row of rows) {
      const family = row.key.split(':')[0] as Family;
      next.get(family)?.set(row.key, Date.parse(row.since));
    }
    this.alertedByFamily = next;
    for (const family of FAMILIES) this.tracker.setAlerted(family, next.get(family) ?? new Map());
  }

  private async sweepBackends(): Promise<void> {
    // A slice at a time, the event loop free in between, like the nodes: at 100,000 services one pass over every
    // backend's health held every request up (bench/README.md, sweep-stall.ts).
    const entries = await this.ctx.health.list();
    for (let start = 0; start < entries.length; start += BACKEND_SWEEP_SLICE) {
      if (start > 0) await nextTurn();
      for (const entry of entries.slice(start, start + BACKEND_SWEEP_SLICE)) this.observeBackend(entry);
    }
    // An alerted backend whose service was deleted or switched off (or its node) is forgotten without a message.
    // Asked of the database, not of the health checks: they know nothing before their first read after a boot.
    const alerted = this.alertedKeys('backend');
    if (alerted.length === 0) return;
    const served = new Set<string>();
    for (const [type, table] of [
      ['http', httpServices],
      ['tcp', tcpServices],
    ] as const) {
      const ids = alerted.filter((key) => key.startsWith(`backend:${type}:`)).map((key) => Number(key.split(':')[2]));
      // A slice of ids per statement (a dead node's thousands of services are thousands of alerted backends).
      for (let start = 0; start < ids.length; start += BACKEND_SWEEP_SLICE) {
        if (start > 0) await nextTurn();
        const rows = await this.ctx.deps.db
          .select({ id: table.id })
          .from(table)
          .innerJoin(nodes, eq(nodes.id, table.nodeId))
          .where(
            and(
              inArray(table.id, ids.slice(start, start + BACKEND_SWEEP_SLICE)),
              eq(table.enabled, true),
              or(eq(nodes.enabled, true), eq(nodes.isLocal, true)),
            ),
          )
          .all();
        for (const row of rows) served.add(`backend:${type}:${String(row.id)}`);
      }
    }
    for (const key of alerted) if (!served.has(key)) this.forget('backend', key);
  }

  private async sweepNodes(): Promise<void> {
    const { deps, nowMs } = this.ctx;
    const present = new Set<string>();
    // Read and observed a slice at a time, the event loop free in between: at 10,000 nodes one read and pass over
    // all of them held every request up for tens of milliseconds every few seconds (bench/README.md, api.ts).
    for (let after = 0; ;) {
      const rows = await deps.db
        .select({ id: nodes.id, publicKey: nodes.publicKey, enabled: nodes.enabled })
        .from(nodes)
        .where(and(eq(nodes.isLocal, false), gt(nodes.id, after)))
        .orderBy(asc(nodes.id))
        .limit(NODE_SWEEP_SLICE)
        .all();
      this.observeNodes(rows, present, nowMs());
      const last = rows.at(-1);
      if (rows.length < NODE_SWEEP_SLICE || last === undefined) break;
      after = last.id;
      await nextTurn();
    }
    for (const key of this.goneKeys('node', present)) this.forget('node', key);
  }

  private observeNodes(
    rows: readonly { id: number; publicKey: string; enabled: boolean }[],
    present: Set<string>,
    sinceMs: number,
  ): void {
    const { deps } = this.ctx;
    for (const row of rows) {
      if (!row.enabled) continue;
      const key = `node:${String(row.id)}`;
      present.add(key);
      const status = deps.dataPlane.status.get(row.publicKey);
      const isOffline = (status?.status ?? 'offline') === 'offline';
      if (!isOffline) this.seenUp.add(key);
      this.tracker.observe({
        key,
        family: 'node',
        state: isOffline ? 'down' : 'up',
        sinceMs,
        // A node that never connected is not "offline" news.
        isAlertable: this.seenUp.has(key) || (status?.latestHandshakeTimestamp ?? null) !== null,
      });
    }
  }

  private async sweepGateways(): Promise<void> {
    const { deps, nowMs } = this.ctx;
    const rows = await deps.db.select({ id: gateways.id, lastSeenAt: gateways.lastSeenAt }).from(gateways).all();
    const present = new Set<string>();
    if (rows.length > 1) {
      const newest = Math.max(...rows.map((row) => Date.parse(row.lastSeenAt)));
      for (const row of rows) {
        const key = `gateway:${String(row.id)}`;
        present.add(key);
        const isLive = row.id === deps.gateway.id || newest - Date.parse(row.lastSeenAt) <= LIVE_WINDOW_MS;
        if (isLive) this.seenUp.add(key);
        this.tracker.observe({
          key,
          family: 'gateway',
          state: isLive ? 'up' : 'down',
          sinceMs: nowMs(),
          isAlertable: this.seenUp.has(key),
        });
      }
    }
    for (const key of this.goneKeys('gateway', present)) this.forget('gateway', key);
  }
}

// ---- Writing what is due, grouped by family and direction --------------------------------------------------------

type Names = Awaited<ReturnType<typeof namesOf>>;

async function namesOf(deps: AppDeps, transitions: Transition[]) {
  const ids = (prefix: string) =>
    transitions.filter((t) => t.key.startsWith(prefix)).map((t) => Number(t.key.split(':').at(-1)));
  const services = new Map<string, { name: string; node: { id: number; name: string } }>();
  for (const [type, table] of [
    ['http', httpServices],
    ['tcp', tcpServices],
  ] as const) {
    const wanted = ids(`backend:${type}:`);
    if (wanted.length === 0) continue;
    const rows = await deps.db
      .select({ id: table.id, name: table.name, nodeId: nodes.id, nodeName: nodes.name })
      .from(table)
      .innerJoin(nodes, eq(nodes.id, table.nodeId))
      .where(inArray(table.id, wanted))
      .all();
    for (const row of rows)
      services.set(`backend:${type}:${String(row.id)}`, {
        name: row.name,
        node: { id: row.nodeId, name: row.nodeName },
      });
  }
  /** Names by transition key (`node:3` → its name) of the rows of `table` the transitions with `prefix` name. */
  const namesByKey = async (prefix: 'node:' | 'gateway:', table: typeof nodes | typeof gateways) => {
    const names = new Map<string, string>();
    const wanted = ids(prefix);
    if (wanted.length > 0)
      for (const row of await deps.db
        .select({ id: table.id, name: table.name })
        .from(table)
        .where(inArray(table.id, wanted))
        .all())
        names.set(`${prefix}${String(row.id)}`, row.name);
    return names;
  };
  return {
    services,
    nodeNames: await namesByKey('node:', nodes),
    gatewayNames: await namesByKey('gateway:', gateways),
  };
}

function itemOf(
  transition: Transition,
  names: Names,
  observations: Observations,
  downSinceMs: number | null,
): NotificationItem {
  const id = Number(transition.key.split(':').at(-1));
  const since = new Date(downSinceMs ?? transition.sinceMs).toISOString();
  const durationSeconds =
    transition.to === 'up' && downSinceMs !== null ? Math.round((transition.sinceMs - downSinceMs) / 1000) : null;
  if (transition.family === 'backend') {
    const service = names.services.get(transition.key);
    return render.item({
      subject: 'service',
      id,
      name: service?.name ?? transition.key,
      node: service?.node ?? null,
      since,
      durationSeconds,
      detail: transition.to === 'down' ? observations.backendError(transition.key) : null,
    });
  }
  const name =
    (transition.family === 'node' ? names.nodeNames : names.gatewayNames).get(transition.key) ?? transition.key;
  return render.item({ subject: transition.family, id, name, since, durationSeconds });
}

async function checkedByNode(health: HealthChecker): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const entry of await health.list())
    if (entry.state !== 'unknown') counts.set(entry.nodeId, (counts.get(entry.nodeId) ?? 0) + 1);
  return counts;
}

/** The items of one write, by family: gone down, and come back. */
class Groups {
  private readonly downs = new Map<Family, NotificationItem[]>();
  private readonly ups = new Map<Family, NotificationItem[]>();

  add(direction: 'down' | 'up', family: Family, item: NotificationItem): void {
    const groups = direction === 'down' ? this.downs : this.ups;
    groups.set(family, [...(groups.get(family) ?? []), item]);
  }

  payloads(o: render.Origin, totals: { checkedByNode: Map<number, number> }): NotificationPayload[] {
    const payloads: NotificationPayload[] = [];
    const down = (family: Family) => this.downs.get(family) ?? [];
    const up = (family: Family) => this.ups.get(family) ?? [];
    if (down('backend').length > 0) payloads.push(render.backendsDown(o, down('backend'), totals));
    if (up('backend').length > 0) payloads.push(render.backendsUp(o, up('backend')));
    if (down('node').length > 0) payloads.push(render.nodesOffline(o, down('node')));
    if (up('node').length > 0) payloads.push(render.nodesOnline(o, up('node')));
    if (down('gateway').length > 0) payloads.push(render.gatewaysGone(o, down('gateway')));
    if (up('gateway').length > 0) payloads.push(render.gatewaysBack(o, up('gateway')));
    return payloads;
  }
}

/** On the lease holder: writes the due transitions as alert rows and queues their messages, in one transaction. */
async function writeDue(ctx: NotifierContext, observations: Observations): Promise<void> {
  const { deps } = ctx;
  const { tracker } = observations;
  const due = tracker.due(ctx.nowMs());
  if (due.length === 0 || !deps.leases.holds('notifications')) return;
  const names = await namesOf(deps, due);
  const totals = { checkedByNode: await checkedByNode(ctx.health) };
  const at = deps.now();
  const written = await deps.db.write(async (tx) => {
    const groups = new Groups();
    const changes: { key: string; since: number | null }[] = [];
    for (const transition of due) {
      // Decided again under the write lock: another gateway may have written it since this one last read.
      const row = await tx.select().from(notificationAlerts).where(eq(notificationAlerts.key, transition.key)).get();
      if (transition.to === 'down') {
        if (row) {
          changes.push({ key: transition.key, since: Date.parse(row.since) });
          continue;
        }
        const since = new Date(transition.sinceMs).toISOString();
        await tx.insert(notificationAlerts).values({ key: transition.key, since, createdAt: at.toISOString() }).run();
        changes.push({ key: transition.key, since: transition.sinceMs });
        groups.add('down', transition.family, itemOf(transition, names, observations, null));
        continue;
      }
      changes.push({ key: transition.key, since: null });
      if (!row) continue;
      await tx.delete(notificationAlerts).where(eq(notificationAlerts.key, transition.key)).run();
      if (transition.to === 'up')
        groups.add('up', transition.family, itemOf(transition, names, observations, Date.parse(row.since)));
    }
    const queued = await enqueue(tx, groups.payloads(ctx.origin(), totals), at.getTime());
    return { changes, queued };
  });
  for (const change of written.changes) tracker.markAlerted(change.key, change.since);
  if (written.queued > 0) ctx.wake();
}

// ---- Certificates -------------------------------------------------------------------------------------------------

/** On the lease holder, once a minute: failed certificates, and CA-issued ones expiring within the setting's days. */
class CertificateScanner {
  private scannedAt = 0;

  constructor(
    private readonly ctx: NotifierContext,
    private readonly settings: Settings,
  ) {}

  /** The next scan reads the table whatever the time (settle(), a lease just taken). */
  scanNextTime(): void {
    this.scannedAt = 0;
  }

  async scan(): Promise<void> {
    const { deps, nowMs } = this.ctx;
    if (!deps.leases.holds('notifications')) return;
    const now = nowMs();
    if (now - this.scannedAt < CERTIFICATE_SCAN_MS) return;
    this.scannedAt = now;
    const rows = await deps.db
      .select({
        id: domains.id,
        domain: domains.domain,
        state: certificates.state,
        notAfter: certificates.notAfter,
        error: certificates.error,
        nextAttemptAt: certificates.nextAttemptAt,
      })
      .from(certificates)
      .innerJoin(domains, eq(domains.id, certificates.domainId))
      .all();
    const failing = rows.filter((row) => row.state === 'failed');
    const expiring = rows.filter(
      (row) =>
        row.state === 'valid' &&
        row.notAfter !== null &&
        Date.parse(row.notAfter) < now + this.settings.expiringDays * 86_400_000,
    );
    const at = deps.now().toISOString();
    const queued = await deps.db.write((tx) => this.write(tx, at, failing, expiring));
    if (queued > 0) this.ctx.wake();
  }

  private async write(
    tx: Tx,
    at: string,
    failing: { id: number; domain: string; error: string | null; nextAttemptAt: string | null }[],
    expiring: { id: number; domain: string; notAfter: string | null }[],
  ): Promise<number> {
    const failedItems: NotificationItem[] = [];
    const expiringItems: NotificationItem[] = [];
    const known = new Map(
      (await tx.select().from(notificationAlerts).where(like(notificationAlerts.key, 'certificate%')).all()).map(
        (row) => [row.key, row],
      ),
    );
    for (const row of failing) {
      const key = `certificate:${String(row.id)}`;
      if (known.has(key)) continue;
      await tx.insert(notificationAlerts).values({ key, since: at, createdAt: at }).run();
      const next = row.nextAttemptAt ? `; the next attempt is at ${render.formatTime(row.nextAttemptAt)}` : '';
      failedItems.push(
        render.item({
          subject: 'domain',
          id: row.id,
          name: row.domain,
          since: at,
          detail: `${row.error ?? 'failed'}${next}`,
        }),
      );
    }
    for (const row of expiring) {
      const key = `certificate-expiring:${String(row.id)}`;
      const notAfter = row.notAfter ?? '';
      if (known.get(key)?.since === notAfter) continue;
      await tx
        .insert(notificationAlerts)
        .values({ key, since: notAfter, createdAt: at })
        .onConflictDoUpdate({ target: notificationAlerts.key, set: { since: notAfter } })
        .run();
      expiringItems.push(render.item({ subject: 'domain', id: row.id, name: row.domain, since: notAfter }));
    }
    // Renewed, deleted or no longer failing: forgotten, so the next failure is news again.
    const current = [
      ...failing.map((row) => `certificate:${String(row.id)}`),
      ...expiring.map((row) => `certificate-expiring:${String(row.id)}`),
    ];
    await tx
      .delete(notificationAlerts)
      .where(
        and(
          like(notificationAlerts.key, 'certificate%'),
          current.length > 0 ? notInArray(notificationAlerts.key, current) : undefined,
        ),
      )
      .run();
    const o = this.ctx.origin();
    const payloads = [
      ...(failedItems.length > 0 ? [render.certificatesFailed(o, failedItems)] : []),
      ...(expiringItems.length > 0 ? [render.certificatesExpiring(o, expiringItems)] : []),
    ];
    return await enqueue(tx, payloads, this.ctx.nowMs());
  }
}

// ---- News from this gateway alone ---------------------------------------------------------------------------------

/** Drift, set-aside changes and sign-in news: queued at once by the gateway that saw them. */
class LocalNews {
  /** Messages being queued from events (awaited by settle()). */
  private readonly queueing = new Set<Promise<void>>();
  /** When each drift report (by its differences) was last sent: the same one is sent at most once an hour. */
  private readonly driftSent = new Map<string, number>();
  private setAside: NotificationItem[] = [];
  private setAsideTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: NotifierContext,
    private readonly warn: (what: string) => (err: unknown) => void,
  ) {}

  track(work: Promise<void>): void {
    const tracked = work.finally(() => this.queueing.delete(tracked));
    this.queueing.add(tracked);
  }

  /** Resolved when every message being queued is. */
  async queued(): Promise<void> {
    await Promise.all([...this.queueing]);
  }

  /** Queues the set-aside changes gathered so far now (settle()). */
  flushNow(): void {
    if (!this.setAsideTimer) return;
    clearTimeout(this.setAsideTimer);
    this.flushSetAside();
  }

  stop(): void {
    if (this.setAsideTimer) clearTimeout(this.setAsideTimer);
  }

  onDrift(report: DriftReport): void {
    const { nowMs } = this.ctx;
    if (report.differences.length === 0) return;
    const signature = `${String(report.repaired)}\n${[...report.differences].sort().join('\n')}`;
    const last = this.driftSent.get(signature);
    if (last !== undefined && nowMs() - last < DRIFT_REPEAT_MS) return;
    this.driftSent.set(signature, nowMs());
    for (const [key, at] of this.driftSent) if (nowMs() - at >= DRIFT_REPEAT_MS) this.driftSent.delete(key);
    this.queueNow([render.driftFound(this.ctx.origin(), report.differences, report.repaired)]);
  }

  async onAuditEntry(entry: AuditEntry): Promise<void> {
    const origin = () => this.ctx.origin();
    switch (entry.action) {
      case 'dataplane.rejected': {
        const target = entry.target;
        this.setAside.push(
          render.item({
            subject: target?.type === 'node' ? 'node' : 'service',
            id: target?.id ?? null,
            name: target?.name ?? 'a row',
            detail: entry.detail,
          }),
        );
        this.setAsideTimer ??= setTimeout(() => {
          this.flushSetAside();
        }, SET_ASIDE_GATHER_MS);
        return;
      }
      case 'auth.sign-in': {
        const name = entry.actor.name;
        if (!name || !entry.address) return;
        if (!(await isNewSignInAddress(this.ctx.deps.db, name, entry.address, entry.id))) return;
        this.queueNow([render.newSignInAddress(origin(), name, clientKeyOf(entry.address), entry.detail)]);
        return;
      }
      case 'auth.two-factor-disabled':
        this.queueNow([render.twoFactorDisabled(origin(), entry.actor.name ?? 'admin', entry.address)]);
        return;
    }
  }

  private flushSetAside(): void {
    this.setAsideTimer = null;
    const items = this.setAside;
    this.setAside = [];
    if (items.length > 0) this.queueNow([render.changesSetAside(this.ctx.origin(), items)]);
  }

  private queueNow(payloads: NotificationPayload[]): void {
    this.track(
      enqueueNow(this.ctx.deps.db, payloads, this.ctx.nowMs()).then((queued) => {
        if (queued > 0) this.ctx.wake();
      }, this.warn('could not queue a message')),
    );
  }
}

// ---- The notifier: the parts above on one rhythm ------------------------------------------------------------------

export function createNotifier(
  deps: AppDeps,
  health: HealthChecker,
  log: Log,
  options: NotifierOptions = {},
): Notifier {
  const timings = { ...DEFAULT_DELIVERY_TIMINGS, ...options.timings };
  const policy = options.addressPolicy ?? createAddressPolicy({ vpnSubnet: deps.config.vpnSubnet });
  const resolve = options.resolve ?? systemResolve;
  const outbound = () => ({
    policy,
    resolve,
    timeoutMs: timings.sendTimeoutMs,
    heloName: deps.config.publicHost,
    ca: options.ca,
  });
  const worker = createDeliveryWorker(deps, outbound, timings, log);
  const consoleUrl = `https://${deps.config.publicHost}${deps.config.httpsPort === 443 ? '' : `:${String(deps.config.httpsPort)}`}/`;
  const ctx: NotifierContext = {
    deps,
    health,
    origin: () => ({ gateway: deps.gateway.name, consoleUrl, now: deps.now() }),
    nowMs: () => deps.now().getTime(),
    wake: () => {
      worker.wake();
    },
  };
  const warn = (what: string) => (err: unknown) => log.warn({ err }, `notifications: ${what}`);

  const settings: Settings = { graceMs: 60_000, expiringDays: 14 };
  const observations = new Observations(ctx, () => settings.graceMs);
  const scanner = new CertificateScanner(ctx, settings);
  const news = new LocalNews(ctx, warn);
  const stops: (() => void)[] = [];
  const timers: NodeJS.Timeout[] = [];
  let busy: Promise<void> | null = null;
  let sweptAt = 0;

  async function readSettings(): Promise<void> {
    const read = await readNotificationSettings(deps.db);
    settings.graceMs = read.graceSeconds * 1000;
    settings.expiringDays = read.certificateExpiringDays;
  }

  async function round(force: boolean): Promise<void> {
    const sweepMs = options.sweepMs ?? 5000;
    if (force || ctx.nowMs() - sweptAt >= sweepMs) {
      sweptAt = ctx.nowMs();
      await readSettings();
      await observations.sweep();
    }
    await writeDue(ctx, observations);
    if (force) scanner.scanNextTime();
    await scanner.scan();
  }

  function tick(): void {
    busy ??= round(false)
      .catch(warn('could not decide what to send; retried'))
      .finally(() => {
        busy = null;
      });
  }

  return {
    start() {
      stops.push(
        health.onHealthChange(({ health: entry }) => {
          observations.observeBackend(entry);
        }),
        deps.dataPlane.onDrift((report) => {
          news.onDrift(report);
        }),
        deps.audit.subscribe((entry) => {
          news.track(news.onAuditEntry(entry).catch(warn('could not read an audit entry')));
        }),
        // The gateway that takes the lease over reads every alert row at once and writes what is due.
        deps.leases.onChange((name, held) => {
          if (name === 'notifications' && held) {
            sweptAt = 0;
            scanner.scanNextTime();
          }
        }),
      );
      timers.push(setInterval(tick, options.tickMs ?? 1000));
      for (const timer of timers) timer.unref();
      worker.start();
      tick();
    },
    async stop() {
      for (const stop of stops.splice(0)) stop();
      for (const timer of timers.splice(0)) clearInterval(timer);
      news.stop();
      await busy;
      await worker.stop();
    },
    async sendTest(channel) {
      try {
        const message = await sendToChannel(channel, render.testMessage(ctx.origin(), channel.name), {
          ...outbound(),
          deliveryId: 0,
          nowSeconds: Math.floor(ctx.nowMs() / 1000),
        });
        return { ok: true, message };
      } catch (error) {
        return { ok: false, message: `The test message was not delivered: ${describeFailure(error)}` };
      }
    },
    async settle() {
      await busy;
      await news.queued();
      news.flushNow();
      await round(true);
      await news.queued();
      await worker.runOnce();
    },
  };
}
