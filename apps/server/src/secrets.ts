import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Encryption at rest for secrets the server must read back (WireGuard private and preshared keys), plus
// derived keys for other purposes (session signing). One 32-byte master key in `<dataDir>/secret.key`, mode
// 0600: a copy of the database alone reveals nothing.

export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(box: string): string;
  /** A 32-byte key for `purpose`, derived with HKDF so no two uses share key material. */
  deriveKey(purpose: string): Uint8Array;
}

const KEY_FILE = 'secret.key';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function createSecretBox(masterKey: Buffer): SecretBox {
  if (masterKey.length !== 32) throw new Error('secret key must be 32 bytes');
  const encryptionKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'postern/secretbox', 32));
  return {
    encrypt(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    decrypt(box) {
      const [version, payload] = box.split(':');
      if (version !== VERSION || !payload) throw new Error('unknown secret box format');
      const raw = Buffer.from(payload, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', encryptionKey, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    },
    deriveKey(purpose) {
      return new Uint8Array(hkdfSync('sha256', masterKey, Buffer.alloc(0), `postern/${purpose}`, 32));
    },
  };
}

/** Reads the master key from the data dir, creating it (mode 0600) on first boot. */
export function loadSecretBox(dataDir: string): SecretBox {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, KEY_FILE);
  if (!existsSync(file)) {
    // 'wx' fails if another process created the file meanwhile, instead of silently replacing its key.
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return createSecretBox(key);
}
