import { and, eq, gt, inArray, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { isWildcardDomainName, wildcardOf } from '@postern/contract';
import { parseStreamKey } from '../model/desired-state.js';
import type {
  ApplyScope,
  DesiredDomain,
  DesiredHttpRoute,
  DesiredPeer,
  DesiredState,
  DesiredStreamRoute,
  ScopedState,
} from '../model/desired-state.js';
import type { SecretBox } from '../secrets.js';
import type { ReadDb, Store } from './client.js';
import { loadAccessState, loadServicePolicies, protectingPolicyId, type AccessPolicyRow } from './access-state.js';
import { readGatewayPrivateKey } from './gateway-key.js';
import { partsOf, preparedInList, readInParts, VALUES_PER_QUERY } from './parts.js';
import { preparedPerDb } from './prepared.js';
import {
  accessPolicies,
  acmeChallenges,
  certificatePems,
  domains,
  httpServices,
  nodes,
  tcpServices,
} from './schema.js';

type StateDeps = { db: Store; secrets: SecretBox; now?: () => Date };

/** This gateway's side of the tunnel (registered at boot, modules/gateways); its key is read from its row. */
export type GatewaySettings = Omit<DesiredState['gateway'], 'privateKey'> & { gatewayId: number };

/** Services are served when enabled and their node is connected; the local node is always "connected". */
const nodeServes = or(eq(nodes.enabled, true), eq(nodes.isLocal, true));

// loadDesiredState runs on every change, on the path from an API call to the change being served, and reads
// every route. So its queries are prepared once per database, and the route queries are read as raw rows
// (`.values()`): drizzle's per-row mapping (nested join objects, a JSON.parse per JSON column) cost more than
// the SQL itself. Each tuple type lists the columns of its select below, in the same order.
type HttpRow = [
  id: number,
  nodeId: number,
  domain: string,
  pathLocation: string,
  backendProto: 'http' | 'https',
  backendHost: string,
  backendPort: number,
  allowedIps: string | null,
  blockedIps: string | null,
];
type StreamRow = [
  id: number,
  nodeId: number,
  proto: 'tcp' | 'udp',
  port: number,
  ssl: number,
  domain: string | null,
  backendHost: string,
  backendPort: number,
  allowedIps: string | null,
  blockedIps: string | null,
];
type DomainRow = [
  id: number,
  domain: string,
  ssl: DesiredDomain['ssl'],
  pemFingerprint: string | null,
  challenge: 'http-01' | 'dns-01',
  dnsProviderId: number | null,
  acmeCaId: number | null,
];

/** A regular node only exposes its own tunnel address; gateway and local nodes target the stored host. */
const upstreamHost = (backendHost: AnyColumn): SQL<string> =>
  sql`case when ${nodes.isGateway} or ${nodes.isLocal} then ${backendHost} else ${nodes.address} end`;

/** Most services have no IP list: NULL for `[]` spares a string per row and its JSON.parse (see parseIpList). */
const nonEmptyList = (list: AnyColumn): SQL<string | null> => sql`nullif(${list}, '[]')`;

/** The HTTP routes' select (columns as `HttpRow`), for the whole table and for a scope's hosts. */
const selectHttp = (db: ReadDb) =>
  db
    .select({
      id: httpServices.id,
      nodeId: httpServices.nodeId,
      domain: httpServices.domain,
      pathLocation: httpServices.pathLocation,
      backendProto: httpServices.backendProto,
      backendHost: upstreamHost(httpServices.backendHost),
      backendPort: httpServices.backendPort,
      allowedIps: nonEmptyList(httpServices.allowedIps),
      blockedIps: nonEmptyList(httpServices.blockedIps),
    })
    .from(httpServices)
    .innerJoin(nodes, eq(nodes.id, httpServices.nodeId));
const httpServed = and(eq(httpServices.enabled, true), nodeServes);

/** The TCP/UDP routes' select (columns as `StreamRow`), for the whole table and for a scope's instances. */
const selectStream = (db: ReadDb) =>
  db
    .select({
      id: tcpServices.id,
      nodeId: tcpServices.nodeId,
      proto: tcpServices.proto,
      port: tcpServices.port,
      ssl: tcpServices.ssl,
      domain: tcpServices.domain,
      backendHost: upstreamHost(tcpServices.backendHost),
      backendPort: tcpServices.backendPort,
      allowedIps: nonEmptyList(tcpServices.allowedIps),
      blockedIps: nonEmptyList(tcpServices.blockedIps),
    })
    .from(tcpServices)
    .innerJoin(nodes, eq(nodes.id, tcpServices.nodeId));
const streamServed = and(eq(tcpServices.enabled, true), nodeServes);

/** The domains' select (columns as `DomainRow`). */
const selectDomains = (db: ReadDb) =>
  db
    .select({
      id: domains.id,
      domain: domains.domain,
      ssl: domains.ssl,
      pem: certificatePems.fingerprint,
      challenge: domains.challenge,
      dnsProviderId: domains.dnsProviderId,
      acmeCaId: domains.acmeCaId,
    })
    .from(domains)
    .leftJoin(certificatePems, eq(certificatePems.domainId, domains.id));

/** Values per query of a scope's read (db/parts.ts; a stream key's pair counts two). */
export const SCOPE_VALUES_PER_QUERY = VALUES_PER_QUERY;

/** A row as `values()` answers it: its first column is its id. */
const firstColumn = (row: unknown[]): number => row[0] as number;

/** The HTTP routes served on `hosts` (a change names a host or two, a burst's run thousands). */
const scopedHttpRows = preparedInList<ReadDb, HttpRow>((db, hosts) =>
  selectHttp(db)
    .where(and(httpServed, inArray(httpServices.domain, hosts)))
    .orderBy(httpServices.id)
    .prepare(),
);

/** The domains named `names`. */
const namedDomainRows = preparedInList<ReadDb, DomainRow>((db, names) =>
  selectDomains(db).where(inArray(domains.domain, names)).orderBy(domains.id).prepare(),
);

/** The peers' select, for every node and for a scope's. */
const selectPeers = (db: ReadDb) => ({
  peers: db
    .select({
      id: nodes.id,
      publicKey: nodes.publicKey,
      presharedKeyEnc: nodes.presharedKeyEnc,
      address: nodes.address,
      isGateway: nodes.isGateway,
      gatewayNetwork: nodes.gatewayNetwork,
      extraGatewayNetworks: nodes.extraGatewayNetworks,
      allowInternet: nodes.allowInternet,
      networksSetBy: nodes.networksSetBy,
    })
    .from(nodes),
});

function prepareQueries(db: ReadDb) {
  return {
    peers: selectPeers(db)
      .peers.where(and(eq(nodes.enabled, true), eq(nodes.isLocal, false)))
      .orderBy(nodes.id)
      .prepare(),
    http: selectHttp(db)
      .where(and(httpServed, gt(httpServices.id, sql.placeholder('after'))))
      .orderBy(httpServices.id)
      .limit(STATE_PAGE_ROWS)
      .prepare(),
    stream: selectStream(db).where(streamServed).orderBy(tcpServices.id).prepare(),
    domains: selectDomains(db)
      .where(gt(domains.id, sql.placeholder('after')))
      .orderBy(domains.id)
      .limit(STATE_PAGE_ROWS)
      .prepare(),
    challenges: db
      .select({ token: acmeChallenges.token, answer: acmeChallenges.keyAuthorization })
      .from(acmeChallenges)
      .prepare(),
    // A scoped run's (every change's) fixed reads.
    policies: db.select().from(accessPolicies).prepare(),
    tokenNetworks: db
      .select({ id: nodes.id })
      .from(nodes)
      .where(
        and(
          eq(nodes.isGateway, true),
          eq(nodes.networksSetBy, 'node'),
          eq(nodes.enabled, true),
          eq(nodes.isLocal, false),
        ),
      )
      .limit(1)
      .prepare(),
  };
}

const queriesFor = preparedPerDb(prepareQueries);

/**
 * Rows of a table that grows with the services read per page (keyset, by id), the event loop given back between pages
 * (`Store.pagedSnapshot`): 100,000 rows read and converted in one turn held every request behind them.
 */
export const STATE_PAGE_ROWS = 2000;

/** Every row `page` gives, page after page (`after`: the last id read), each page converted by `convert`. */
async function readPages<T>(
  page: (after: number) => Promise<unknown[]>,
  convert: (rows: unknown[]) => T[],
  pause: () => Promise<void>,
): Promise<T[]> {
  const all: T[] = [];
  let after = 0;
  for (;;) {
    const rows = await page(after);
    for (const item of convert(rows)) all.push(item);
    // Each row's first column is its id.
    const last = rows.at(-1) as [id: number] | undefined;
    if (rows.length < STATE_PAGE_ROWS || last === undefined) return all;
    after = last[0];
    await pause();
  }
}

/** An IP list column as drizzle would decode it (`nonEmptyList` turned `[]` into null). */
const parseIpList = (json: string | null): string[] => (json === null ? [] : (JSON.parse(json) as string[]));

type PeerRow = Awaited<ReturnType<ReturnType<typeof queriesFor>['peers']['all']>>[number];

async function loadPeers(db: ReadDb, secrets: SecretBox): Promise<DesiredPeer[]> {
  return toPeers(await queriesFor(db).peers.all(), secrets);
}

/** The peers of `ids` (as `loadPeers`: enabled, non-local nodes only), by primary key. */
async function loadScopedPeers(db: ReadDb, secrets: SecretBox, ids: readonly number[]): Promise<DesiredPeer[]> {
  if (ids.length === 0) return [];
  const rows = await readInParts(
    ids,
    SCOPE_VALUES_PER_QUERY,
    async (part) =>
      await selectPeers(db)
        .peers.where(and(eq(nodes.enabled, true), eq(nodes.isLocal, false), inArray(nodes.id, part)))
        .orderBy(nodes.id)
        .all(),
    (row) => row.id,
  );
  return toPeers(rows, secrets);
}

function toPeers(rows: PeerRow[], secrets: SecretBox): DesiredPeer[] {
  return rows.map((node) => ({
    nodeId: node.id,
    publicKey: node.publicKey,
    presharedKey: node.presharedKeyEnc ? secrets.decrypt(node.presharedKeyEnc) : null,
    address: node.address,
    allowedIps:
      node.isGateway && node.gatewayNetwork
        ? [`${node.address}/32`, node.gatewayNetwork, ...node.extraGatewayNetworks]
        : [`${node.address}/32`],
    // Full-tunnel nodes may leave through the gateway (forwarded and masqueraded); the others stay isolated.
    allowInternet: node.allowInternet,
    ...(node.isGateway && node.networksSetBy === 'node' ? { networksByToken: true } : {}),
  }));
}

async function loadHttpRoutes(db: ReadDb, pause: () => Promise<void>): Promise<DesiredHttpRoute[]> {
  const { http } = queriesFor(db);
  return readPages(
    (after) => http.values({ after }),
    (rows) => toHttpRoutes(rows as HttpRow[]),
    pause,
  );
}

function toHttpRoutes(rows: HttpRow[]): DesiredHttpRoute[] {
  return rows.map(
    ([id, nodeId, domain, pathLocation, backendProto, backendHost, backendPort, allowedIps, blockedIps]) => ({
      serviceId: id,
      nodeId,
      domain: domain === '' ? null : domain,
      pathLocation,
      backendProto,
      backendHost,
      backendPort,
      allowedIps: parseIpList(allowedIps),
      blockedIps: parseIpList(blockedIps),
    }),
  );
}

async function loadStreamRoutes(db: ReadDb): Promise<DesiredStreamRoute[]> {
  return toStreamRoutes((await queriesFor(db).stream.values()) as StreamRow[]);
}

function toStreamRoutes(rows: StreamRow[]): DesiredStreamRoute[] {
  return rows.map(([id, nodeId, proto, port, ssl, domain, backendHost, backendPort, allowedIps, blockedIps]) => ({
    serviceId: id,
    nodeId,
    proto,
    port,
    ssl: ssl === 1,
    domain,
    backendHost,
    backendPort,
    allowedIps: parseIpList(allowedIps),
    blockedIps: parseIpList(blockedIps),
  }));
}

async function loadDomains(db: ReadDb, pause: () => Promise<void>): Promise<DesiredDomain[]> {
  const query = queriesFor(db).domains;
  return readPages(
    (after) => query.values({ after }),
    (rows) => toDomains(rows as DomainRow[]),
    pause,
  );
}

function toDomains(rows: DomainRow[]): DesiredDomain[] {
  return rows.map(([domainId, domain, ssl, pemFingerprint, challenge, dnsProviderId, acmeCaId]) => ({
    domainId,
    domain,
    ssl,
    pemFingerprint,
    challenge,
    dnsProviderId,
    acmeCaId,
  }));
}

async function loadChallenges(db: ReadDb): Promise<Map<string, string>> {
  const rows = (await queriesFor(db).challenges.values()) as [token: string, answer: string][];
  return new Map(rows);
}

/**
 * Everything the data plane serves, computed from the DB alone, so a restarted (or second) gateway converges on
 * exactly what the DB says. The reads share one snapshot: a concurrent write cannot leave a route pointing at a
 * domain or node from a different moment (on PostgreSQL without holding any gateway's writes up). The routes and
 * domains are read in pages with the event loop given back between them (`Store.pagedSnapshot`; the writes go on).
 */
export async function loadDesiredState(deps: StateDeps, settings: GatewaySettings): Promise<DesiredState> {
  const { gatewayId, ...side } = settings;
  const gateway = { ...side, privateKey: await readGatewayPrivateKey(deps, gatewayId) };
  const now = deps.now?.() ?? new Date();
  return deps.db.pagedSnapshot(async (tx, pause) => {
    const protectedBy = await loadServicePolicies(tx);
    const http = await loadHttpRoutes(tx, pause);
    for (const route of http) {
      const policyId = protectedBy.get(route.serviceId);
      if (policyId !== undefined) route.accessPolicyId = policyId;
    }
    return {
      gateway,
      peers: await loadPeers(tx, deps.secrets),
      http,
      stream: await loadStreamRoutes(tx),
      domains: await loadDomains(tx, pause),
      challenges: await loadChallenges(tx),
      access: await loadAccessState(tx, deps.secrets, now),
    };
  });
}

/**
 * The TCP/UDP services alone (a few hundred at most: one per port), for what needs their instances and nothing else
 * (the traffic counters every minute): reading the whole desired state for them read and planned every HTTP service.
 */
export async function loadStreamState(deps: Pick<StateDeps, 'db'>): Promise<DesiredStreamRoute[]> {
  return deps.db.snapshot((tx) => loadStreamRoutes(tx));
}

/** SQL `LIKE` wildcards and the escape character, escaped (`\`): a name is matched as written. */
const likeEscaped = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The hosts whose routes a scope's rows decide whole (`ScopedState.hosts`): the scope's hosts, the wildcard above each
 * name, and the exact domains one label below each wildcard (their entry depends on whether the wildcard has routes).
 * A burst's wildcards are looked up together: a suffix match uses no index, so each query reads every domain's name.
 */
async function scopeHosts(db: ReadDb, scope: ApplyScope): Promise<string[]> {
  const hosts = new Set(scope.hosts);
  const wildcards = new Set<string>();
  for (const host of scope.hosts) {
    if (host === '') continue;
    if (isWildcardDomainName(host)) wildcards.add(host);
    else {
      const wildcard = wildcardOf(host);
      if (wildcard !== null) hosts.add(wildcard);
    }
  }
  for (const part of partsOf([...wildcards])) {
    // `*.example.com` -> names ending in `.example.com`; those one label below are kept.
    const suffixes = part.map(
      (wildcard) => sql`${domains.domain} like ${`%${likeEscaped(wildcard.slice(1))}`} escape '\\'`,
    );
    const below = await db
      .select({ domain: domains.domain })
      .from(domains)
      .where(or(...suffixes))
      .all();
    for (const { domain } of below) {
      const wildcard = wildcardOf(domain);
      if (wildcard !== null && wildcards.has(wildcard)) hosts.add(domain);
    }
  }
  return [...hosts];
}

/** The protecting policy of each route of `http` (as `loadServicePolicies`, for these services only). */
async function protectScoped(db: ReadDb, http: DesiredHttpRoute[], domainRows: DesiredDomain[]): Promise<void> {
  if (http.length === 0) return;
  const policies: AccessPolicyRow[] = await queriesFor(db).policies.all();
  if (policies.length === 0) return;
  const byDomainId = new Map<number, AccessPolicyRow>();
  const byService = new Map<number, AccessPolicyRow>();
  for (const row of policies) {
    if (row.domainId !== null) byDomainId.set(row.domainId, row);
    if (row.httpServiceId !== null) byService.set(row.httpServiceId, row);
  }
  const domainIds = new Map(domainRows.map((d) => [d.domain, d.domainId]));
  for (const route of http) {
    const domainId = route.domain === null ? undefined : domainIds.get(route.domain);
    const own = byService.get(route.serviceId) ?? null;
    const policyId = protectingPolicyId(own, domainId === undefined ? null : (byDomainId.get(domainId) ?? null));
    if (policyId !== null) route.accessPolicyId = policyId;
  }
}

/** Whether a peer's subnets were set by its node's token (`networksByToken` in loadPeers): one indexed read. */
async function hasTokenNetworks(db: ReadDb): Promise<boolean> {
  return (await queriesFor(db).tokenNetworks.all()).length > 0;
}

/**
 * The rows of a scope (`ScopedState`), in one snapshot like `loadDesiredState`: what a change to these hosts costs
 * is a few indexed reads (http_services_domain_idx, the domains' unique name), whatever the number of services.
 */
export async function loadScopedState(deps: StateDeps, scope: ApplyScope): Promise<ScopedState> {
  const now = deps.now?.() ?? new Date();
  return deps.db.snapshot(async (tx) => {
    const hosts = await scopeHosts(tx, scope);
    const names = hosts.filter((host) => host !== '');
    const http = hosts.length === 0 ? [] : toHttpRoutes(await scopedHttpRows(tx, hosts));
    const domainRows = names.length === 0 ? [] : toDomains(await namedDomainRows(tx, names));
    await protectScoped(tx, http, domainRows);
    const streams = await loadScopedStreams(tx, scope.streams ?? []);
    const tokenNetworks = await hasTokenNetworks(tx);
    const ofNodes =
      scope.nodes === undefined || scope.nodes.length === 0
        ? {}
        : { nodes: [...new Set(scope.nodes)], peers: await loadScopedPeers(tx, deps.secrets, scope.nodes) };
    // A TCP/UDP change alone pushes nothing to the HTTP instance: no access state.
    if (hosts.length === 0) return { hosts, http, domains: domainRows, tokenNetworks, ...streams, ...ofNodes };
    const access = await loadAccessState(tx, deps.secrets, now);
    return { hosts, http, domains: domainRows, access, tokenNetworks, ...streams, ...ofNodes };
  });
}

/**
 * The TCP/UDP services on a scope's instance keys (one per key: `tcp_services_port_uq`) and the domains their TLS
 * serves: an indexed read per key.
 */
async function loadScopedStreams(
  db: ReadDb,
  keys: readonly string[],
): Promise<Pick<ScopedState, 'streams' | 'stream' | 'streamDomains'>> {
  const parsed = keys.flatMap((key) => {
    const found = parseStreamKey(key);
    return found === null ? [] : [{ key, ...found }];
  });
  if (parsed.length === 0) return {};
  const stream = toStreamRoutes(
    await readInParts(
      parsed,
      // Two values per key (its protocol and port).
      SCOPE_VALUES_PER_QUERY / 2,
      async (part) =>
        (await selectStream(db)
          .where(
            and(
              streamServed,
              or(...part.map(({ proto, port }) => and(eq(tcpServices.proto, proto), eq(tcpServices.port, port)))),
            ),
          )
          .orderBy(tcpServices.id)
          .values()) as StreamRow[],
      firstColumn,
    ),
  );
  // Those ending TLS with a domain's certificate (the others serve the gateway's fallback or none).
  const names = [...new Set(stream.flatMap((route) => (route.ssl && route.domain ? [route.domain] : [])))];
  const streamDomains = names.length === 0 ? [] : toDomains(await namedDomainRows(db, names));
  return { streams: [...new Set(parsed.map(({ key }) => key))], stream, streamDomains };
}
