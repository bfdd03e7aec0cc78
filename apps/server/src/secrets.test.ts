import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSecretBox, newSecretKeyText } from './secrets.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'postern-secrets-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('SecretBox', () => {
  it('creates a 0600 key file on first use and reads the same key back later', () => {
    const box = loadSecretBox(dir);
    expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
    const sealed = box.encrypt('wg-private-key');
    expect(sealed).not.toContain('wg-private-key');
    expect(loadSecretBox(dir).decrypt(sealed)).toBe('wg-private-key');
  });

  it('uses a fresh IV per encryption and refuses tampered or foreign ciphertext', () => {
    const box = loadSecretBox(dir);
    const a = box.encrypt('same');
    expect(box.encrypt('same')).not.toBe(a);
    const raw = Buffer.from(a.slice(3), 'base64');
    raw[raw.length - 1] = (raw[raw.length - 1] ?? 0) ^ 1;
    expect(() => box.decrypt(`v1:${raw.toString('base64')}`)).toThrow();
    const otherDir = mkdtempSync(join(tmpdir(), 'postern-secrets-'));
    try {
      expect(() => loadSecretBox(otherDir).decrypt(a)).toThrow();
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('derives distinct keys per purpose, none equal to the stored key', () => {
    const box = loadSecretBox(dir);
    const stored = Buffer.from(readFileSync(join(dir, 'secret.key'), 'utf8'), 'base64');
    const jwt = Buffer.from(box.deriveKey('session-jwt'));
    expect(jwt).toHaveLength(32);
    expect(jwt.equals(Buffer.from(box.deriveKey('other')))).toBe(false);
    expect(jwt.equals(stored)).toBe(false);
  });
});

describe('POSTERN_SECRET_KEY_FILE', () => {
  const keyFileIn = (text: string, mode = 0o400): string => {
    const file = join(dir, 'shared.key');
    writeFileSync(file, text, { mode });
    chmodSync(file, mode);
    return file;
  };
  const dataDirOf = (): string => join(dir, 'data');

  it('is used instead of the data dir key, which is then neither created nor read', () => {
    const keyFile = keyFileIn(`${newSecretKeyText()}\n`);
    const sealed = loadSecretBox({ dataDir: dataDirOf(), keyFile }).encrypt('totp-secret');
    expect(existsSync(join(dataDirOf(), 'secret.key'))).toBe(false);
    // A second gateway pointed at the same file reads what the first wrote.
    const otherDataDir = join(dir, 'other');
    loadSecretBox(otherDataDir);
    expect(loadSecretBox({ dataDir: otherDataDir, keyFile }).decrypt(sealed)).toBe('totp-secret');
    expect(() => loadSecretBox(otherDataDir).decrypt(sealed)).toThrow();
  });

  it('accepts a copy of a data dir key and never changes the file', () => {
    const dataDir = dataDirOf();
    const sealed = loadSecretBox(dataDir).encrypt('wg-key');
    const keyFile = keyFileIn(readFileSync(join(dataDir, 'secret.key'), 'utf8'), 0o440);
    const before = statSync(keyFile);
    expect(loadSecretBox({ dataDir: join(dir, 'fresh'), keyFile }).decrypt(sealed)).toBe('wg-key');
    const after = statSync(keyFile);
    expect([after.mode, after.mtimeMs]).toEqual([before.mode, before.mtimeMs]);
  });

  it('refuses a missing file, a directory and a wrong key with a message naming the setting and the file', () => {
    const load = (keyFile: string) => () => loadSecretBox({ dataDir: dataDirOf(), keyFile });
    const missing = join(dir, 'nope.key');
    expect(load(missing)).toThrow(`POSTERN_SECRET_KEY_FILE: ${missing} does not exist`);
    mkdirSync(join(dir, 'a-dir'));
    expect(load(join(dir, 'a-dir'))).toThrow('POSTERN_SECRET_KEY_FILE');
    for (const text of ['', 'c2hvcnQ=', Buffer.alloc(64).toString('base64'), `${newSecretKeyText()}!!`]) {
      expect(load(keyFileIn(text)), JSON.stringify(text)).toThrow(
        /POSTERN_SECRET_KEY_FILE: .* does not hold a 32-byte base64 key/,
      );
    }
    // Raw random bytes (not the base64 text the data dir key holds) are refused, not silently used as another key.
    expect(load(keyFileIn(randomBytes(32).toString('latin1')))).toThrow('does not hold a 32-byte base64 key');
  });

  it.skipIf(process.getuid?.() === 0)('refuses a file this process may not read', () => {
    const keyFile = keyFileIn(newSecretKeyText(), 0o000);
    expect(() => loadSecretBox({ dataDir: dataDirOf(), keyFile })).toThrow(
      `POSTERN_SECRET_KEY_FILE: ${keyFile} is not readable by this process`,
    );
  });

  it('warns when every user of the machine can read the key, and not when only its owner and group can', () => {
    const warnings: string[] = [];
    const onWarning = (message: string): number => warnings.push(message);
    loadSecretBox({ dataDir: dataDirOf(), keyFile: keyFileIn(newSecretKeyText(), 0o640), onWarning });
    expect(warnings).toEqual([]);
    loadSecretBox({ dataDir: dataDirOf(), keyFile: keyFileIn(newSecretKeyText(), 0o644), onWarning });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/POSTERN_SECRET_KEY_FILE: .* is readable by every user/);
  });
});
