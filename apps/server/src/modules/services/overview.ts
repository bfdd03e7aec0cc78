import { eq, inArray, sql, type SQL } from 'drizzle-orm';
import type {
  ServiceCertificate,
  ServiceHealth,
  ServiceOverview,
  ServiceOverviewPage,
  ServiceOverviewQuery,
  ServiceType,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { fieldError } from '../../errors.js';
import { domains, httpServices, nodes, tcpServices } from '../../db/schema.js';
import { narrowByText, type SearchNarrowing } from '../../db/service-search.js';
import { toHttpService, toTcpService } from './present.js';

// The services overview: every node's services of both types in one list, searched, filtered, sorted and
// paged in SQL, so a page costs the same at 10 services as at 10,000. Facts that live outside the database (a
// node's tunnel, a backend's health, a certificate) become id lists the SQL filters by; each is bounded by what
// exists (nodes, services, domains). docs/api.md "Services overview".

/** The backends' health as the gateway's checks see them (the observer's health checker). */
export type HealthSource = { list(): Promise<ServiceHealth[]> };

const lowerContains = (text: SQL, search: string): SQL => sql`instr(lower(${text}), ${search.toLowerCase()}) > 0`;

/** A condition that holds for no row (an empty id list). */
const never = sql`1 = 0`;
/** `column in (…)` with one parameter per value; no value: no row. */
const inList = (column: SQL, values: readonly (number | string)[]): SQL =>
  values.length === 0
    ? never
    : sql`${column} in (${sql.join(
        values.map((value) => sql`${value}`),
        sql`, `,
      )})`;

/** A node's live status by its public key (the local node is the gateway itself: always online). */
function statusOf(deps: AppDeps, node: { publicKey: string; isLocal: boolean }) {
  if (node.isLocal) return 'online' as const;
  return deps.dataPlane.status.get(node.publicKey)?.status ?? ('offline' as const);
}

/** A certificate that failed or is past its end: the service is not served with a certificate browsers accept. */
export function isFailingCertificate(info: { state: string; notAfter: string | null } | null, now: Date): boolean {
  if (!info) return false;
  return info.state === 'failed' || (info.notAfter !== null && Date.parse(info.notAfter) < now.getTime());
}

/** What the status filter needs to know from outside the database. */
interface OutsideFacts {
  offlineNodeIds: number[];
  downHttpIds: number[];
  downTcpIds: number[];
  failingDomains: string[];
}

async function outsideFacts(deps: AppDeps, status: ServiceOverviewQuery['status'], health: HealthSource) {
  const facts: OutsideFacts = { offlineNodeIds: [], downHttpIds: [], downTcpIds: [], failingDomains: [] };
  if (status === 'node-offline') {
    const rows = await deps.db
      .select({ id: nodes.id, publicKey: nodes.publicKey, isLocal: nodes.isLocal })
      .from(nodes)
      .where(eq(nodes.enabled, true))
      .all();
    facts.offlineNodeIds = rows.filter((row) => statusOf(deps, row) === 'offline').map((row) => row.id);
  } else if (status === 'backend-down') {
    for (const h of await health.list()) {
      if (h.state !== 'down') continue;
      (h.type === 'http' ? facts.downHttpIds : facts.downTcpIds).push(h.id);
    }
  } else if (status === 'certificate-failed') {
    const now = deps.now();
    const names = await deps.db.select({ domain: domains.domain }).from(domains).all();
    facts.failingDomains = names
      .map((row) => row.domain)
      .filter((name) => isFailingCertificate(deps.dataPlane.certificates.info(name), now));
  }
  return facts;
}

type Branch = {
  type: ServiceType;
  table: typeof httpServices | typeof tcpServices;
  kind: SQL;
  search: (q: string) => SQL;
};

const httpBranch: Branch = {
  type: 'http',
  table: httpServices,
  kind: sql`'http'`,
  search: (q) =>
    sql`(${lowerContains(sql`${httpServices.name}`, q)} or ${lowerContains(sql`${httpServices.domain}`, q)} or ${lowerContains(sql`${httpServices.pathLocation}`, q)})`,
};
const tcpBranch: Branch = {
  type: 'tcp',
  table: tcpServices,
  kind: sql`${tcpServices.proto}`,
  search: (q) =>
    sql`(${lowerContains(sql`${tcpServices.name}`, q)} or ${lowerContains(sql`coalesce(${tcpServices.domain}, '')`, q)} or instr(cast(${tcpServices.port} as text), ${q}) > 0)`,
};

/**
 * One type's half of the union: its rows that pass the filters with the columns the sort uses (`rows`), and the same
 * rows bare, to count them (`count`).
 */
function branchSelect(
  branch: Branch,
  query: ServiceOverviewQuery,
  facts: OutsideFacts,
  narrowing: SearchNarrowing,
  after: Cursor | null,
  nodeScope: readonly number[] | null,
): { rows: SQL; count: SQL } | null {
  const { table } = branch;
  if (query.kind === 'http' && branch.type !== 'http') return null;
  if ((query.kind === 'tcp' || query.kind === 'udp') && branch.type !== 'tcp') return null;
  const nodeServed = sql`(${nodes.enabled} or ${nodes.isLocal})`;
  const conditions: SQL[] = [];
  if (query.kind === 'tcp' || query.kind === 'udp') conditions.push(sql`${tcpServices.proto} = ${query.kind}`);
  if (query.q) {
    // The trigram index picks the candidates; the exact condition decides (db/service-search.ts).
    const candidates = narrowing[branch.type];
    if (candidates) conditions.push(candidates);
    conditions.push(branch.search(query.q));
  }
  if (query.nodeId !== undefined) conditions.push(sql`${table.nodeId} = ${query.nodeId}`);
  if (nodeScope !== null) conditions.push(inList(sql`${table.nodeId}`, nodeScope));
  if (query.domain !== undefined) conditions.push(sql`${table.domain} = ${query.domain}`);
  switch (query.status) {
    case 'public':
      conditions.push(sql`${table.enabled} and ${table.applyError} is null and ${nodeServed}`);
      break;
    case 'disabled':
      conditions.push(sql`(not ${table.enabled} or not ${nodeServed})`);
      break;
    case 'set-aside':
      conditions.push(sql`${table.enabled} and ${table.applyError} is not null`);
      break;
    case 'node-offline':
      conditions.push(inList(sql`${table.nodeId}`, facts.offlineNodeIds));
      break;
    case 'backend-down':
      conditions.push(inList(sql`${table.id}`, branch.type === 'http' ? facts.downHttpIds : facts.downTcpIds));
      break;
    case 'certificate-failed':
      conditions.push(
        branch.type === 'http'
          ? inList(sql`${httpServices.domain}`, facts.failingDomains)
          : sql`${tcpServices.ssl} and ${inList(sql`${tcpServices.domain}`, facts.failingDomains)}`,
      );
      break;
    case undefined:
      break;
  }
  const where = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
  // The rows after the cursor's, in the order of `orderOf` by name: a range of the (lower(name), id) index.
  const seek = after ? seekAfter(branch, table, after, query.order === 'desc') : null;
  const rowsWhere = seek ? sql`where ${sql.join([...conditions, seek], sql` and `)}` : where;
  // Only what the sort needs is computed, and the nodes are joined only when a sort or filter reads them: every row
  // of both tables passes through here (at 10,000 services the join alone doubled the time of a page).
  const columns = [
    sql`${sql.raw(`'${branch.type}'`)} as type`,
    sql`${table.id} as id`,
    sql`lower(${table.name}) as sort_name`,
  ];
  if (query.sort === 'node') columns.push(sql`lower(${nodes.name}) as sort_node`);
  if (query.sort === 'kind') columns.push(sql`${branch.kind} as kind`);
  // Public first, then switched on but set aside, then off (as the per-node lists sort by status).
  if (query.sort === 'status')
    columns.push(
      sql`case when ${table.enabled} and ${table.applyError} is null and ${nodeServed} then 0 when ${table.enabled} and ${table.applyError} is not null then 1 else 2 end as rank`,
    );
  const isFilteredByNode = query.status === 'public' || query.status === 'disabled';
  const joinFor = (isNeeded: boolean) => (isNeeded ? sql`inner join ${nodes} on ${nodes.id} = ${table.nodeId}` : sql``);
  const sortJoin = joinFor(isFilteredByNode || query.sort === 'node' || query.sort === 'status');
  return {
    rows: sql`select ${sql.join(columns, sql`, `)} from ${table} ${sortJoin} ${rowsWhere}`,
    count: sql`select 1 from ${table} ${joinFor(isFilteredByNode)} ${where}`,
  };
}

function orderOf(query: ServiceOverviewQuery): SQL {
  const direction = query.order === 'desc' ? sql`desc` : sql`asc`;
  const first =
    query.sort === 'node'
      ? sql`sort_node ${direction}, sort_name ${direction}`
      : query.sort === 'kind'
        ? sql`kind ${direction}, sort_name`
        : query.sort === 'status'
          ? sql`rank ${direction}, sort_name`
          : null;
  // Equal keys keep a fixed order, so pages never shuffle between reads. By name (the default), equal names follow
  // id then type, all in the sort's direction: each table's (lower(name), id) index then yields its rows in that
  // order, and SQLite merges the two walks instead of sorting every row (a deep page walks the index, ~6 ms at the
  // 100,000th row, where sorting both tables took ~120 ms).
  return first ? sql`${first}, type, id` : sql`sort_name ${direction}, id ${direction}, type ${direction}`;
}

/** A row's place in the order by name: its sort key, id and type (`next` and `after`, base64url JSON). */
type Cursor = { name: string; id: number; type: ServiceType };

const encodeCursor = (cursor: Cursor): string =>
  Buffer.from(JSON.stringify([cursor.name, cursor.id, cursor.type])).toString('base64url');

function decodeCursor(text: string): Cursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    value = null;
  }
  const [name, id, type, ...rest] = Array.isArray(value) ? (value as unknown[]) : [];
  if (
    typeof name === 'string' &&
    typeof id === 'number' &&
    Number.isSafeInteger(id) &&
    (type === 'http' || type === 'tcp') &&
    rest.length === 0
  )
    return { name, id, type };
  throw fieldError('after', 'Not a cursor this list gave');
}

