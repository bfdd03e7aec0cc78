// The data-plane boundary. The control plane (routes, services) never talks to WireGuard, nginx or a CA
// directly: it changes the DB, then asks the reconciler to converge. The reconciler talks to the host only
// through the adapters below, so API tests run it with the recording adapters of `offline.ts`.

import type { WgDumpPeer } from '@postern/contract';

// The desired state and certificate records are plain data shared with the DB layer, so they live in `model/`.
import type { ApplyScope, DesiredDomain, DesiredPeer, DesiredState } from '../model/desired-state.js';
import type { CertificateInfo } from '../model/certificates.js';
import type { ReachedAddress } from '../lib/network-guard.js';

export type {
  ApplyScope,
  ScopedState,
  DesiredAccess,
  DesiredDomain,
  DesiredHttpRoute,
  DesiredPeer,
  DesiredState,
  DesiredStreamRoute,
} from '../model/desired-state.js';
export type { CertificateInfo } from '../model/certificates.js';
export type { ReachedAddress } from '../lib/network-guard.js';

/** Rows the data plane set aside (not served) with the reason, by kind and id; every other row is served. */
export interface Rejections {
  http: Map<number, string>;
  tcp: Map<number, string>;
  nodes: Map<number, string>;
}

/**
 * `ok` false: something the whole data plane needs failed (nginx or WireGuard could not be brought up); the
 * change is in the DB and is applied once it recovers. Rejections are per row and never make an apply fail.
 */
export type ApplyResult = (
  { ok: true; rejected: Rejections } | { ok: false; message: string; rejected: Rejections }
) & {
  /** The HTTP-01 tokens nginx serves after this run (absent: unknown, the proxy side failed). */
  challenges?: ReadonlySet<string>;
  /**
   * A scoped run: `rejected` speaks for these HTTP services only (the scope's and every one on its hosts); what other
   * rows were set aside for is unchanged. Absent: a full run, `rejected` is every row set aside.
   */
  scopedHttp?: ReadonlySet<number>;
  /** A scoped run: likewise, the TCP/UDP services `rejected` speaks for (the scope's and those on its instances). */
  scopedTcp?: ReadonlySet<number>;
  /** A scoped run: likewise, the nodes `rejected` speaks for (the scope's `nodes`). */
  scopedNodes?: ReadonlySet<number>;
  /**
   * A full run: the rows scoped runs that read after it spoke for, asked when its verdict is stored. Their rows are
   * newer than its own: its verdict neither sets nor clears theirs (reconcile/ledger.ts).
   */
  newerVerdicts?: () => Verdicts;
};

/** Rows by kind: those a run's verdict speaks for. */
export interface Verdicts {
  http: ReadonlySet<number>;
  tcp: ReadonlySet<number>;
  nodes: ReadonlySet<number>;
}

export const noRejections = (): Rejections => ({ http: new Map(), tcp: new Map(), nodes: new Map() });

/** One line of `wg show <if> dump` for a peer. */
/** One peer of `wg show <if> dump` (the contract's parser). */
export type WgPeerStatus = WgDumpPeer;

export interface WireGuardAdapter {
  /** Create (or adopt) the interface with the gateway's key, address and port. Idempotent. */
  ensureInterface(gateway: DesiredState['gateway']): Promise<void>;
  /** Make the peer set exactly `peers`, leaving unchanged peers undisturbed; returns why some nodes are not routed. */
  syncPeers(peers: DesiredPeer[]): Promise<Map<number, string>>;
  /**
   * A scoped run's peers: the peers of `nodeIds` made exactly `peers` (a node without one in `peers` has its peer
   * removed), every other peer, route and session left alone; returns why some of these nodes are not routed. null:
   * this cannot be done alone (nothing synced yet since the interface was made) and nothing was changed.
   */
  patchPeers(peers: readonly DesiredPeer[], nodeIds: readonly number[]): Promise<Map<number, string> | null>;
  dump(): Promise<WgPeerStatus[]>;
  /** Creates the interface again if it vanished (wireguard-go died, someone deleted it); true when it did. */
  heal(): Promise<boolean>;
  /** What the interface, its peers, routes and firewall jumps hold that differs from `peers`. */
  drift(peers: DesiredPeer[]): Promise<string[]>;
  /** The next sync applies everything again (after drift). */
  forget(): void;
  /** `keepServing`: leave the tunnel up for the next control plane (a restart); otherwise take it down. */
  close(options: { keepServing: boolean }): Promise<void>;
}

