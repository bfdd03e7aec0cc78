import { generateKeyPair, publicKeyFromPrivate } from '../../dataplane/wireguard/keys.js';
import type { AppDeps } from '../../deps.js';
import { readGatewayPrivateKey, storeGatewayPrivateKeyIfAbsent } from '../../db/gateway-key.js';

type KeyDeps = Pick<AppDeps, 'db' | 'secrets'>;

/** First boot: the gateway's WireGuard key (idempotent; a key already stored stays). */
export async function ensureGatewayKey(deps: KeyDeps): Promise<void> {
  await storeGatewayPrivateKeyIfAbsent(deps, generateKeyPair().privateKey);
}

/** What node configs put in their [Peer] section for the gateway. */
export async function getGatewayPublicKey(deps: KeyDeps): Promise<string> {
  return publicKeyFromPrivate(await readGatewayPrivateKey(deps));
}
