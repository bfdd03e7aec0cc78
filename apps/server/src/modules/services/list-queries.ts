import { and, asc, count, desc, eq, getTableColumns, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { ServiceSort, SortOrder } from '@postern/contract';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { ReadDb } from '../../db/client.js';
import { domains, httpServices, tcpServices } from '../../db/schema.js';
import { mappedRows, preparedPerDb } from '../../db/prepared.js';

// Service lists are the hot read path (console cards, the domains page, the agent), so each list shape is prepared
// once per database (db/prepared.ts). Every shape is served by an index: (node_id, id), (domain, id)
// or the primary key, so a page is an index range scan and the count a covering-index count.

const scope = sql.placeholder('scope');
const limit = sql.placeholder('limit');
const offset = sql.placeholder('offset');

// The page's ids come from a subquery on the (covering) index, then only those rows are read and joined: with a
// plain OFFSET, SQLite would read and join every skipped row (the last of 1,000 pages: ~6 ms instead of ~0.3 ms).
const httpPageFields = { row: httpServices, ssl: domains.ssl };

function prepareHttp(db: ReadDb) {
  const page = (where?: SQL) =>
    mappedRows(
      db
        .select(httpPageFields)
        .from(httpServices)
        .leftJoin(domains, eq(domains.domain, httpServices.domain))
        .where(
          inArray(
            httpServices.id,
            db
              .select({ id: httpServices.id })
              .from(httpServices)
              .where(where)
              .orderBy(httpServices.id)
              .limit(limit)
              .offset(offset),
          ),
        )
        .orderBy(httpServices.id)
        .prepare(),
      httpPageFields,
    );
  const total = (where?: SQL) => db.select({ n: count() }).from(httpServices).where(where).prepare();
  return {
    all: page(),
    byNode: page(eq(httpServices.nodeId, scope)),
    byDomain: page(eq(httpServices.domain, scope)),
    countAll: total(),
    countByNode: total(eq(httpServices.nodeId, scope)),
    countByDomain: total(eq(httpServices.domain, scope)),
  };
}

const tcpColumns = getTableColumns(tcpServices);

function prepareTcp(db: ReadDb) {
  const page = (where?: SQL) =>
    mappedRows(
      db
        .select(tcpColumns)
        .from(tcpServices)
        .where(
          inArray(
            tcpServices.id,
            db
              .select({ id: tcpServices.id })
              .from(tcpServices)
              .where(where)
              .orderBy(tcpServices.id)
              .limit(limit)
              .offset(offset),
          ),
        )
        .orderBy(tcpServices.id)
        .prepare(),
      tcpColumns,
    );
  const total = (where?: SQL) => db.select({ n: count() }).from(tcpServices).where(where).prepare();
  return {
    all: page(),
    byNode: page(eq(tcpServices.nodeId, scope)),
    byDomain: page(eq(tcpServices.domain, scope)),
    countAll: total(),
    countByNode: total(eq(tcpServices.nodeId, scope)),
    countByDomain: total(eq(tcpServices.domain, scope)),
  };
}

const prepared = preparedPerDb((db: ReadDb) => ({ http: prepareHttp(db), tcp: prepareTcp(db) }));

/** Which services a list shows: all of one type, one node's, or those on one domain. */
export type ListScope = { all: true } | { nodeId: number } | { domain: string };

export interface PageWindow {
  page: number;
  limit: number;
}

function placeholders(listScope: ListScope, { page, limit: size }: PageWindow) {
  const value = 'nodeId' in listScope ? listScope.nodeId : 'domain' in listScope ? listScope.domain : null;
  return { scope: value, limit: size, offset: (page - 1) * size };
}

const scopeWhere = (listScope: ListScope, nodeId: SQLiteColumn, domain: SQLiteColumn): SQL | undefined =>
  'nodeId' in listScope
    ? eq(nodeId, listScope.nodeId)
    : 'domain' in listScope
      ? eq(domain, listScope.domain)
      : undefined;

/** Column text contains `text`, case-insensitively; instr() so nothing the operator typed acts as a wildcard. */
const contains = (column: SQLiteColumn, text: string): SQL => sql`instr(lower(${column}), ${text.toLowerCase()}) > 0`;

/** What shapes a list beyond its scope: a search text and a sort (docs/api.md "Services"). */
export interface ListShape {
  q?: string | undefined;
  sort?: ServiceSort | undefined;
  order?: SortOrder | undefined;
  /** Only services of these nodes: the node scope of the account asking (docs/api.md "Node scope"); null: any. */
  nodes?: readonly number[] | null | undefined;
}

export const isShapedServiceList = (shape: ListShape): boolean =>
  Boolean(shape.q) || shape.sort !== undefined || shape.order === 'desc' || Boolean(shape.nodes);

const withinNodes = (nodeId: SQLiteColumn, nodes: readonly number[] | null | undefined): SQL | undefined =>
  nodes ? inArray(nodeId, [...nodes]) : undefined;

/** Public first, then switched on but set aside by the data plane, then switched off. */
const statusRank = (enabled: SQLiteColumn, applyError: SQLiteColumn): SQL =>
  sql`case when ${enabled} and ${applyError} is null then 0 when ${enabled} then 1 else 2 end`;

/** Equal keys keep creation order (by id), so pages do not shuffle between reads. */
function shapeOrder(
  shape: ListShape,
  columns: { id: SQLiteColumn; name: SQLiteColumn; enabled: SQLiteColumn; applyError: SQLiteColumn },
): SQL[] {
  const direction = (key: SQL) => (shape.order === 'desc' ? desc(key) : asc(key));
  if (shape.sort === 'name') return [direction(sql`lower(${columns.name})`), asc(columns.id)];
  if (shape.sort === 'status') return [direction(statusRank(columns.enabled, columns.applyError)), asc(columns.id)];
  return [direction(sql`${columns.id}`)];
}

/**
 * A searched, sorted or node-scoped page (name, domain, path or public port contains `q`): rarer, so not prepared.
 */
export async function shapedHttpPage(
  db: ReadDb,
  listScope: ListScope,
  { page, limit: size }: PageWindow,
  shape: ListShape,
) {
  const search = shape.q;
  const where = and(
    scopeWhere(listScope, httpServices.nodeId, httpServices.domain),
    withinNodes(httpServices.nodeId, shape.nodes),
    search
      ? or(
          contains(httpServices.name, search),
          contains(httpServices.domain, search),
          contains(httpServices.pathLocation, search),
        )
      : undefined,
  );
  const rows = await db
    .select({ row: httpServices, ssl: domains.ssl })
    .from(httpServices)
    .leftJoin(domains, eq(domains.domain, httpServices.domain))
    .where(where)
    .orderBy(...shapeOrder(shape, httpServices))
    .limit(size)
    .offset((page - 1) * size)
    .all();
  return { rows, total: (await db.select({ n: count() }).from(httpServices).where(where).get())?.n ?? 0 };
}

export async function shapedTcpPage(
  db: ReadDb,
  listScope: ListScope,
  { page, limit: size }: PageWindow,
  shape: ListShape,
) {
  const search = shape.q;
  const where = and(
    scopeWhere(listScope, tcpServices.nodeId, tcpServices.domain),
    withinNodes(tcpServices.nodeId, shape.nodes),
    search
      ? or(
          contains(tcpServices.name, search),
          contains(tcpServices.domain, search),
          sql`instr(cast(${tcpServices.port} as text), ${search}) > 0`,
        )
      : undefined,
  );
  const rows = await db
    .select()
    .from(tcpServices)
    .where(where)
    .orderBy(...shapeOrder(shape, tcpServices))
    .limit(size)
    .offset((page - 1) * size)
    .all();
  return { rows, total: (await db.select({ n: count() }).from(tcpServices).where(where).get())?.n ?? 0 };
}

export async function selectHttpPage(db: ReadDb, listScope: ListScope, window: PageWindow) {
  const q = prepared(db).http;
  const params = placeholders(listScope, window);
  if ('nodeId' in listScope)
    return { rows: await q.byNode.all(params), total: (await q.countByNode.get(params))?.n ?? 0 };
  if ('domain' in listScope)
    return { rows: await q.byDomain.all(params), total: (await q.countByDomain.get(params))?.n ?? 0 };
  return { rows: await q.all.all(params), total: (await q.countAll.get())?.n ?? 0 };
}

export async function selectTcpPage(db: ReadDb, listScope: ListScope, window: PageWindow) {
  const q = prepared(db).tcp;
  const params = placeholders(listScope, window);
  if ('nodeId' in listScope)
    return { rows: await q.byNode.all(params), total: (await q.countByNode.get(params))?.n ?? 0 };
  if ('domain' in listScope)
    return { rows: await q.byDomain.all(params), total: (await q.countByDomain.get(params))?.n ?? 0 };
  return { rows: await q.all.all(params), total: (await q.countAll.get())?.n ?? 0 };
}
