import { TUNNEL_HEALTH_PATH } from '@postern/contract';
import { gatewayAddress } from '../../dataplane/wireguard/addresses.js';
import type { Config } from '../../env.js';

/**
 * What `postern status --health` probes through the tunnel: nginx answers this one path on the gateway's tunnel
 * address (nothing else there answers a node), so a 200 proves the tunnel carries traffic.
 */
export function tunnelHealthUrl(config: Pick<Config, 'vpnSubnet' | 'httpPort'>): string {
  return `http://${gatewayAddress(config.vpnSubnet)}:${config.httpPort}${TUNNEL_HEALTH_PATH}`;
}
