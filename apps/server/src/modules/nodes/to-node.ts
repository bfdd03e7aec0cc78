import type { Node } from '@postern/contract';
import type { NodeStatus } from '../../dataplane/types.js';
import type { nodes } from '../../db/schema.js';

export type NodeRow = typeof nodes.$inferSelect;

/** What the API view of a node reads of its row: everything but the key material. */
export type NodeViewRow = Omit<NodeRow, 'privateKeyEnc' | 'presharedKeyEnc'>;

const OFFLINE: NodeStatus = {
  status: 'offline',
  clientIp: null,
  latestHandshakeTimestamp: null,
  transferRx: 0,
  transferTx: 0,
};
/** The local node is the gateway itself: always up, it has no peer of its own. */
const LOCAL: NodeStatus = { ...OFFLINE, status: 'online' };

/** A gateway node's subnets, first the spec's `gatewayNetwork`; [] for other nodes. */
export function gatewayNetworksOf(
  row: Pick<NodeRow, 'isGateway' | 'gatewayNetwork' | 'extraGatewayNetworks'>,
): string[] {
  return row.isGateway && row.gatewayNetwork ? [row.gatewayNetwork, ...row.extraGatewayNetworks] : [];
}

/** API view of a node row plus its live status (key material is never part of it). */
export function toNode(row: NodeViewRow, status: NodeStatus | undefined): Node {
  const live = row.isLocal ? LOCAL : (status ?? OFFLINE);
  return {
    id: row.id,
    name: row.name,
    address: row.address,
    allowInternet: row.allowInternet,
    isGateway: row.isGateway,
    gatewayNetwork: row.gatewayNetwork,
    gatewayNetworks: gatewayNetworksOf(row),
    allowTokenNetworks: row.isGateway && row.allowTokenNetworks,
    applyError: row.applyError,
    isLocal: row.isLocal,
    enabled: row.enabled,
    status: live.status,
    clientIp: live.clientIp,
    latestHandshakeTimestamp: live.latestHandshakeTimestamp,
    transferRx: live.transferRx,
    transferTx: live.transferTx,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
