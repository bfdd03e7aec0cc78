import { generateKeyPair, publicKeyFromPrivate } from '../../dataplane/wireguard/keys.js';
import type { AppDeps } from '../../deps.js';
import { readGatewayPrivateKey, storeGatewayPrivateKeyIfAbsent } from '../../db/gateway-key.js';

type KeyDeps = Pick<AppDeps, 'db' | 'secrets'>;

/** First boot: the gateway's WireGuard key (idempotent; a key already stored stays). */
export function ensureGatewayKey(deps: KeyDeps): void {
  storeGatewayPrivateKeyIfAbsent(deps, generateKeyPair().privateKey);
}

/** What node configs put in their [Peer] section for the gateway. */
export function getGatewayPublicKey(deps: KeyDeps): string {
  return publicKeyFromPrivate(readGatewayPrivateKey(deps));
}
