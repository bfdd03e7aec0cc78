import { createLogHub } from './logs/hub.js';
import type { WantedInstance } from './nginx/stream-instances.js';
import type { NginxRenderOptions } from './nginx/options.js';
import { planDataPlane, planDataPlaneSliced, planScoped } from './plan.js';
import { withoutServices } from './nginx/routes.js';
import { createReconciler, type ProxyAdapter, type Reconciler } from './reconciler.js';
import { createSupervisor, type SupervisedProxy } from './supervisor.js';
import { createGatewayReach } from './reach.js';
import { createNetworkGuard, type GuardedState } from './reconcile/network-guard.js';
import { NO_ROOM } from './reconcile/problems.js';
import {
  type ApplyScope,
  type CertificateAdapter,
  type CertificateInfo,
  type DataPlane,
  type DesiredDomain,
  type DesiredPeer,
  type DesiredState,
  type DictionaryUsage,
  type DriftReport,
  type LogLine,
  type TrafficCounters,
  type NodeStatus,
  type NodeStatusSource,
  type ScopedState,
  type WgPeerStatus,
  type WireGuardAdapter,
} from './types.js';
import { streamKey } from '../model/desired-state.js';
import type { ChallengeStore } from './certs/acme.js';
import { emptyAccessTable, type AccessTable } from './nginx/access-table.js';

// The data plane with its I/O switched off: the real reconciler, planner, renderers and validators, in front of
// adapters that only remember what they were told. `POSTERN_DATAPLANE=off` runs it (the control plane without root),
// and API tests inspect it, so every value a test stores goes through the same code that feeds nginx.

export class RecordingWireGuard implements WireGuardAdapter {
  gateway: DesiredState['gateway'] | null = null;
  peers: DesiredPeer[] = [];
  statuses: WgPeerStatus[] = [];
  /** Node id → why its route cannot be added, as the real driver reports it. */
  readonly routeFailures = new Map<number, string>();
  closed = false;

  ensureInterface(gateway: DesiredState['gateway']): Promise<void> {
    this.gateway = gateway;
    return Promise.resolve();
  }

  syncPeers(peers: DesiredPeer[]): Promise<Map<number, string>> {
    this.peers = peers;
    this.peerSyncs++;
    return Promise.resolve(
      new Map([...this.routeFailures].filter(([nodeId]) => peers.some((p) => p.nodeId === nodeId))),
    );
  }

  /** Full peer syncs, and each scoped patch: the nodes whose peers it set or removed (what a change cost WireGuard). */
  peerSyncs = 0;
  readonly peerPatches: number[][] = [];

  patchPeers(peers: readonly DesiredPeer[], nodeIds: readonly number[]): Promise<Map<number, string> | null> {
    if (this.gateway === null) return Promise.resolve(null);
    const ids = new Set(nodeIds);
    const mine = peers.filter((peer) => ids.has(peer.nodeId));
    this.peerPatches.push([...ids].sort((a, b) => a - b));
    this.peers = [...this.peers.filter((peer) => !ids.has(peer.nodeId)), ...mine].sort((a, b) => a.nodeId - b.nodeId);
    return Promise.resolve(
      new Map([...this.routeFailures].filter(([nodeId]) => mine.some((p) => p.nodeId === nodeId))),
    );
  }

  dump(): Promise<WgPeerStatus[]> {
    return Promise.resolve(this.statuses);
  }

  heal(): Promise<boolean> {
    return Promise.resolve(false);
  }

  /** What the real driver's drift check would find: peers that differ from `peers` (set by hand in a test, say). */
  drift(peers: DesiredPeer[]): Promise<string[]> {
    const held = new Map(this.peers.map((peer) => [peer.publicKey, [...peer.allowedIps].sort().join(',')]));
    const differences: string[] = [];
    for (const peer of peers) {
      const allowed = held.get(peer.publicKey);
      if (allowed === undefined) differences.push(`WireGuard lacks the peer of node ${peer.nodeId}`);
      else if (allowed !== [...peer.allowedIps].sort().join(','))
        differences.push(`WireGuard routes other addresses to node ${peer.nodeId} than the database says`);
    }
    const wanted = new Set(peers.map((peer) => peer.publicKey));
    for (const key of held.keys())
      if (!wanted.has(key)) differences.push(`WireGuard has a peer the database does not know (${key.slice(0, 8)}…)`);
    return Promise.resolve(differences);
  }

