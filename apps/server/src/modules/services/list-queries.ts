import { and, count, eq, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../db/client.js';
import { domains, httpServices, tcpServices } from '../../db/schema.js';
import { preparedPerDb } from '../../db/prepared.js';

// Service lists are the hot read path (console cards, the domains page, the agent), so each list shape is prepared
// once per database (db/prepared.ts). Every shape is served by an index: (node_id, id), (domain, id)
// or the primary key, so a page is an index range scan and the count a covering-index count.

const scope = sql.placeholder('scope');
const limit = sql.placeholder('limit');
const offset = sql.placeholder('offset');

// The page's ids come from a subquery on the (covering) index, then only those rows are read and joined: with a
// plain OFFSET, SQLite would read and join every skipped row (the last of 1,000 pages: ~6 ms instead of ~0.3 ms).
function prepareHttp(db: Db) {
  const page = (where?: SQL) =>
    db
      .select({ row: httpServices, ssl: domains.ssl })
      .from(httpServices)
      .leftJoin(domains, eq(domains.domain, httpServices.domain))
      .where(
        inArray(
          httpServices.id,
          db.select({ id: httpServices.id }).from(httpServices).where(where).orderBy(httpServices.id).limit(limit).offset(offset),
        ),
      )
      .orderBy(httpServices.id)
      .prepare();
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

function prepareTcp(db: Db) {
  const page = (where?: SQL) =>
    db
      .select()
      .from(tcpServices)
      .where(
        inArray(
          tcpServices.id,
          db.select({ id: tcpServices.id }).from(tcpServices).where(where).orderBy(tcpServices.id).limit(limit).offset(offset),
        ),
      )
      .orderBy(tcpServices.id)
      .prepare();
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

const prepared = preparedPerDb((db: Db) => ({ http: prepareHttp(db), tcp: prepareTcp(db) }));

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
  'nodeId' in listScope ? eq(nodeId, listScope.nodeId) : 'domain' in listScope ? eq(domain, listScope.domain) : undefined;

/** Column text contains `text`, case-insensitively; instr() so nothing the operator typed acts as a wildcard. */
const contains = (column: SQLiteColumn, text: string): SQL => sql`instr(lower(${column}), ${text.toLowerCase()}) > 0`;

/** A searched page (name, domain, path or public port contains `search`): rare, so not prepared. */
export function searchHttpPage(db: Db, listScope: ListScope, { page, limit: size }: PageWindow, search: string) {
  const where = and(
    scopeWhere(listScope, httpServices.nodeId, httpServices.domain),
    or(contains(httpServices.name, search), contains(httpServices.domain, search), contains(httpServices.pathLocation, search)),
  );
  const rows = db
    .select({ row: httpServices, ssl: domains.ssl })
    .from(httpServices)
    .leftJoin(domains, eq(domains.domain, httpServices.domain))
    .where(where)
    .orderBy(httpServices.id)
    .limit(size)
    .offset((page - 1) * size)
    .all();
  return { rows, total: db.select({ n: count() }).from(httpServices).where(where).get()?.n ?? 0 };
}

export function searchTcpPage(db: Db, listScope: ListScope, { page, limit: size }: PageWindow, search: string) {
  const where = and(
    scopeWhere(listScope, tcpServices.nodeId, tcpServices.domain),
    or(contains(tcpServices.name, search), contains(tcpServices.domain, search), sql`instr(cast(${tcpServices.port} as text), ${search}) > 0`),
  );
  const rows = db.select().from(tcpServices).where(where).orderBy(tcpServices.id).limit(size).offset((page - 1) * size).all();
  return { rows, total: db.select({ n: count() }).from(tcpServices).where(where).get()?.n ?? 0 };
}

export function selectHttpPage(db: Db, listScope: ListScope, window: PageWindow) {
  const q = prepared(db).http;
  const params = placeholders(listScope, window);
  if ('nodeId' in listScope) return { rows: q.byNode.all(params), total: q.countByNode.get(params)?.n ?? 0 };
  if ('domain' in listScope) return { rows: q.byDomain.all(params), total: q.countByDomain.get(params)?.n ?? 0 };
  return { rows: q.all.all(params), total: q.countAll.get()?.n ?? 0 };
}

export function selectTcpPage(db: Db, listScope: ListScope, window: PageWindow) {
  const q = prepared(db).tcp;
  const params = placeholders(listScope, window);
  if ('nodeId' in listScope) return { rows: q.byNode.all(params), total: q.countByNode.get(params)?.n ?? 0 };
  if ('domain' in listScope) return { rows: q.byDomain.all(params), total: q.countByDomain.get(params)?.n ?? 0 };
  return { rows: q.all.all(params), total: q.countAll.get()?.n ?? 0 };
}
