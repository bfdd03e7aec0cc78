// What the data plane must serve, as plain data: `db/desired-state.ts` reads it from the DB, the data plane
// (`dataplane/`) makes the host match it. It lives here, importing nothing, so neither side imports the other.

/** Everything the data plane must serve, computed from the DB alone (db/desired-state.ts). */
export interface DesiredState {
  gateway: {
    /** Gateway's tunnel address with prefix, e.g. "10.44.0.1/16". */
    address: string;
    listenPort: number;
    privateKey: string;
    /** Public host name or IP nodes dial and `publicAccess` URLs use. */
    publicHost: string;
  };
  /** Enabled, non-local nodes only: a disabled node has no peer. */
  peers: DesiredPeer[];
  /** Enabled HTTP services whose node is enabled (or local). */
  http: DesiredHttpRoute[];
  /** Enabled TCP/UDP services whose node is enabled (or local). */
  stream: DesiredStreamRoute[];
  /** Every domain with the certificate nginx must serve for it. */
  domains: DesiredDomain[];
  /**
   * HTTP-01 answers (token → key authorisation) of pending ACME orders and domain checks, whichever gateway made
   * them: every gateway's nginx serves them. Absent: none (tests building a state by hand).
   */
  challenges?: ReadonlyMap<string, string>;
  /** Who may reach HTTP services (docs/ACCESS.md). Absent: every service is public (tests building a state by hand). */
  access?: DesiredAccess;
}

/** What nginx checks visitors of protected services with. */
export interface DesiredAccess {
  /** The key visitor cookies are signed with: its id (in every cookie) and 32 bytes, base64. */
  key: { id: string; secret: string };
  /** Every protected policy; routes name theirs by id (`DesiredHttpRoute.accessPolicyId`). */
  policies: DesiredAccessPolicy[];
  /** Revoked sessions that have not expired yet: session id → expiry (unix seconds). */
  revoked: ReadonlyMap<string, number>;
}

export interface DesiredAccessPolicy {
  id: number;
  /** Part of every cookie made under the policy: a new epoch ends them all. */
  epoch: number;
  /** Paths (prefixes) and source networks (IPv4 / CIDR) that skip the check. */
  bypassPaths: string[];
  bypassNetworks: string[];
}

export interface DesiredPeer {
  nodeId: number;
  publicKey: string;
  presharedKey: string | null;
  /** Node's tunnel address, no prefix. */
  address: string;
  /** What the gateway routes to this peer: address/32, plus gatewayNetwork for gateway nodes. */
  allowedIps: string[];
  /** Full tunnel: the gateway forwards and masquerades this node's traffic to the internet (default false). */
  allowInternet?: boolean;
  /**
   * The subnets in `allowedIps` were set by the node's own token: the data plane checks them again against what the
   * gateway reaches before routing them (dataplane/reconcile/network-guard.ts). Absent: the operator's.
   */
  networksByToken?: boolean;
}

export interface DesiredHttpRoute {
  serviceId: number;
  nodeId: number;
  /** null: served on the gateway's default host. */
  domain: string | null;
  pathLocation: string;
  backendProto: 'http' | 'https';
  /** Resolved upstream address: the node's tunnel IP, or backendHost for gateway and local nodes. */
  backendHost: string;
  backendPort: number;
  allowedIps: string[];
  blockedIps: string[];
  /** The protected access policy that applies to it (docs/ACCESS.md); absent or null: public. */
  accessPolicyId?: number | null;
}

export interface DesiredStreamRoute {
  serviceId: number;
  nodeId: number;
  proto: 'tcp' | 'udp';
  port: number;
  /** TLS termination at the gateway (tcp only). */
  ssl: boolean;
  domain: string | null;
  backendHost: string;
  backendPort: number;
  allowedIps: string[];
  blockedIps: string[];
}

