import { eq, sql } from 'drizzle-orm';
import { isIPv4, isInSubnet, messages } from '@postern/contract';
import { nodes } from '../../db/schema.js';
import { fieldError, notFound } from '../../errors.js';
import type { ReadDb } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';

/** What the service rules need to know about the node a service lives on. */
export interface ServiceNode {
  id: number;
  address: string;
  isGateway: boolean;
  gatewayNetwork: string | null;
  extraGatewayNetworks: string[];
  isLocal: boolean;
}

// Every service call starts with this lookup.
const findNodeQuery = preparedPerDb((db: ReadDb) =>
  db
    .select({
      id: nodes.id,
      address: nodes.address,
      isGateway: nodes.isGateway,
      gatewayNetwork: nodes.gatewayNetwork,
      extraGatewayNetworks: nodes.extraGatewayNetworks,
      isLocal: nodes.isLocal,
    })
    .from(nodes)
    .where(eq(nodes.id, sql.placeholder('id')))
    .prepare(),
);

/**
 * The node a service call is about, or 404. Statements run on the connection, so this also reads inside a
 * transaction the caller opened on the same `db`.
 */
export async function findServiceNode(db: ReadDb, nodeId: number): Promise<ServiceNode> {
  const node = await findNodeQuery(db).get({ id: nodeId });
  if (!node) throw notFound('Node');
  return node;
}

/**
 * Where the gateway sends a service's traffic. A regular node only exposes its own tunnel address (what the
 * operator typed is ignored, the console disables the field); a gateway node may target hosts of its routed
 * subnet or itself; the local node proxies to any host the gateway can reach.
 */
export function resolveBackendHost(node: ServiceNode, requested: string | null | undefined): string {
  if (!node.isGateway && !node.isLocal) return node.address;
  if (!requested) throw fieldError('backendHost', messages.required);
  if (node.isLocal) return requested;
  const networks = node.gatewayNetwork ? [node.gatewayNetwork, ...node.extraGatewayNetworks] : [];
  const isReachable =
    isIPv4(requested) && (requested === node.address || networks.some((network) => isInSubnet(requested, network)));
  if (!isReachable) {
    const where =
      networks.length === 0
        ? 'the node address'
        : networks.length === 1
          ? `inside the node's network ${String(networks[0])}`
          : `inside one of the node's networks ${networks.join(', ')}`;
    throw fieldError('backendHost', `This field must be an IP address ${where} or ${node.address}`);
  }
  return requested;
}