/**
 * `branch`'s rows after `after` in the order by name (sort key, then id, then type, all ascending or all
 * descending): a range scan of the branch's (lower(name), id) index. The type is the branch's own, so it decides
 * only between rows equal in name and id.
 */
function seekAfter(branch: Branch, table: Branch['table'], after: Cursor, isDescending: boolean): SQL {
  const later = isDescending ? sql`<` : sql`>`;
  const from = isDescending ? sql`<=` : sql`>=`;
  const isTypeLater = isDescending ? branch.type < after.type : branch.type > after.type;
  const sameId = isTypeLater ? sql` or ${table.id} = ${after.id}` : sql``;
  return sql`lower(${table.name}) ${from} ${after.name} and (lower(${table.name}) ${later} ${after.name} or ${table.id} ${later} ${after.id}${sameId})`;
}

/**
 * Every node's services, one page, with each one's node and the certificate it is served with. `nodeScope`: only
 * services of these nodes (the account's node scope, docs/api.md "Node scope"); null: every node's.
 */
export async function listServiceOverview(
  deps: AppDeps,
  query: ServiceOverviewQuery,
  health: HealthSource,
  nodeScope: readonly number[] | null = null,
): Promise<ServiceOverviewPage> {
  const { page, limit } = query;
  const isByName = query.sort === undefined || query.sort === 'name';
  if (query.after !== undefined && !isByName) throw fieldError('after', 'A cursor follows the order by name only');
  const after = query.after === undefined ? null : decodeCursor(query.after);
  const facts = await outsideFacts(deps, query.status, health);
  const narrowing = query.q ? narrowByText(deps.db.engine, query.q) : { http: undefined, tcp: undefined };
  const branches = [httpBranch, tcpBranch]
    .map((branch) => branchSelect(branch, query, facts, narrowing, after, nodeScope))
    .filter((branch) => branch !== null);
  // The page and the count are two statements: a window count on the page's statement would make SQLite
  // materialise and sort every row (14 ms at 10,000 services, against about 1 ms for a sorted LIMIT and a count).
  // The ORDER BY belongs to the compound select itself (not to a subquery over it): only then does SQLite merge the
  // branches' index-ordered walks.
  const pageRows = await deps.db.values<[ServiceType, number, string]>(
    sql`${sql.join(
      branches.map((branch) => branch.rows),
      sql` union all `,
    )} order by ${orderOf(query)} limit ${limit} offset ${after ? 0 : (page - 1) * limit}`,
  );
  const [counted] = await deps.db.values<[number]>(
    sql`select count(*) from (${sql.join(
      branches.map((branch) => branch.count),
      sql` union all `,
    )}) as overview`,
  );
  const total = counted?.[0] ?? 0;
  const data = await loadRows(
    deps,
    pageRows.map(([type, id]) => ({ type, id })),
  );
  // By name, a full page says where the next one starts (the last row's place; its sort key is the third column).
  const last = pageRows.length === limit ? pageRows[pageRows.length - 1] : undefined;
  const next = isByName ? (last ? encodeCursor({ type: last[0], id: last[1], name: last[2] }) : null) : undefined;
  return { data, page, limit, total, ...(next === undefined ? {} : { next }) };
}

