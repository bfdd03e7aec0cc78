import { eq } from 'drizzle-orm';
import type { SecretBox } from '../secrets.js';
import type { Db } from './client.js';
import { preparedPerDb } from './prepared.js';
import { settings } from './schema.js';

// The gateway's WireGuard private key, kept encrypted in `settings`. Bootstrap stores it once
// (modules/nodes/gateway-key.ts); every later read only reads, so loading the desired state writes nothing.

const GATEWAY_KEY_SETTING = 'gateway_private_key';

type KeyDeps = { db: Db; secrets: SecretBox };

const queriesFor = preparedPerDb((db: Db) => ({
  read: db.select({ value: settings.value }).from(settings).where(eq(settings.key, GATEWAY_KEY_SETTING)).prepare(),
}));

/** The stored key, or null before bootstrap stored one. */
export function findGatewayPrivateKey(deps: KeyDeps): string | null {
  const stored = queriesFor(deps.db).read.get();
  return stored ? deps.secrets.decrypt(stored.value) : null;
}

export function readGatewayPrivateKey(deps: KeyDeps): string {
  const key = findGatewayPrivateKey(deps);
  if (key === null) throw new Error('the gateway has no WireGuard key yet: bootstrap creates it');
  return key;
}

/**
 * Stores `privateKey` unless a key is stored already, and returns the stored one. `onConflictDoNothing` plus the
 * re-read means two processes starting at once still agree on one key.
 */
export function storeGatewayPrivateKeyIfAbsent(deps: KeyDeps, privateKey: string): string {
  deps.db
    .insert(settings)
    .values({ key: GATEWAY_KEY_SETTING, value: deps.secrets.encrypt(privateKey) })
    .onConflictDoNothing()
    .run();
  return readGatewayPrivateKey(deps);
}
