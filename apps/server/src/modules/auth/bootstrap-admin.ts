import { randomBytes } from 'node:crypto';
import { count } from 'drizzle-orm';
import type { AppDeps } from '../../deps.js';
import type { ReadDb } from '../../db/client.js';
import { users } from '../../db/schema.js';
import { insertAccount } from '../accounts/repository.js';
import { hashPassword } from './passwords.js';

/**
 * First boot only: creates the admin from POSTERN_ADMIN_USERNAME / POSTERN_ADMIN_PASSWORD. Without a configured
 * password one is generated and handed to `announce` (main prints it once to stdout, never through the JSON
 * logger, which may ship logs elsewhere). Later boots leave the stored (possibly changed) password alone.
 */
export async function ensureAdmin(
  deps: AppDeps,
  announce: (username: string, password: string) => void,
): Promise<void> {
  if (await hasAnyUser(deps.db)) return;
  const configured = deps.config.adminPassword;
  const password = configured ?? randomBytes(18).toString('base64url');
  const passwordHash = await hashPassword(password);
  // Checked again inside the write: gateways sharing one PostgreSQL may boot together on an empty database, and
  // writes are serialised (one lock), so exactly one of them creates the admin and the others find it.
  const created = await deps.db.write(async (tx) => {
    if (await hasAnyUser(tx)) return false;
    // The first account is the gateway's owner (console-spec: the one admin, who may do everything).
    await insertAccount(tx, { username: deps.config.adminUsername, passwordHash, role: 'owner', passwordSignIn: true });
    return true;
  });
  if (created && configured === undefined) announce(deps.config.adminUsername, password);
}

async function hasAnyUser(db: ReadDb): Promise<boolean> {
  const existing = await db.select({ n: count() }).from(users).get();
  return (existing?.n ?? 0) > 0;
}
