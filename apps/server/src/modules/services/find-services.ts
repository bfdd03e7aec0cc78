import { eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { FindServicesQuery, FoundService, ListResponse } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { domains, httpServices, nodes, tcpServices } from '../../db/schema.js';
import { narrowByAddressText } from '../../db/service-search.js';
import { toHttpService, toTcpService } from './present.js';

// "Find service": every node's services of both types whose name or public address contains the text,
// one page ordered by name. The address is built in SQL the way present.ts builds `publicAccess`, so whatever the
// console shows (or a part of it: a domain, domain/path, a port, host:port) finds the service.

const lowerContains = (text: SQL, search: string): SQL => sql`instr(lower(${text}), ${search.toLowerCase()}) > 0`;

function httpAddress(deps: AppDeps): SQL {
  const port = (n: number) => (n === 443 ? '' : `:${n}`);
  return sql`case when ${httpServices.domain} = ''
    then ${`https://${deps.config.publicHost}${port(deps.config.noDomainHttpsPort)}`}
    else 'https://' || ${httpServices.domain} || ${port(deps.config.httpsPort)} end || ${httpServices.pathLocation}`;
}

const tcpAddress = (deps: AppDeps): SQL =>
  sql`${tcpServices.proto} || '://' || coalesce(${tcpServices.domain}, ${deps.config.publicHost}) || ':' || ${tcpServices.port}`;

/** The texts of an address that come from the gateway's settings, not from a service's columns. */
function fixedAddressTexts(deps: AppDeps): string[] {
  const { publicHost, httpsPort, noDomainHttpsPort } = deps.config;
  return ['https', 'tcp', 'udp', publicHost, String(httpsPort), String(noDomainHttpsPort)];
}

/** `column in (…)`, one parameter per node id; no scope: no condition. */
const inNodes = (column: SQL, nodeScope: readonly number[] | null): SQL | null =>
  nodeScope === null
    ? null
    : nodeScope.length === 0
      ? sql`1 = 0`
      : sql`${column} in (${sql.join(
          nodeScope.map((id) => sql`${id}`),
          sql`, `,
        )})`;

/** `where` of the conditions that hold; none: no clause. */
const whereOf = (conditions: (SQL | null | undefined)[]): SQL => {
  const held = conditions.filter((condition) => condition !== null && condition !== undefined);
  return held.length > 0 ? sql`where ${sql.join(held, sql` and `)}` : sql``;
};

/**
 * `type, id, name` of every match, both types in one ordered set (the page is cut in SQL); `nodeScope`: only
 * services of these nodes (the account's node scope).
 */
function matches(deps: AppDeps, search: string | undefined, nodeScope: readonly number[] | null): SQL {
  // The trigram index picks the candidates where it can; the exact conditions decide (db/service-search.ts).
  const narrowing = search
    ? narrowByAddressText(deps.db.engine, search, fixedAddressTexts(deps))
    : { http: undefined, tcp: undefined };
  const httpWhere = whereOf([
    search ? narrowing.http : null,
    search
      ? sql`(${lowerContains(sql`${httpServices.name}`, search)} or ${lowerContains(httpAddress(deps), search)})`
      : null,
    inNodes(sql`${httpServices.nodeId}`, nodeScope),
  ]);
  const tcpWhere = whereOf([
    search ? narrowing.tcp : null,
    search
      ? sql`(${lowerContains(sql`${tcpServices.name}`, search)} or ${lowerContains(tcpAddress(deps), search)})`
      : null,
    inNodes(sql`${tcpServices.nodeId}`, nodeScope),
  ]);
  return sql`select 'http' as type, ${httpServices.id} as id, ${httpServices.name} as name from ${httpServices} ${httpWhere}
    union all
    select 'tcp' as type, ${tcpServices.id} as id, ${tcpServices.name} as name from ${tcpServices} ${tcpWhere}`;
}

export async function findServices(
  deps: AppDeps,
  { page, limit, q }: FindServicesQuery,
  nodeScope: readonly number[] | null = null,
): Promise<ListResponse<FoundService>> {
  const found = matches(deps, q, nodeScope);
  const pageRows = (
    await deps.db.values<['http' | 'tcp', number]>(
      sql`select type, id from (${found}) as found order by lower(name), type, id
        limit ${limit} offset ${(page - 1) * limit}`,
    )
  ).map(([type, id]) => ({ type, id }));
  const [counted] = await deps.db.values<[number]>(sql`select count(*) from (${found}) as found`);
  const total = counted?.[0] ?? 0;

  const httpIds = pageRows.filter((row) => row.type === 'http').map((row) => row.id);
  const tcpIds = pageRows.filter((row) => row.type === 'tcp').map((row) => row.id);
  const httpRows = httpIds.length
    ? await deps.db
        .select({ row: httpServices, ssl: domains.ssl, nodeName: nodes.name })
        .from(httpServices)
        .innerJoin(nodes, eq(nodes.id, httpServices.nodeId))
        .leftJoin(domains, eq(domains.domain, httpServices.domain))
        .where(inArray(httpServices.id, httpIds))
        .all()
    : [];
  const tcpRows = tcpIds.length
    ? await deps.db
        .select({ row: tcpServices, nodeName: nodes.name })
        .from(tcpServices)
        .innerJoin(nodes, eq(nodes.id, tcpServices.nodeId))
        .where(inArray(tcpServices.id, tcpIds))
        .all()
    : [];
  const byKey = new Map<string, FoundService>();
  for (const { row, ssl, nodeName } of httpRows) {
    byKey.set(`http:${row.id}`, { type: 'http', nodeName, service: toHttpService(deps.config, row, ssl) });
  }
  for (const { row, nodeName } of tcpRows)
    byKey.set(`tcp:${row.id}`, { type: 'tcp', nodeName, service: toTcpService(deps.config, row) });
  // A row deleted between the two reads is left out rather than failing the search.
  const data = pageRows.flatMap((row) => byKey.get(`${row.type}:${row.id}`) ?? []);
  return { data, page, limit, total };
}