  forget(): void {
    // Nothing is cached: every sync records the whole peer set.
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

export class RecordingProxy implements ProxyAdapter, SupervisedProxy {
  /** Routes nginx would hold, by host. */
  routes = new Map<string, string>();
  /** TCP/UDP instances that would run, by key (`tcp-30000`). */
  streams = new Map<string, WantedInstance>();
  readonly certificates = new Set<string>();
  /** Instance key → why it would not start (a port another program holds, say). */
  readonly streamFailures = new Map<string, string>();
  /** HTTP-01 answers nginx would serve, by token (what the database holds for every gateway). */
  challenges = new Map<string, string>();
  /** What nginx's access module would hold: policy refs → JSON, the key, revoked sessions (docs/ACCESS.md). */
  access = emptyAccessTable();
  /** Each access push, in order: 'sync' before the routes, 'prune' after them. */
  readonly accessPushes: ('sync' | 'prune')[] = [];
  cutChecks = 0;
  /** Full route syncs, and each scoped push: the hosts it set and deleted (what a change cost nginx). */
  routeSyncs = 0;
  readonly patches: { set: string[]; del: string[] }[] = [];

  syncAccess(table: AccessTable): Promise<void> {
    this.accessPushes.push('sync');
    this.access = { ...table, entries: new Map([...this.access.entries, ...table.entries]) };
    return Promise.resolve();
  }

  pruneAccess(table: AccessTable): Promise<void> {
    this.accessPushes.push('prune');
    this.access = { ...table, entries: new Map(table.entries) };
    return Promise.resolve();
  }

  syncChallenges(answers: ReadonlyMap<string, string>): Promise<void> {
    this.challenges = new Map(answers);
    return Promise.resolve();
  }

  /**
   * Hosts nginx would have no room for: a push that adds or changes their routes is refused, and the services it
   * adds or changes are left out, as the real proxy does with a full dictionary.
   */
  readonly noRoomFor = new Set<string>();

  syncRoutes(hosts: ReadonlyMap<string, string>): Promise<ReadonlyMap<number, string>> {
    const left = new Map<number, string>();
    for (const [host, json] of hosts) {
      if (!this.noRoomFor.has(host) || this.routes.get(host) === json) continue;
      const before = new Set(
        (JSON.parse(this.routes.get(host) ?? '[]') as object[]).map((route) => JSON.stringify(route)),
      );
      for (const route of JSON.parse(json) as { s: number }[])
        if (!before.has(JSON.stringify(route)))
          left.set(route.s, `${NO_ROOM}this service's routes: its routes dictionary is full.`);
    }
    this.routes = withoutServices(hosts, left);
    this.crowded = [...left.keys()];
    this.routeSyncs++;
    return Promise.resolve(left);
  }

  /** As the real proxy: a host without room, or services set aside, leave it to a full sync. */
  patchRoutes(entries: ReadonlyMap<string, string>, hosts: readonly string[]): Promise<boolean> {
    if (this.crowded.length > 0 || hosts.some((host) => this.noRoomFor.has(host))) return Promise.resolve(false);
    const patch = { set: [] as string[], del: [] as string[] };
    for (const host of hosts) {
      const json = entries.get(host);
      if (json === undefined) {
        if (this.routes.delete(host)) patch.del.push(host);
      } else if (this.routes.get(host) !== json) {
        this.routes.set(host, json);
        patch.set.push(host);
      }
    }
    this.patches.push(patch);
    return Promise.resolve(true);
  }

  publishCertificates(names: readonly string[]): Promise<string[]> {
    for (const name of names) this.certificates.add(name);
    return Promise.resolve([]);
  }

  unpublishCertificates(names: readonly string[]): Promise<void> {
    for (const name of names) this.certificates.delete(name);
    return Promise.resolve();
  }

  /** Full stream syncs, and each scoped one: the instances it started (or replaced) and stopped. */
  streamSyncs = 0;
  readonly streamPatches: { started: string[]; stopped: string[] }[] = [];

  syncStreams(wanted: ReadonlyMap<string, WantedInstance>): Promise<Map<string, string>> {
    this.streams = new Map([...wanted].filter(([key]) => !this.streamFailures.has(key)));
    this.streamSyncs++;
    return Promise.resolve(new Map([...this.streamFailures].filter(([key]) => wanted.has(key))));
  }

  patchStreams(wanted: ReadonlyMap<string, WantedInstance>, keys: readonly string[]): Promise<Map<string, string>> {
    const patch = { started: [] as string[], stopped: [] as string[] };
    const failures = new Map<string, string>();
    for (const key of keys) {
      const want = wanted.get(key);
      const failure = this.streamFailures.get(key);
      if (want !== undefined && failure !== undefined) failures.set(key, failure);
      if (want === undefined || failure !== undefined) {
        if (this.streams.delete(key)) patch.stopped.push(key);
      } else if (this.streams.get(key)?.conf !== want.conf) {
        this.streams.set(key, want);
        patch.started.push(key);
      }
    }
    this.streamPatches.push(patch);
    return Promise.resolve(failures);
  }

  /** The services each scoped cut looked at (a full cut: null). */
  readonly cutScopes: (number[] | null)[] = [];

  /** The revisions the last full cut kept (a service not in them, or served otherwise, would be cut). */
  lastFullCut: ReadonlyMap<number, string> | null = null;

  cutStale(revisions: ReadonlyMap<number, string>, only?: ReadonlySet<number>): Promise<number> {
    this.cutChecks++;
    if (!only) this.lastFullCut = revisions;
    this.cutScopes.push(only ? [...only].sort((a, b) => a - b) : null);
    return Promise.resolve(0);
  }

  /** What died and was restarted, as the next heal() reports it (a test sets it). */
  nextHeal: { http: boolean; streams: string[] } = { http: false, streams: [] };
  /** forget() calls (after drift, the real proxy reads back what nginx holds). */
  forgotten = 0;

  heal(): Promise<{ http: boolean; streams: string[] }> {
    const restored = this.nextHeal;
    this.nextHeal = { http: false, streams: [] };
    return Promise.resolve(restored);
  }

  /** What the real proxy's drift check would find in what this one recorded (the routes and instances). */
  drift(
    routes: ReadonlyMap<string, string>,
    _certNames: readonly string[],
    streams: ReadonlyMap<string, WantedInstance>,
  ) {
    const differences: string[] = [];
    const served = withoutServices(routes, new Set(this.crowded));
    for (const [host, json] of served) {
      const held = this.routes.get(host);
      if (held === undefined) differences.push(`nginx lacks the routes of ${host || 'services without a domain'}`);
      else if (held !== json) differences.push(`nginx serves other routes for ${host} than the database says`);
    }
    for (const host of this.routes.keys())
      if (!served.has(host)) differences.push(`nginx routes ${host}, which the database does not`);
    for (const key of streams.keys())
      if (!this.streams.has(key) && !this.streamFailures.has(key))
        differences.push(`the instance of ${key} is not running`);
    return Promise.resolve(differences);
  }

  /** Services left out at the last route sync for lack of room. */
  private crowded: number[] = [];

  crowdedServices(): number[] {
    return [...this.crowded];
  }

  forget(): void {
    this.forgotten++;
  }
}

export class RecordingCertificates implements CertificateAdapter {
  readonly infos = new Map<string, CertificateInfo>();
  /** Every ensure() call, in order: "domain:ssl". */
  readonly ensured: string[] = [];
  /** Domain → fingerprint of the stored certificate it was last ensured with (the one the real manager loads). */
  readonly loaded = new Map<string, string | null>();

  ensure(domain: DesiredDomain): Promise<CertificateInfo> {
    this.ensured.push(`${domain.domain}:${domain.ssl}`);
    this.loaded.set(domain.domain, domain.pemFingerprint ?? null);
    const info: CertificateInfo = this.infos.get(domain.domain) ?? {
      state: domain.ssl === 'self-signed' ? 'self-signed' : 'pending',
      issuer: `CN=${domain.domain}`,
      notBefore: '2026-01-01T00:00:00.000Z',
      notAfter: '2028-01-01T00:00:00.000Z',
      fingerprint: 'AA:BB',
      error: null,
    };
    this.infos.set(domain.domain, info);
    return Promise.resolve(info);
  }

  remove(domain: string): Promise<void> {
    this.infos.delete(domain);
    return Promise.resolve();
  }

  async pruneExcept(keep: readonly string[], onDisk?: readonly string[]): Promise<string[]> {
    const wanted = new Set(keep);
    const stale = new Set([...(onDisk ?? (await this.listPems())), ...this.infos.keys()]);
    const removed = [...stale].filter((name) => !wanted.has(name));
    for (const name of removed) this.infos.delete(name);
    return removed;
  }

  /** The certificates it holds stand for the PEMs on disk. */
  listPems(): Promise<string[]> {
    return Promise.resolve([...this.infos.keys()]);
  }

  info(domain: string): CertificateInfo | null {
    return this.infos.get(domain) ?? null;
  }
}

export class SettableNodeStatus implements NodeStatusSource {
  private readonly statuses = new Map<string, NodeStatus>();
  private readonly listeners = new Set<(keys: string[]) => void>();

  get(publicKey: string): NodeStatus | undefined {
    return this.statuses.get(publicKey);
  }

  onChange(listener: (changedPublicKeys: string[]) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Set (or with `undefined` forget) a peer's status and notify listeners, like one poll would. */
  setStatus(publicKey: string, status: NodeStatus | undefined): void {
    if (status === undefined) this.statuses.delete(publicKey);
    else this.statuses.set(publicKey, status);
    for (const listener of this.listeners) listener([publicKey]);
  }
}

export class MemoryChallenges implements ChallengeStore {
  readonly answers = new Map<string, string>();

  set(token: string, answer: string): Promise<void> {
    this.answers.set(token, answer);
    return Promise.resolve();
  }

  remove(token: string): Promise<void> {
    this.answers.delete(token);
    return Promise.resolve();
  }
}

export interface OfflineDataPlane extends DataPlane {
  readonly wireguard: RecordingWireGuard;
  readonly proxy: RecordingProxy;
  readonly certs: RecordingCertificates;
  readonly status: SettableNodeStatus;
  readonly challenges: MemoryChallenges;
  /** Completed apply() runs (coalesced calls count once). */
  readonly applyCount: number;
  /** Desired state read by the last apply, null before the first. */
  readonly lastState: DesiredState | null;
  readonly started: boolean;
  /** The next apply fails as a whole (as when nginx or the tunnel is down) with this message. */
  failNextApply(message: string): void;
  /** Lines as the log tailer would publish them (delivered at once, no batching). */
  pushLogLines(lines: LogLine[]): void;
  /** What hostNetworks() answers from now on (default: none). */
  setHostNetworks(networks: string[]): void;
  /** What host names resolve to from now on (default: nothing resolves; no test asks a real DNS server). */
  setNames(names: Record<string, string[]>): void;
  /** What traffic() answers from now on (default: no traffic). */
  setTraffic(counters: TrafficCounters): void;
  /** Reports a drift check with these differences, as the real data plane would after one. */
  reportDrift(report: DriftReport): void;
  /** One pass of the heal loop (the supervisor's, as the real data plane runs it every second). */
  healOnce(): Promise<void>;
  /** What dictionaries() answers from now on (default null: no nginx to ask). */
  setDictionaries(usage: DictionaryUsage[] | null): void;
}

/**
 * What the offline data plane needs to re-check the subnets nodes' tokens set (the real one's network guard): the
 * gateway's settings. Names resolve only through `setNames` (no DNS: tests never leave the machine).
 */
export interface OfflineNetworkOptions {
  vpnSubnet: string;
  minPrefix: number;
  /** POSTERN_RESOLVERS as given; unset: none (the host's /etc/resolv.conf is not read). */
  resolvers?: readonly string[] | undefined;
  databaseHost?: string | undefined;
  acmeDirectoryUrl?: string | undefined;
}

/** What a test sets about the host the offline data plane pretends to run on. */
class OfflineHost {
  hostNetworks: string[] = [];
  names = new Map<string, string[]>();
  traffic: TrafficCounters = { httpEpoch: 'offline', streamEpoch: 'offline', http: new Map(), tcp: new Map() };
  dictionaries: DictionaryUsage[] | null = null;
  /** The message the next apply fails with as a whole, once. */
  nextFailure: string | null = null;
  applyCount = 0;
  lastState: DesiredState | null = null;
  started = false;
}

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function createOfflineReach(host: OfflineHost, network: OfflineNetworkOptions | undefined) {
  return createGatewayReach({
    resolvers: network?.resolvers ?? [],
    databaseHost: network?.databaseHost,
    acmeDirectoryUrl: network?.acmeDirectoryUrl,
    staticHosts: () => OFFLINE_STATIC_HOSTS,
    lookup: (name) => Promise.resolve(host.names.get(name) ?? []),
    // Answers follow setNames at once.
    ttlMs: 0,
  });
}

const OFFLINE_STATIC_HOSTS: ReadonlyMap<string, string> = new Map([['localhost', '127.0.0.1']]);

/** The desired state a full read would give after a scoped one: the scope's hosts' rows replaced by those read. */
export function withScoped(state: DesiredState, scoped: ScopedState): DesiredState {
  const hosts = new Set(scoped.hosts);
  const http = [...state.http.filter((route) => !hosts.has(route.domain ?? '')), ...scoped.http];
  const domains = [...state.domains.filter((d) => !hosts.has(d.domain)), ...scoped.domains];
  const keys = new Set(scoped.streams ?? []);
  const nodes = new Set(scoped.nodes ?? []);
  const peers = [...state.peers.filter((peer) => !nodes.has(peer.nodeId)), ...(scoped.peers ?? [])];
  const stream = [
    ...state.stream.filter((route) => !keys.has(streamKey(route.proto, route.port))),
    ...(scoped.stream ?? []),
  ];
  return {
    ...state,
    peers: peers.sort((a, b) => a.nodeId - b.nodeId),
    http: http.sort((a, b) => a.serviceId - b.serviceId),
    stream: stream.sort((a, b) => a.serviceId - b.serviceId),
    domains: domains.sort((a, b) => a.domainId - b.domainId),
    ...(scoped.access ? { access: scoped.access } : {}),
  };
}

/** Scoped reads as the real data plane has them, counted and merged into `lastState` like full ones. */
function countedScopedReads(host: OfflineHost, read: ((scope: ApplyScope) => Promise<ScopedState>) | undefined) {
  if (read === undefined) return undefined;
  return async (scope: ApplyScope) => {
    host.applyCount++;
    const scoped = await read(scope);
    if (host.lastState !== null) host.lastState = withScoped(host.lastState, scoped);
    return scoped;
  };
}

/**
 * The real reconciler and planner in front of recording adapters: what the offline data plane runs, and what the
 * reconciler's and supervisor's tests drive directly. With `loadScopedState`, a change's scope is planned alone
 * (scoped runs); without, every apply reads everything.
 */
export function createRecordingReconciler(options: {
  loadDesiredState: () => Promise<DesiredState>;
  loadScopedState?: ((scope: ApplyScope) => Promise<ScopedState>) | undefined;
  render: NginxRenderOptions;
  guardNetworks?: (state: DesiredState) => Promise<GuardedState>;
}) {
  const wireguard = new RecordingWireGuard();
  const proxy = new RecordingProxy();
  const certs = new RecordingCertificates();
  const plan = (state: DesiredState) => planDataPlane(state, options.render, OFFLINE_STATIC_HOSTS);
  const read = options.loadScopedState;
  const reconciler = createReconciler({
    loadDesiredState: options.loadDesiredState,
    ...(options.guardNetworks ? { guardNetworks: options.guardNetworks } : {}),
    // As the real data plane plans a full run: in slices (`plan`, the same plan in one turn, is the tests').
    plan: (state: DesiredState) => planDataPlaneSliced(state, options.render, OFFLINE_STATIC_HOSTS),
    ...(read
      ? {
          loadScopedState: read,
          planScoped: (scoped: ScopedState) => planScoped(scoped, options.render, OFFLINE_STATIC_HOSTS),
        }
      : {}),
    wireguard,
    proxy,
    certs,
    logger: silent,
  });
  return { reconciler, plan, wireguard, proxy, certs };
}

export function createOfflineDataPlane(options: {
  loadDesiredState: () => Promise<DesiredState>;
  /** The rows of a change's scope; absent: every apply reads everything. */
  loadScopedState?: (scope: ApplyScope) => Promise<ScopedState>;
  render: NginxRenderOptions;
  /** Absent: no subnet is re-checked on apply, and no setting counts as reached. */
  network?: OfflineNetworkOptions;
}): OfflineDataPlane {
  const status = new SettableNodeStatus();
  const host = new OfflineHost();
  const logs = createLogHub({ batchMs: 0 });
  const reach = createOfflineReach(host, options.network);
  const network = options.network;
  const guardNetworks =
    network === undefined
      ? async (state: DesiredState): Promise<GuardedState> => Promise.resolve({ state, rejected: new Map() })
      : createNetworkGuard({
          vpnSubnet: network.vpnSubnet,
          minPrefix: network.minPrefix,
          hostNetworks: () => Promise.resolve([...host.hostNetworks]),
          underlayOf: (publicKey) => status.get(publicKey)?.clientIp ?? null,
          reach,
        });
  const { reconciler, wireguard, proxy, certs } = createRecordingReconciler({
    loadDesiredState: async () => {
      host.applyCount++;
      host.lastState = await options.loadDesiredState();
      return host.lastState;
    },
    loadScopedState: countedScopedReads(host, options.loadScopedState),
    render: options.render,
    guardNetworks,
  });
  // A failure a test asks for is the reconciler's result: the supervisor treats it as the real one's.
  const failing: Reconciler = {
    async apply(scope) {
      const message = host.nextFailure;
      host.nextFailure = null;
      const applied = await reconciler.apply(scope);
      return message === null ? applied : { ...applied, ok: false, message };
    },
    forgetApplied: () => reconciler.forgetApplied(),
  };
  const supervisor = createSupervisor({
    reconciler: failing,
    loadPlanned: async () => {
      const { state } = await guardNetworks(await options.loadDesiredState());
      return { state, plan: await planDataPlaneSliced(state, options.render, OFFLINE_STATIC_HOSTS) };
    },
    proxy,
    wireguard,
    isShared: false,
    logger: silent,
  });

  return {
    wireguard,
    proxy,
    certs,
    status,
    logs,
    challenges: new MemoryChallenges(),
    get applyCount() {
      return host.applyCount;
    },
    get lastState() {
      return host.lastState;
    },
    get started() {
      return host.started;
    },
    certificates: { info: (domain) => certs.info(domain) },
    async start() {
      host.started = true;
      supervisor.start();
      await supervisor.rebuild();
    },
    async stop() {
      host.started = false;
      supervisor.stop();
      logs.close();
      await wireguard.close();
    },
    apply: (scope) => supervisor.apply(scope),
    healOnce: () => supervisor.healOnce(),
    traffic: () => Promise.resolve(host.traffic),
    dictionaries: () => Promise.resolve(host.dictionaries),
    setDictionaries: (usage) => {
      host.dictionaries = usage;
    },
    setTraffic: (counters) => {
      host.traffic = counters;
    },
    checkDrift: () => supervisor.checkDrift(),
    lastDrift: () => supervisor.lastDrift(),
    booted: () => Promise.resolve(),
    onDrift: (listener) => supervisor.onDrift(listener),
    reportDrift: (report) => supervisor.publishDrift(report),
    failNextApply: (message) => {
      host.nextFailure = message;
    },
    pushLogLines: (lines) => logs.publish(lines),
    hostNetworks: () => Promise.resolve([...host.hostNetworks]),
    reachedAddresses: () => (network === undefined ? Promise.resolve([]) : reach.destinations()),
    resolveHost: (name) => reach.resolve(name),
    setHostNetworks: (networks) => {
      host.hostNetworks = [...networks];
    },
    setNames: (given) => {
      host.names = new Map(Object.entries(given));
      // The apply path reads what is known without waiting: know these at once.
      for (const name of host.names.keys()) void reach.resolve(name);
    },
  };
}
