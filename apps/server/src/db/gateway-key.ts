import { eq } from 'drizzle-orm';
import type { SecretBox } from '../secrets.js';
import type { ReadDb, Store } from './client.js';
import { preparedPerDb } from './prepared.js';
import { settings } from './schema.js';

// The gateway's WireGuard private key, kept encrypted in `settings`. Bootstrap stores it once
// (modules/nodes/gateway-key.ts); every later read only reads, so loading the desired state writes nothing.

const GATEWAY_KEY_SETTING = 'gateway_private_key';

export const KEY_MISMATCH_MESSAGE =
  "this gateway's secret key (the file POSTERN_SECRET_KEY_FILE names, else secret.key in its data dir) is not the " +
  'key the database was written with: every gateway on one database needs the same key (point ' +
  "POSTERN_SECRET_KEY_FILE at one copy of the first gateway's key), and a restored database needs its own";

type KeyDeps = { db: Store; secrets: SecretBox };

const queriesFor = preparedPerDb((db: ReadDb) => ({
  read: db.select({ value: settings.value }).from(settings).where(eq(settings.key, GATEWAY_KEY_SETTING)).prepare(),
}));

/** The stored key, or null before bootstrap stored one. */
export async function findGatewayPrivateKey(deps: KeyDeps): Promise<string | null> {
  const stored = await queriesFor(deps.db).read.get();
  if (!stored) return null;
  try {
    return deps.secrets.decrypt(stored.value);
  } catch (error) {
    // Another secret key wrote this database: a second gateway on a shared PostgreSQL, or a data dir restored without
    // its key. Nothing it encrypted can be read, so nothing may start.
    throw new Error(KEY_MISMATCH_MESSAGE, { cause: error });
  }
}

export async function readGatewayPrivateKey(deps: KeyDeps): Promise<string> {
  const key = await findGatewayPrivateKey(deps);
  if (key === null) throw new Error('the gateway has no WireGuard key yet: bootstrap creates it');
  return key;
}

/**
 * Stores `privateKey` unless a key is stored already, and returns the stored one. `onConflictDoNothing` plus the
 * re-read means two processes starting at once still agree on one key.
 */
export async function storeGatewayPrivateKeyIfAbsent(deps: KeyDeps, privateKey: string): Promise<string> {
  await deps.db.write(
    async (tx) =>
      await tx
        .insert(settings)
        .values({ key: GATEWAY_KEY_SETTING, value: deps.secrets.encrypt(privateKey) })
        .onConflictDoNothing()
        .run(),
  );
  return await readGatewayPrivateKey(deps);
}
