import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeAcmeError, loadOrCreateAccountKey } from './acme.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'postern-acme-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('ACME account key', () => {
  it('is created once, private to the gateway, and reused afterwards', async () => {
    const first = await loadOrCreateAccountKey(dataDir);
    const second = await loadOrCreateAccountKey(dataDir);
    expect(second.equals(first)).toBe(true);
    expect(first.toString()).toContain('PRIVATE KEY');
    const file = join(dataDir, 'acme', 'account.key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dataDir, 'acme'))).mode & 0o777).toBe(0o700);
    expect(await readFile(file)).toEqual(first);
  });
});

describe('describeAcmeError', () => {
  it('keeps the CA reason on one line', () => {
    expect(describeAcmeError(new Error('Invalid response from\n  http://a.example.com/x: 404'))).toBe('Invalid response from http://a.example.com/x: 404');
    expect(describeAcmeError('boom')).toBe('boom');
  });
});