/** The page's rows, read in full with their node, in the page's order (a row deleted meanwhile is left out). */
async function loadRows(deps: AppDeps, refs: { type: ServiceType; id: number }[]): Promise<ServiceOverview[]> {
  const httpIds = refs.filter((ref) => ref.type === 'http').map((ref) => ref.id);
  const tcpIds = refs.filter((ref) => ref.type === 'tcp').map((ref) => ref.id);
  const nodeColumns = { node: nodes };
  const httpRows = httpIds.length
    ? await deps.db
        .select({ row: httpServices, ssl: domains.ssl, ...nodeColumns })
        .from(httpServices)
        .innerJoin(nodes, eq(nodes.id, httpServices.nodeId))
        .leftJoin(domains, eq(domains.domain, httpServices.domain))
        .where(inArray(httpServices.id, httpIds))
        .all()
    : [];
  const tcpRows = tcpIds.length
    ? await deps.db
        .select({ row: tcpServices, ...nodeColumns })
        .from(tcpServices)
        .innerJoin(nodes, eq(nodes.id, tcpServices.nodeId))
        .where(inArray(tcpServices.id, tcpIds))
        .all()
    : [];
  const nodeView = (node: typeof nodes.$inferSelect): ServiceOverview['node'] => ({
    id: node.id,
    name: node.name,
    status: statusOf(deps, node),
    enabled: node.enabled,
    isLocal: node.isLocal,
  });
  const certificateOf = (domain: string | null): ServiceCertificate | null => {
    if (!domain) return null;
    const info = deps.dataPlane.certificates.info(domain);
    return info ? { state: info.state, notAfter: info.notAfter, error: info.error } : null;
  };
  const byKey = new Map<string, ServiceOverview>();
  for (const { row, ssl, node } of httpRows) {
    byKey.set(`http:${row.id}`, {
      type: 'http',
      node: nodeView(node),
      certificate: certificateOf(row.domain),
      service: toHttpService(deps.config, row, ssl),
    });
  }
  for (const { row, node } of tcpRows) {
    byKey.set(`tcp:${row.id}`, {
      type: 'tcp',
      node: nodeView(node),
      certificate: row.ssl ? certificateOf(row.domain) : null,
      service: toTcpService(deps.config, row),
    });
  }
  return refs.flatMap((ref) => byKey.get(`${ref.type}:${ref.id}`) ?? []);
}
