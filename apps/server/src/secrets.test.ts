import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSecretBox } from './secrets.js';

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
