import type { AppDeps } from './deps.js';
import { ensureAdmin } from './modules/auth/bootstrap-admin.js';
import { ensureGatewayKey } from './modules/nodes/gateway-key.js';
import { ensureLocalNode } from './modules/nodes/local-node.js';

/** First-boot state every later step relies on: the admin user, the gateway's key and the local node (idempotent). */
export async function bootstrap(
  deps: AppDeps,
  announceAdmin: (username: string, password: string) => void,
): Promise<void> {
  await ensureAdmin(deps, announceAdmin);
  ensureGatewayKey(deps);
  ensureLocalNode(deps);
}