export interface DesiredDomain {
  domainId: number;
  /** A domain or a wildcard domain (`*.example.com`, one certificate for every name below it). */
  domain: string;
  /** `uploaded`: the operator's own certificate, stored for every gateway (`pemFingerprint`), never renewed. */
  ssl: 'self-signed' | 'certbot' | 'uploaded';
  /**
   * What a certbot domain's order uses (the ACME issuer reads the details through `AcmeSettingsSource`); a change
   * orders a new certificate. Absent: http-01 from the default CA.
   */
  challenge?: 'http-01' | 'dns-01';
  dnsProviderId?: number | null;
  acmeCaId?: number | null;
  /**
   * Fingerprint of the certificate stored for the domain in the database (shared by every gateway); null: none
   * stored yet. A gateway serving another one loads the stored one.
   */
  pemFingerprint?: string | null;
}

/**
 * What one change touches (dataplane/README.md "Scoped applies"): the data plane loads, plans and pushes only these.
 * A change it cannot express this way (settings, nodes, policies shared by many services) applies everything.
 */
export interface ApplyScope {
  /** HTTP hosts: a domain or wildcard domain name, '' for the services without a domain. */
  hosts: readonly string[];
  /** HTTP services whose rows changed: a deleted or disabled one's id too (its open connections are cut). */
  http: readonly number[];
  /**
   * TCP/UDP instances (`streamKey`: one service per protocol and public port) a change touches: the service's key
   * before and after it (a moved service's old instance stops). Absent: none.
   */
  streams?: readonly string[];
  /** TCP/UDP services whose rows changed (their `applyError` is written): a deleted or disabled one's id too. */
  tcp?: readonly number[];
  /**
   * Nodes whose rows changed (created, edited, enabled, disabled, deleted): each one's WireGuard peer is set, changed
   * or removed alone (their `applyError` is written). Their services' hosts and instances are in `hosts`, `http`,
   * `streams`, `tcp` (the caller reads them by node). Absent: none.
   */
  nodes?: readonly number[];
}

/** A TCP/UDP service's instance key, `tcp-30005` (the data plane's `streamInstanceKey`). */
export const streamKey = (proto: 'tcp' | 'udp', port: number): string => `${proto}-${port}`;

/** The protocol and port of an instance key; null: not one. */
export function parseStreamKey(key: string): { proto: 'tcp' | 'udp'; port: number } | null {
  const match = /^(tcp|udp)-(\d{1,5})$/.exec(key);
  if (match === null) return null;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { proto: match[1] as 'tcp' | 'udp', port } : null;
}

/** The rows of an `ApplyScope`, read from the DB in one snapshot (db/desired-state.ts `loadScopedState`). */
export interface ScopedState {
  /**
   * The hosts these rows decide whole: the scope's, the wildcard above each name (an exact name without routes below
   * a wildcard with some answers 404), and each wildcard's exact names below it. Every route of these hosts is here.
   */
  hosts: string[];
  /** Enabled HTTP services on `hosts` whose node serves (as `DesiredState.http`). */
  http: DesiredHttpRoute[];
  /** The domains among `hosts`. */
  domains: DesiredDomain[];
  access?: DesiredAccess;
  /** A node's token set subnets (`DesiredPeer.networksByToken`): the network guard needs a full run. */
  tokenNetworks?: boolean;
  /** The instance keys these rows decide whole (the scope's `streams`; the database holds one service per key). */
  streams?: string[];
  /** Enabled TCP/UDP services on `streams` whose node serves (as `DesiredState.stream`). */
  stream?: DesiredStreamRoute[];
  /** The domains whose certificates those services terminate TLS with. */
  streamDomains?: DesiredDomain[];
  /** The scope's nodes (`ApplyScope.nodes`): the peers of these rows decide whole. */
  nodes?: number[];
  /** The peers of `nodes` (as `DesiredState.peers`: enabled, non-local nodes only; a node without one has none). */
  peers?: DesiredPeer[];
}
