import { and, asc, count, eq, inArray, isNotNull, type SQL } from 'drizzle-orm';
import type { AppDeps } from '../../deps.js';
import { nodes } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import type { NodeRow } from './to-node.js';

export type NodeListType = 'nodes' | 'gateways' | undefined;

const typeFilter = (type: NodeListType): SQL | undefined =>
  type === undefined ? undefined : eq(nodes.isGateway, type === 'gateways');

export function findNode(deps: AppDeps, id: number): NodeRow | undefined {
  return deps.db.select().from(nodes).where(eq(nodes.id, id)).get();
}

export function getNodeRow(deps: AppDeps, id: number): NodeRow {
  const row = findNode(deps, id);
  if (!row) throw notFound('Node');
  return row;
}

export function findLocalNode(deps: AppDeps): NodeRow | undefined {
  return deps.db.select().from(nodes).where(eq(nodes.isLocal, true)).get();
}

/**
 * One page ordered by id. The local node is created at first boot, before any other node, so it has the
 * lowest id and comes first without a sort on a second column (which would defeat the index).
 */
export function listNodeRows(deps: AppDeps, query: { page: number; limit: number; type: NodeListType }): { rows: NodeRow[]; total: number } {
  const where = typeFilter(query.type);
  const rows = deps.db
    .select()
    .from(nodes)
    .where(where)
    .orderBy(asc(nodes.id))
    .limit(query.limit)
    .offset((query.page - 1) * query.limit)
    .all();
  const total = deps.db.select({ n: count() }).from(nodes).where(where).get()?.n ?? 0;
  return { rows, total };
}

export function listUsedAddresses(deps: AppDeps): Set<string> {
  return new Set(deps.db.select({ address: nodes.address }).from(nodes).all().map((r) => r.address));
}

export function findNodeIdsByPublicKeys(deps: AppDeps, publicKeys: string[]): number[] {
  if (publicKeys.length === 0) return [];
  return deps.db.select({ id: nodes.id }).from(nodes).where(inArray(nodes.publicKey, publicKeys)).all().map((r) => r.id);
}

export function listGatewayNetworks(deps: AppDeps): { id: number; name: string; gatewayNetwork: string }[] {
  return deps.db
    .select({ id: nodes.id, name: nodes.name, gatewayNetwork: nodes.gatewayNetwork })
    .from(nodes)
    .where(and(eq(nodes.isGateway, true), isNotNull(nodes.gatewayNetwork)))
    .all()
    .flatMap((row) => (row.gatewayNetwork ? [{ ...row, gatewayNetwork: row.gatewayNetwork }] : []));
}
