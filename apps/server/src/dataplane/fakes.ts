import { createLogHub } from './logs/hub.js';
import { createReconciler } from './reconciler.js';
import {
  NginxRejectedError,
  type CertificateAdapter, type CertificateInfo, type ConfigFiles, type DataPlane, type DesiredDomain, type DesiredPeer,
  type DesiredState, type LogLine, type NginxAdapter, type NodeStatus, type NodeStatusSource, type WgPeerStatus,
  type WireGuardAdapter,
} from './types.js';

// In-memory adapters for API tests: they record what the reconciler asked for and never touch the host.

export class FakeWireGuard implements WireGuardAdapter {
  gateway: DesiredState['gateway'] | null = null;
  peers: DesiredPeer[] = [];
  statuses: WgPeerStatus[] = [];
  closed = false;

  ensureInterface(gateway: DesiredState['gateway']): Promise<void> {
    this.gateway = gateway;
    return Promise.resolve();
  }

  syncPeers(peers: DesiredPeer[]): Promise<void> {
    this.peers = peers;
    return Promise.resolve();
  }

  dump(): Promise<WgPeerStatus[]> {
    return Promise.resolve(this.statuses);
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

export class FakeNginx implements NginxAdapter {
  files: ConfigFiles | null = null;
  applyCount = 0;
  running = false;
  private generation = 0;
  private nextFailure: string | null = null;

  /** The next apply is rejected with this message, as nginx -t would. */
  failNextApply(message: string): void {
    this.nextFailure = message;
  }

  start(): Promise<void> {
    this.running = true;
    return Promise.resolve();
  }

  apply(files: ConfigFiles): Promise<{ generation: number }> {
    this.applyCount++;
    const failure = this.nextFailure;
    this.nextFailure = null;
    if (failure !== null) return Promise.reject(new NginxRejectedError(failure));
    this.files = files;
    return Promise.resolve({ generation: ++this.generation });
  }

  stop(): Promise<void> {
    this.running = false;
    return Promise.resolve();
  }
}

export class FakeCertificates implements CertificateAdapter {
  readonly infos = new Map<string, CertificateInfo>();
  /** Every ensure() call, in order: "domain:ssl". */
  readonly ensured: string[] = [];

  ensure(domain: DesiredDomain): Promise<CertificateInfo> {
    this.ensured.push(`${domain.domain}:${domain.ssl}`);
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

  info(domain: string): CertificateInfo | null {
    return this.infos.get(domain) ?? null;
  }
}

export class FakeNodeStatusSource implements NodeStatusSource {
  private readonly statuses = new Map<string, NodeStatus>();
  private readonly listeners = new Set<(keys: string[]) => void>();

  get(publicKey: string): NodeStatus | undefined {
    return this.statuses.get(publicKey);
  }

  onChange(listener: (changedPublicKeys: string[]) => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  /** Set (or with `undefined` forget) a peer's status and notify listeners, like one poll would. */
  setStatus(publicKey: string, status: NodeStatus | undefined): void {
    if (status === undefined) this.statuses.delete(publicKey);
    else this.statuses.set(publicKey, status);
    for (const listener of this.listeners) listener([publicKey]);
  }
}

export const EMPTY_DESIRED_STATE: DesiredState = {
  gateway: { address: '10.44.0.1/16', listenPort: 51820, privateKey: `${'A'.repeat(43)}=`, publicHost: 'gateway.test' },
  peers: [],
  http: [],
  stream: [],
  domains: [],
};

export interface FakeDataPlane extends DataPlane {
  readonly wireguard: FakeWireGuard;
  readonly nginx: FakeNginx;
  readonly certs: FakeCertificates;
  readonly status: FakeNodeStatusSource;
  /** Completed apply() runs (coalesced calls count once). */
  readonly applyCount: number;
  /** Desired state read by the last apply, null before the first. */
  readonly lastState: DesiredState | null;
  readonly started: boolean;
  failNextApply(message: string): void;
  /** Lines as the log tailer would publish them (delivered at once, no batching). */
  pushLogLines(lines: LogLine[]): void;
  /** What hostNetworks() answers from now on (default: none). */
  setHostNetworks(networks: string[]): void;
}

export function createFakeDataPlane(options: { loadDesiredState?: () => DesiredState } = {}): FakeDataPlane {
  const wireguard = new FakeWireGuard();
  const nginx = new FakeNginx();
  const certs = new FakeCertificates();
  const status = new FakeNodeStatusSource();
  const logs = createLogHub({ batchMs: 0 });
  const load = options.loadDesiredState ?? (() => EMPTY_DESIRED_STATE);
  let applyCount = 0;
  let lastState: DesiredState | null = null;
  let started = false;
  let nextFailure: string | null = null;
  let hostNetworks: string[] = [];
  const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const reconciler = createReconciler({
    loadDesiredState: () => {
      applyCount++;
      lastState = load();
      return lastState;
    },
    // A stable rendering of the state: the fake nginx sees a change exactly when the state changed.
    renderNginx: (state) => ({ 'state.json': JSON.stringify({ http: state.http, stream: state.stream, domains: state.domains }) }),
    wireguard, nginx, certs, logger: silent,
  });

  return {
    wireguard, nginx, certs, status, logs,
    get applyCount() { return applyCount; },
    get lastState() { return lastState; },
    get started() { return started; },
    certificates: { info: (domain) => certs.info(domain) },
    async start() {
      started = true;
      await nginx.start();
      await reconciler.runAtBoot();
    },
    async stop() {
      started = false;
      logs.close();
      await nginx.stop();
      await wireguard.close();
    },
    apply() {
      // A forced failure is answered without running the reconciler: nginx would be skipped when the state
      // did not change, and the caller wants to see the rejection path either way.
      const message = nextFailure;
      nextFailure = null;
      if (message === null) return reconciler.apply();
      applyCount++;
      lastState = load();
      return Promise.resolve({ ok: false, message });
    },
    failNextApply: (message) => { nextFailure = message; },
    pushLogLines: (lines) => logs.publish(lines),
    hostNetworks: () => Promise.resolve([...hostNetworks]),
    setHostNetworks: (networks) => { hostNetworks = [...networks]; },
  };
}
