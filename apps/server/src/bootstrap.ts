import type { AppDeps } from './deps.js';
import { ensureAdmin } from './modules/auth/bootstrap-admin.js';
import { ensureLocalNode } from './modules/nodes/local-node.js';
import { disableExpiredServices } from './modules/services/expiry.js';

/**
 * First-boot state every later step relies on: the admin user and the local node (idempotent). The gateway's key and
 * address are its `gateways` row, registered before (modules/gateways).
 * Runs before the data plane starts, so a temporary exposure that ended while the gateway was down is disabled before
 * anything is served.
 */
export async function bootstrap(
  deps: AppDeps,
  announceAdmin: (username: string, password: string) => void,
): Promise<void> {
  await ensureAdmin(deps, announceAdmin);
  await ensureLocalNode(deps);
  await disableExpiredServices(deps);
}
