import type { AppDeps } from '../../deps.js';
import { renderNodeConfig } from '../../dataplane/wireguard/render.js';
import { badRequest } from '../../errors.js';
import { listLiveGateways, type GatewayIdentity } from '../gateways/registry.js';
import type { NodeRow } from './to-node.js';

/**
 * The wg-quick file a node runs: its own key and address, one peer per live gateway (ordered by id). Everything comes
 * from the database, so every gateway of one database gives the same file (a load balancer may send each poll
 * elsewhere). `gateways`: the list already read (the agent's config answer lists the same).
 */
export async function renderConfigFor(
  deps: AppDeps,
  row: NodeRow,
  gateways?: readonly GatewayIdentity[],
): Promise<string> {
  if (row.isLocal) throw badRequest('The local node has no config to download');
  return renderNodeConfig({
    nodePrivateKey: deps.secrets.decrypt(row.privateKeyEnc),
    nodeAddress: row.address,
    presharedKey: row.presharedKeyEnc ? deps.secrets.decrypt(row.presharedKeyEnc) : null,
    gateways: [...(gateways ?? (await listLiveGateways(deps.db, deps.gateway.id)))],
    vpnSubnet: deps.config.vpnSubnet,
    allowInternet: row.allowInternet,
  });
}

/** `postern-<name>.conf` with only [a-z0-9-], so the header needs no quoting rules beyond the quotes. */
export function configFileName(row: NodeRow): string {
  const safe = row.name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return `postern-${safe || `node-${row.id}`}.conf`;
}
