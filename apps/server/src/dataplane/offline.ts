import { createLogHub } from './logs/hub.js';
import type { WantedInstance } from './nginx/stream-instances.js';
import type { NginxRenderOptions } from './nginx/options.js';
import { planDataPlane } from './plan.js';
import { withoutServices } from './nginx/routes.js';
import { createReconciler, type ProxyAdapter } from './reconciler.js';
import { createGatewayReach } from './reach.js';
import { createNetworkGuard } from './reconcile/network-guard.js';
import { applyProblems, NO_ROOM } from './reconcile/problems.js';
import {
  type ApplyResult,
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
  type WgPeerStatus,
  type WireGuardAdapter,
} from './types.js';
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
    return Promise.resolve(
      new Map([...this.routeFailures].filter(([nodeId]) => peers.some((p) => p.nodeId === nodeId))),
    );
  }

  dump(): Promise<WgPeerStatus[]> {
    return Promise.resolve(this.statuses);
  }

  heal(): Promise<boolean> {
    return Promise.resolve(false);
  }

  drift(): Promise<string[]> {
    return Promise.resolve([]);
  }

  forget(): void {
    // Nothing is held.
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

export class RecordingProxy implements ProxyAdapter {
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
    return Promise.resolve(left);
  }

  publishCertificates(names: readonly string[]): Promise<void> {
    for (const name of names) this.certificates.add(name);
    return Promise.resolve();
  }

  unpublishCertificates(names: readonly string[]): Promise<void> {
    for (const name of names) this.certificates.delete(name);
    return Promise.resolve();
  }

  syncStreams(wanted: ReadonlyMap<string, WantedInstance>): Promise<Map<string, string>> {
    this.streams = new Map([...wanted].filter(([key]) => !this.streamFailures.has(key)));
    return Promise.resolve(new Map([...this.streamFailures].filter(([key]) => wanted.has(key))));
  }

  cutStale(): Promise<number> {
    this.cutChecks++;
    return Promise.resolve(0);
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

  pruneExcept(keep: readonly string[]): Promise<string[]> {
    const removed = [...this.infos.keys()].filter((name) => !keep.includes(name));
    for (const name of removed) this.infos.delete(name);
    return Promise.resolve(removed);
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

export function createOfflineDataPlane(options: {
  loadDesiredState: () => Promise<DesiredState>;
  render: NginxRenderOptions;
  /** Absent: no subnet is re-checked on apply, and no setting counts as reached. */
  network?: OfflineNetworkOptions;
}): OfflineDataPlane {
  const wireguard = new RecordingWireGuard();
  const proxy = new RecordingProxy();
  const certs = new RecordingCertificates();
  const status = new SettableNodeStatus();
  const challenges = new MemoryChallenges();
  const logs = createLogHub({ batchMs: 0 });
  let applyCount = 0;
  let lastState: DesiredState | null = null;
  let started = false;
  let nextFailure: string | null = null;
  let hostNetworks: string[] = [];
  let names = new Map<string, string[]>();
  let traffic: TrafficCounters = { httpEpoch: 'offline', streamEpoch: 'offline', http: new Map(), tcp: new Map() };
  let lastDrift: DriftReport | null = null;
  let dictionaries: DictionaryUsage[] | null = null;
  const driftListeners = new Set<(report: DriftReport) => void>();
  const reportDrift = (report: DriftReport) => {
    lastDrift = report;
    for (const listener of driftListeners) listener(report);
  };
  const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const staticHosts = new Map([['localhost', '127.0.0.1']]);
  const reach = createGatewayReach({
    resolvers: options.network?.resolvers ?? [],
    databaseHost: options.network?.databaseHost,
    acmeDirectoryUrl: options.network?.acmeDirectoryUrl,
    staticHosts: () => staticHosts,
    lookup: (name) => Promise.resolve(names.get(name) ?? []),
    // Answers follow setNames at once.
    ttlMs: 0,
  });
  const network = options.network;
  const guardNetworks =
    network === undefined
      ? undefined
      : createNetworkGuard({
          vpnSubnet: network.vpnSubnet,
          minPrefix: network.minPrefix,
          hostNetworks: () => Promise.resolve([...hostNetworks]),
          underlayOf: (publicKey) => status.get(publicKey)?.clientIp ?? null,
          reach,
        });
  const reconciler = createReconciler({
    loadDesiredState: async () => {
      applyCount++;
      lastState = await options.loadDesiredState();
      return lastState;
    },
    ...(guardNetworks ? { guardNetworks } : {}),
    plan: (state) => planDataPlane(state, options.render, staticHosts),
    wireguard,
    proxy,
    certs,
    logger: silent,
  });

  return {
    wireguard,
    proxy,
    certs,
    status,
    logs,
    challenges,
    get applyCount() {
      return applyCount;
    },
    get lastState() {
      return lastState;
    },
    get started() {
      return started;
    },
    certificates: { info: (domain) => certs.info(domain) },
    async start() {
      started = true;
      await reconciler.apply();
    },
    async stop() {
      started = false;
      logs.close();
      await wireguard.close();
    },
    async apply(): Promise<ApplyResult> {
      const message = nextFailure;
      nextFailure = null;
      const applied = await reconciler.apply();
      const result: ApplyResult = message === null ? applied : { ok: false, message, rejected: applied.rejected };
      // As the real data plane: what failed shows in the system status at once.
      const problems = applyProblems(result);
      if (problems.length > 0)
        reportDrift({ checkedAt: new Date().toISOString(), differences: problems, repaired: false });
      return result;
    },
    traffic: () => Promise.resolve(traffic),
    dictionaries: () => Promise.resolve(dictionaries),
    setDictionaries: (usage) => {
      dictionaries = usage;
    },
    setTraffic: (counters) => {
      traffic = counters;
    },
    checkDrift: () => {
      reportDrift({ checkedAt: new Date().toISOString(), differences: [], repaired: false });
      return Promise.resolve(lastDrift as DriftReport);
    },
    lastDrift: () => lastDrift,
    booted: () => Promise.resolve(),
    onDrift(listener) {
      driftListeners.add(listener);
      return () => {
        driftListeners.delete(listener);
      };
    },
    reportDrift,
    failNextApply: (message) => {
      nextFailure = message;
    },
    pushLogLines: (lines) => logs.publish(lines),
    hostNetworks: () => Promise.resolve([...hostNetworks]),
    reachedAddresses: () => (network === undefined ? Promise.resolve([]) : reach.destinations()),
    resolveHost: (name) => reach.resolve(name),
    setHostNetworks: (networks) => {
      hostNetworks = [...networks];
    },
    setNames: (given) => {
      names = new Map(Object.entries(given));
      // The apply path reads what is known without waiting: know these at once.
      for (const name of names.keys()) void reach.resolve(name);
    },
  };
}
