import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Encryption at rest for secrets the server must read back (WireGuard private and preshared keys), plus
// derived keys for other purposes (session signing). One 32-byte master key in `<dataDir>/secret.key`, mode
// 0600, or in the file POSTERN_SECRET_KEY_FILE names (several gateways on one database share one key): a copy of the
// database alone reveals nothing.

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

/** The text a key file holds: 32 random bytes, base64. */
export function newSecretKeyText(): string {
  return randomBytes(32).toString('base64');
}

const KEY_FILE_SETTING = 'POSTERN_SECRET_KEY_FILE';
const HOW_TO_MAKE_ONE = 'make one with: head -c 32 /dev/urandom | base64 > FILE';

export interface SecretKeySource {
  dataDir: string;
  /**
   * POSTERN_SECRET_KEY_FILE: the key is read from there (never created, changed or written), instead of
   * `<dataDir>/secret.key`.
   */
  keyFile?: string | undefined;
  /** Told about a key file that works but should not be left as it is (readable by every user of the machine). */
  onWarning?: (message: string) => void;
}

function readKeyFile(file: string): Buffer {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'is not readable by this process'
          : code === 'EISDIR'
            ? 'is a directory'
            : `cannot be read (${code ?? String(error)})`;
    throw new Error(`${KEY_FILE_SETTING}: ${file} ${why}`, { cause: error });
  }
  const key = Buffer.from(text.trim(), 'base64');
  // Buffer.from ignores what is not base64: re-encoding tells a real key from text that merely decodes to 32 bytes.
  if (key.length !== 32 || key.toString('base64') !== text.trim()) {
    throw new Error(
      `${KEY_FILE_SETTING}: ${file} does not hold a 32-byte base64 key (the format of <data dir>/secret.key; ${HOW_TO_MAKE_ONE})`,
    );
  }
  return key;
}

/**
 * Reads the master key: from POSTERN_SECRET_KEY_FILE when set (a Kubernetes or compose secret, shared by every
 * gateway on one database), else from the data dir, creating it (mode 0600) on first boot.
 */
export function loadSecretBox(source: string | SecretKeySource): SecretBox {
  const { dataDir, keyFile, onWarning } = typeof source === 'string' ? { dataDir: source } : source;
  if (keyFile !== undefined) {
    const key = readKeyFile(keyFile);
    // Secret mounts are often 0644 or 0444 by default; refusing them would refuse the usual setup, so this warns.
    if ((statSync(keyFile).mode & 0o004) !== 0) {
      onWarning?.(
        `${KEY_FILE_SETTING}: ${keyFile} is readable by every user of this machine: make it 0400 or 0600 ` +
          '(Kubernetes: defaultMode 0400; compose: mode 0400)',
      );
    }
    return createSecretBox(key);
  }
  return loadDataDirSecretBox(dataDir);
}

function loadDataDirSecretBox(dataDir: string): SecretBox {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, KEY_FILE);
  if (!existsSync(file)) {
    // 'wx' fails if another process created the file meanwhile, instead of silently replacing its key.
    writeFileSync(file, newSecretKeyText(), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return createSecretBox(key);
}
