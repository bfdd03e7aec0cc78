import { and, asc, count, eq, getTableColumns, inArray, isNotNull, or, sql, type SQL } from 'drizzle-orm';
import type { AppDeps } from '../../deps.js';
import type { ReadDb } from '../../db/client.js';
import { nodes } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import type { NodeRow, NodeViewRow } from './to-node.js';
import { mappedRows, preparedPerDb } from '../../db/prepared.js';
import { listTunnelAddressesInUse } from '../gateways/registry.js';

export type NodeListType = 'nodes' | 'gateways' | undefined;

const typeFilter = (type: NodeListType): SQL | undefined =>
  type === undefined ? undefined : eq(nodes.isGateway, type === 'gateways');

export async function findNode(deps: AppDeps, id: number): Promise<NodeRow | undefined> {
  return await deps.db.select().from(nodes).where(eq(nodes.id, id)).get();
}

export async function getNodeRow(deps: AppDeps, id: number): Promise<NodeRow> {
  const row = await findNode(deps, id);
  if (!row) throw notFound('Node');
  return row;
}

export async function findLocalNode(deps: AppDeps): Promise<NodeRow | undefined> {
  return await deps.db.select().from(nodes).where(eq(nodes.isLocal, true)).get();
}

// A list answers what the API view shows (to-node.ts): the two key ciphertexts stay in the table.
const { privateKeyEnc: _privateKey, presharedKeyEnc: _presharedKey, ...viewColumns } = getTableColumns(nodes);

/**
 * One page ordered by id. The local node is created at first boot, before any other node, so it has the
 * lowest id and comes first without a sort on a second column (which would defeat the index).
 */
// The nodes list is the console's hot read (and the live stream re-reads pages): each list shape is prepared once
// per database (db/prepared.ts).
function prepareNodeList(db: AppDeps['db'], type: NodeListType) {
  const where = typeFilter(type);
  const columns = viewColumns;
  return {
    page: mappedRows(
      db
        .select(columns)
        .from(nodes)
        .where(where)
        .orderBy(asc(nodes.id))
        .limit(sql.placeholder('limit'))
        .offset(sql.placeholder('offset'))
        .prepare(),
      columns,
    ),
    total: db.select({ n: count() }).from(nodes).where(where).prepare(),
  };
}

const nodeLists = preparedPerDb((db: AppDeps['db']) => ({
  all: prepareNodeList(db, undefined),
  nodes: prepareNodeList(db, 'nodes'),
  gateways: prepareNodeList(db, 'gateways'),
}));

export async function listNodeRows(
  deps: AppDeps,
  query: { page: number; limit: number; type: NodeListType },
): Promise<{ rows: NodeViewRow[]; total: number }> {
  const prepared = nodeLists(deps.db)[query.type ?? 'all'];
  const rows = await prepared.page.all({ limit: query.limit, offset: (query.page - 1) * query.limit });
  const total = (await prepared.total.get())?.n ?? 0;
  return { rows, total };
}

/** Name or address contains `q`, case-insensitively (instr: nothing the operator typed acts as a wildcard). */
const nodeSearch = (q: string): SQL =>
  or(sql`instr(lower(${nodes.name}), ${q.toLowerCase()}) > 0`, sql`instr(${nodes.address}, ${q}) > 0`) as SQL;

/**
 * Every row matching the type and search, by id. Sorting by a live column (status, handshake, traffic) happens
 * in memory after the status is attached: those values are not stored.
 */
export async function searchNodeRows(
  deps: AppDeps,
  query: { type: NodeListType; q: string | undefined },
): Promise<NodeViewRow[]> {
  const where = and(typeFilter(query.type), query.q ? nodeSearch(query.q) : undefined);
  return await deps.db.select(viewColumns).from(nodes).where(where).orderBy(asc(nodes.id)).all();
}

/**
 * Tunnel addresses taken by nodes or by gateways (docs/SCALE-OUT.md): both allocate in the VPN subnet, inside db.write.
 */
export async function listUsedAddresses(db: ReadDb): Promise<Set<string>> {
  return await listTunnelAddressesInUse(db);
}

export async function findNodeIdsByPublicKeys(deps: AppDeps, publicKeys: string[]): Promise<number[]> {
  if (publicKeys.length === 0) return [];
  return (await deps.db.select({ id: nodes.id }).from(nodes).where(inArray(nodes.publicKey, publicKeys)).all()).map(
    (r) => r.id,
  );
}

/** Every subnet of every gateway node, one entry per subnet. */
export async function listGatewayNetworks(
  deps: AppDeps,
): Promise<{ id: number; name: string; gatewayNetwork: string }[]> {
  return (
    await deps.db
      .select({
        id: nodes.id,
        name: nodes.name,
        gatewayNetwork: nodes.gatewayNetwork,
        extra: nodes.extraGatewayNetworks,
      })
      .from(nodes)
      .where(and(eq(nodes.isGateway, true), isNotNull(nodes.gatewayNetwork)))
      .all()
  ).flatMap(({ id, name, gatewayNetwork, extra }) =>
    (gatewayNetwork ? [gatewayNetwork, ...extra] : []).map((network) => ({ id, name, gatewayNetwork: network })),
  );
}