/** Rendered config: paths relative to a config directory → file content. */
export type ConfigFiles = Record<string, string>;

export class NginxRejectedError extends Error {
  override name = 'NginxRejectedError';
}

/**
 * nginx had no room for the certificates of `domains` (its certificate dictionary at its ceiling): the push was
 * refused whole, the other certificates were pushed, and the services of these domains are set aside.
 */
export class NoRoomError extends Error {
  override name = 'NoRoomError';
  constructor(
    message: string,
    readonly domains: readonly string[],
  ) {
    super(message);
  }
}

/** One of nginx's shared dictionaries (nginx/dict-sizes.ts): its size, its free pages, the writes it refused. */
export interface DictionaryUsage {
  name: string;
  capacityBytes: number;
  /** Whole free pages (entries of up to 2 KiB may still fit in pages in use). */
  freeBytes: number;
  /**
   * Since nginx started (gw_live: requests refused because they could not be tracked; gw_stats: counter updates
   * dropped) or since the control plane started (gw_routes, gw_certs, gw_acme: pushes refused for lack of room).
   */
  refusedWrites: number;
}

export interface CertificateAdapter {
  /** Make sure the domain has a certificate file nginx can serve now (self-signed until ACME succeeds). */
  ensure(domain: DesiredDomain): Promise<CertificateInfo>;
  remove(domain: string): Promise<void>;
  info(domain: string): CertificateInfo | null;
  /**
   * A restart's shortcut (certs/recorded.ts): when the domain's record says which PEM serves it as it is, the domain
   * is taken as ensured without its file being read here, and that PEM's fingerprint is returned: the caller checks
   * the file against it when it reads it for nginx, `confirmRecorded` those found so and `ensure`s the others (a file
   * gone or replaced). null: `ensure` it. Absent: every domain is ensured.
   */
  adoptRecorded?(domain: DesiredDomain): string | null;
  /** The files of these adopted domains were read and hold the recorded certificate. */
  confirmRecorded?(names: readonly string[]): void;
  /**
   * Removes certificates of every domain not in `keep`, also those deleted while the gateway was down. `onDisk`: the
   * names of the PEMs on disk as `listPems` gave them (absent: listed now). Adapters without it only lose
   * certificates of domains they served themselves.
   */
  pruneExcept?(keep: readonly string[], onDisk?: readonly string[]): Promise<string[]>;
  /** The names of the PEMs on disk (a walk of the certificate directory: 100,000 files at the supported size). */
  listPems?(): Promise<string[]>;
  /**
   * The text of the domain's first PEM that `ensure` just wrote (or loaded from the shared store), handed out once
   * and only while it is still the file: the reconciler pushes it as it is instead of reading it back. null: read it.
   */
  takeUnpushed?(domain: string): string | null;
}

/** A parsed access-log line, already attributed to a service. */
export interface LogLine {
  domain: string | null;
  type: 'http' | 'tcp';
  serviceId: number | null;
  /** The text shown in the console, starting with [INFO]/[WARN]/[ERROR]. */
  text: string;
  /** A TCP/UDP session's figures (stream lines only): what traffic accounting counts. */
  session?: { bytesIn: number; bytesOut: number; seconds: number; ok: boolean };
}

/** Upper bounds (ms) of the request latency buckets nginx counts in; a last bucket holds everything slower. */
export const LATENCY_BUCKETS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000] as const;

/** An HTTP service's counters since `TrafficCounters.httpEpoch`. */
export interface HttpTraffic {
  /** Requests by status class: [1xx, 2xx, 3xx, 4xx, 5xx]. */
  requests: [number, number, number, number, number];
  bytesIn: number;
  bytesOut: number;
  latencySumMs: number;
  /** Counts per LATENCY_BUCKETS_MS bucket, plus one for slower. */
  latencyBuckets: number[];
  /** Requests in flight now (a gauge, not a counter). */
  open: number;
}

/** A TCP/UDP service's counters since `TrafficCounters.streamEpoch` (sessions are counted when they end). */
export interface StreamTraffic {
  sessions: number;
  failed: number;
  bytesIn: number;
  bytesOut: number;
  secondsSum: number;
  /** TCP sessions open now (a gauge). */
  open: number;
}

