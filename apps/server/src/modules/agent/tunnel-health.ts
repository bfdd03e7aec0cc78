import { TUNNEL_HEALTH_PATH } from '@postern/contract';
import type { Config } from '../../env.js';

/**
 * What `postern status --health` probes through the tunnel: nginx answers this one path on a gateway's tunnel
 * address (nothing else there answers a node), so a 200 proves the tunnel to that gateway carries traffic.
 */
export function tunnelHealthUrl(config: Pick<Config, 'httpPort'>, gatewayAddress: string): string {
  return `http://${gatewayAddress}:${config.httpPort}${TUNNEL_HEALTH_PATH}`;
}
