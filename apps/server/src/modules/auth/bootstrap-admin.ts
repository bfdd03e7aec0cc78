import { randomBytes } from 'node:crypto';
import { count } from 'drizzle-orm';
import type { AppDeps } from '../../deps.js';
import { users } from '../../db/schema.js';
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
  const existing = await deps.db.select({ n: count() }).from(users).get();
  if ((existing?.n ?? 0) > 0) return;
  const configured = deps.config.adminPassword;
  const password = configured ?? randomBytes(18).toString('base64url');
  await deps.db.write(
    async (tx) =>
      await tx
        .insert(users)
        .values({ username: deps.config.adminUsername, passwordHash: await hashPassword(password) })
        .run(),
  );
  if (configured === undefined) announce(deps.config.adminUsername, password);
}