/**
 * Monotonic counters per service. An epoch changes when its counters started again from zero (nginx's dictionary
 * was new; the control plane restarted): a reader takes deltas within one epoch only.
 */
export interface TrafficCounters {
  httpEpoch: string;
  streamEpoch: string;
  http: Map<number, HttpTraffic>;
  tcp: Map<number, StreamTraffic>;
}

/** What the gateway serves against what the DB says it should: empty when they agree. */
export interface DriftReport {
  checkedAt: string;
  differences: string[];
  /** Whether an apply was run to repair them. */
  repaired: boolean;
}

export interface LogSource {
  /** Recent lines matching the filter first, then live batches. Returns an unsubscribe function. */
  subscribe(
    filter: { domain: string } | { type: 'http' | 'tcp'; id: number },
    onLines: (lines: string[]) => void,
  ): () => void;
}

/** Live status of one node's peer, from the shared `wg show dump` poll. */
export interface NodeStatus {
  status: 'online' | 'idle' | 'offline';
  clientIp: string | null;
  latestHandshakeTimestamp: string | null; // ISO 8601, null = never
  transferRx: number;
  transferTx: number;
}

export interface NodeStatusSource {
  /** Current status by node public key (peers never seen: undefined → offline). */
  get(publicKey: string): NodeStatus | undefined;
  /** Called with the public keys whose status changed since the last poll. Returns an unsubscribe function. */
  onChange(listener: (changedPublicKeys: string[]) => void): () => void;
}

/**
 * What the control plane holds. `apply()` reconciles runtime state with the DB (coalescing bursts: callers that
 * arrive while an apply runs share the next one) and resolves when the change is live.
 */
export interface DataPlane {
  start(): Promise<void>;
  /** `keepServing` (a restart of the control plane): nginx and WireGuard go on serving; otherwise they stop too. */
  stop(options: { keepServing: boolean }): Promise<void>;
  /** `scope`: what the change touches (only that is loaded, planned and pushed); absent: everything. */
  apply(scope?: ApplyScope): Promise<ApplyResult>;
  /**
   * Settles when the boot's rebuild from the DB has run (whatever its result). Background work that competes for the
   * machine (health checks of every backend) waits for it: serving comes first.
   */
  booted(): Promise<void>;
  status: NodeStatusSource;
  logs: LogSource;
  certificates: Pick<CertificateAdapter, 'info'> & {
    /**
     * Asks the CA for a new certificate of a certbot domain now, in the background ("renew now"); false when this
     * gateway does not run issuance (another holds the `certificates` lease) or has no such domain. Absent: never.
     */
    renew?(domain: string): boolean;
  };
  /** Traffic counters per service (monotonic within their epoch). */
  traffic(): Promise<TrafficCounters>;
  /** Reads back what nginx and WireGuard serve, compares it with the DB, and repairs any difference. */
  checkDrift(): Promise<DriftReport>;
  /** How full nginx's shared dictionaries are; null when there is no nginx to ask (data plane off, nginx down). */
  dictionaries(): Promise<DictionaryUsage[] | null>;
  /** The last drift check's report (scheduled or asked for); null before the first. */
  lastDrift(): DriftReport | null;
  /** Called after every drift check. Returns an unsubscribe function. */
  onDrift(listener: (report: DriftReport) => void): () => void;
  /**
   * IPv4 CIDRs of every routing table of the host (main, local, policy tables), without default routes and the
   * WireGuard interface's routes: networks and addresses the host reaches itself, which a gateway node's network
   * must not take over.
   */
  hostNetworks(): Promise<string[]>;
  /**
   * Addresses the gateway reaches behind its default route because of its settings (the database host, the DNS
   * resolvers, the ACME directory's host) and the clouds' metadata addresses, each with what it is; names resolved
   * like the gateway resolves them (/etc/hosts, then the resolvers), answers kept a minute.
   */
  reachedAddresses(): Promise<ReachedAddress[]>;
  /** IPv4 addresses a backend's host name stands for (/etc/hosts, then DNS); [] when it does not resolve. */
  resolveHost(name: string): Promise<string[]>;
}

/** The logging the data plane needs; a pino logger fits. */
export interface DataPlaneLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
