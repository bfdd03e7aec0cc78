import { gatewayAddress } from '../../dataplane/wireguard/addresses.js';
import type { AppDeps } from '../../deps.js';
import { getGatewayPublicKey } from '../../db/desired-state.js';
import { nodes } from '../../db/schema.js';
import { findLocalNode } from './repository.js';

export const LOCAL_NODE_NAME = 'Gateway (local)';

/**
 * First boot: the gateway's own node, with the subnet's first host address and the gateway's public key. The
 * gateway's private key lives (encrypted) in `settings` (db/desired-state.ts), so this row holds none.
 * Created before any other node, so it has the lowest id and lists first.
 */
export function ensureLocalNode(deps: AppDeps): void {
  if (findLocalNode(deps)) return;
  const at = deps.now().toISOString();
  deps.db
    .insert(nodes)
    .values({
      name: LOCAL_NODE_NAME,
      address: gatewayAddress(deps.config.vpnSubnet),
      isLocal: true,
      publicKey: getGatewayPublicKey(deps),
      privateKeyEnc: '',
      presharedKeyEnc: null,
      createdAt: at,
      updatedAt: at,
    })
    .run();
}
