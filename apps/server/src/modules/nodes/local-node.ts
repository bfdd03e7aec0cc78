import { gatewayAddress } from '../../dataplane/wireguard/addresses.js';
import type { AppDeps } from '../../deps.js';
import { getGatewayPublicKey } from '../../db/desired-state.js';
import { httpServices, nodes } from '../../db/schema.js';
import { isIPv4 } from '@postern/contract';
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
  const gatewayPublicKey = getGatewayPublicKey(deps);
  deps.db.transaction((tx) => {
    const node = tx
      .insert(nodes)
      .values({
        name: LOCAL_NODE_NAME,
        address: gatewayAddress(deps.config.vpnSubnet),
        isLocal: true,
        publicKey: gatewayPublicKey,
        privateKeyEnc: '',
        presharedKeyEnc: null,
        createdAt: at,
        updatedAt: at,
      })
      .returning({ id: nodes.id })
      .get();
    // The console and API published through nginx over HTTPS on the default host, so operators never need the
    // control-plane port open to the internet. Created once: an operator may edit, disable or delete it.
    tx.insert(httpServices)
      .values({
        nodeId: node.id,
        name: CONSOLE_SERVICE_NAME,
        domain: '',
        pathLocation: '/',
        backendProto: 'http',
        backendHost: controlPlaneHost(deps.config.host),
        backendPort: deps.config.port,
        createdAt: at,
        updatedAt: at,
      })
      .run();
  });
}

export const CONSOLE_SERVICE_NAME = 'Postern console';

/** Where nginx reaches the control plane: its own address, or loopback when it listens on every address. */
function controlPlaneHost(host: string): string {
  return isIPv4(host) && host !== '0.0.0.0' ? host : '127.0.0.1';
}
