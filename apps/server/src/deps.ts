import type { Config } from './env.js';
import type { Store } from './db/client.js';
import type { DataPlane } from './dataplane/types.js';
import type { Leases } from './cluster/leases.js';
import type { AuditLog } from './modules/audit/recorder.js';
import type { GatewayIdentity } from './modules/gateways/registry.js';
import type { SecretBox } from './secrets.js';

/** Everything the app needs from outside, injected so tests build it with a temp DB and fake data plane. */
export interface AppDeps {
  config: Config;
  db: Store;
  dataPlane: DataPlane;
  secrets: SecretBox;
  /** Injectable clock for expiry, rate limits and status thresholds. */
  now: () => Date;
  /** The append-only audit log: `audit.record({ actor, address, action, target, before, after })`. */
  audit: AuditLog;
  /** This gateway among those sharing the database (docs/SCALE-OUT.md): registered at boot, before the app is built. */
  gateway: GatewayIdentity;
  /** Run-once jobs: which of them this gateway runs now (cluster/leases.ts). */
  leases: Leases;
}
