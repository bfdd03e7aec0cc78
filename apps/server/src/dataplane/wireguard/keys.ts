import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';

// WireGuard keys are raw 32-byte X25519 keys in base64. node:crypto speaks DER/JWK, so we go through JWK,
// whose `d`/`x` members are exactly the raw scalar/point in base64url.

export interface WgKeyPair {
  privateKey: string;
  publicKey: string;
}

const b64urlToB64 = (s: string): string => Buffer.from(s, 'base64url').toString('base64');

export function generateKeyPair(): WgKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const priv = privateKey.export({ format: 'jwk' });
  const pub = publicKey.export({ format: 'jwk' });
  if (!priv.d || !pub.x) throw new Error('x25519 key export failed');
  return { privateKey: b64urlToB64(priv.d), publicKey: b64urlToB64(pub.x) };
}

export function publicKeyFromPrivate(privateKeyB64: string): string {
  const raw = Buffer.from(privateKeyB64, 'base64');
  if (raw.length !== 32) throw new Error('WireGuard private key must be 32 bytes');
  const key = createPrivateKey({
    key: { kty: 'OKP', crv: 'X25519', d: raw.toString('base64url'), x: '' },
    format: 'jwk',
  });
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  if (!jwk.x) throw new Error('x25519 public key derivation failed');
  return b64urlToB64(jwk.x);
}

export function generatePresharedKey(): string {
  return randomBytes(32).toString('base64');
}
