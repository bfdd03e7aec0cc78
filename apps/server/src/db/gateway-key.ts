import { eq, sql } from 'drizzle-orm';
import type { SecretBox } from '../secrets.js';
import type { ReadDb, Store } from './client.js';
import { preparedPerDb } from './prepared.js';
import { gateways, settings } from './schema.js';

// Each gateway's WireGuard private key, kept encrypted in its `gateways` row (modules/gateways registers it). Loading
// the desired state only reads it. Before several gateways existed the one key was the `gateway_private_key` setting:
// the first gateway registered on such a database adopts it (modules/gateways/registry.ts), so nodes keep working.

export const LEGACY_GATEWAY_KEY_SETTING = 'gateway_private_key';

export const KEY_MISMATCH_MESSAGE =
  "this gateway's secret key (the file POSTERN_SECRET_KEY_FILE names, else secret.key in its data dir) is not the " +
  'key the database was written with: every gateway on one database needs the same key (point ' +
  "POSTERN_SECRET_KEY_FILE at one copy of the first gateway's key), and a restored database needs its own";

type KeyDeps = { db: Store; secrets: SecretBox };

const queriesFor = preparedPerDb((db: ReadDb) => ({
  own: db
    .select({ value: gateways.privateKeyEnc })
    .from(gateways)
    .where(eq(gateways.id, sql.placeholder('id')))
    .prepare(),
}));

/** Decrypts a stored WireGuard key; a key written under another secret key stops the gateway with a clear reason. */
export function decryptGatewayKey(secrets: SecretBox, ciphertext: string): string {
  try {
    return secrets.decrypt(ciphertext);
  } catch (error) {
    // Another secret key wrote this database: a second gateway on a shared PostgreSQL, or a data dir restored without
    // its key. Nothing it encrypted can be read, so nothing may start.
    throw new Error(KEY_MISMATCH_MESSAGE, { cause: error });
  }
}

/** The key of the database's one gateway from before gateways had rows; null when there is none. */
export async function findLegacyGatewayKey(db: ReadDb, secrets: SecretBox): Promise<string | null> {
  const stored = await db
    .select({ value: settings.value })
    .from(settings)
    .where(eq(settings.key, LEGACY_GATEWAY_KEY_SETTING))
    .get();
  return stored ? decryptGatewayKey(secrets, stored.value) : null;
}

/** The private key of the registered gateway `gatewayId`. */
export async function readGatewayPrivateKey(deps: KeyDeps, gatewayId: number): Promise<string> {
  const stored = await queriesFor(deps.db).own.get({ id: gatewayId });
  if (!stored) throw new Error(`gateway ${gatewayId} is not registered: a gateway registers itself when it starts`);
  return decryptGatewayKey(deps.secrets, stored.value);
}
