import type { AppDeps } from './deps.js';
import { ensureAdmin } from './modules/auth/bootstrap-admin.js';
import { ensureGatewayKey } from './modules/nodes/gateway-key.js';
import { ensureLocalNode } from './modules/nodes/local-node.js';
import { disableExpiredServices } from './modules/services/expiry.js';

/**
 * First-boot state every later step relies on: the admin user, the gateway's key and the local node (idempotent).
 * Runs before the data plane starts, so a temporary exposure that ended while the gateway was down is disabled before
 * anything is served.
 */
export async function bootstrap(
  deps: AppDeps,
  announceAdmin: (username: string, password: string) => void,
): Promise<void> {
  await ensureAdmin(deps, announceAdmin);
  await ensureGatewayKey(deps);
  await ensureLocalNode(deps);
  await disableExpiredServices(deps);
}
