import os from 'node:os';
import type { Store } from '../../db/client.js';
import { createHashGate } from '../auth/hash-gate.js';
import { createLoginLimiter } from '../auth/rate-limit.js';
import type { PasswordChecks } from '../auth/service.js';

// What guards visitors' passwords (docs/ACCESS.md "Password"): the console's limiter over the same database table,
// so every gateway counts the same attempts, and a hash gate of its own, so a flood of visitor sign-ins never makes
// the operator's console sign-in wait. One per store (one app): the API's password changes and the sign-in pages
// share it.

const byStore = new WeakMap<Store, PasswordChecks>();

export function visitorChecksFor(deps: { db: Store; now: () => Date }): PasswordChecks {
  let checks = byStore.get(deps.db);
  if (!checks) {
    checks = {
      limiter: createLoginLimiter(deps.db, deps.now),
      gate: createHashGate(Math.max(1, os.availableParallelism()), 64),
    };
    byStore.set(deps.db, checks);
  }
  return checks;
}

/** The limiter's keys for visitors: their own client key and name, never counted against the console's sign-in. */
export const visitorClientKey = (clientKey: string): string => `access:${clientKey}`;
export const visitorLimitName = (policyId: number): string => `access-policy:${policyId}`;
