import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeLeftoverSecrets, withSecretFile } from './secret-file.js';

// A preshared key's way to `wg set`: a file only the gateway's user can read, from its first moment to its removal.

describe('withSecretFile', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postern-secret-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('gives a 0600 file holding the secret, and removes it afterwards', async () => {
    const seen = await withSecretFile(dir, 'KEY', async (path) => ({
      path,
      mode: (await stat(path)).mode & 0o777,
      content: await readFile(path, 'utf8'),
    }));
    expect(seen.mode).toBe(0o600);
    expect(seen.content).toBe('KEY\n');
    expect(seen.path.startsWith(`${dir}/`)).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });

  it('removes the file when its use fails, and a file of its own each time', async () => {
    const paths: string[] = [];
    await expect(
      withSecretFile(dir, 'KEY', (path) => {
        paths.push(path);
        return Promise.reject(new Error('wg failed'));
      }),
    ).rejects.toThrow('wg failed');
    await withSecretFile(dir, 'KEY', (path) => Promise.resolve(paths.push(path)));
    expect(new Set(paths).size).toBe(2);
    expect(await readdir(dir)).toEqual([]);
  });

  it('removes the key files a crash left, and nothing else', async () => {
    // What a crash between a file's making and its removal leaves, and the older driver's file of a failed `wg set`.
    await writeFile(join(dir, '.0123456789abcdef.secret'), 'KEY\n', { mode: 0o600 });
    await writeFile(join(dir, 'wg0.psk'), 'OLD\n', { mode: 0o600 });
    for (const other of ['wg0.conf', 'wg0.key', 'notes.secret', '.x.secret'])
      await writeFile(join(dir, other), 'kept', { mode: 0o600 });
    await removeLeftoverSecrets(dir, ['wg0.psk']);
    expect((await readdir(dir)).sort()).toEqual(['.x.secret', 'notes.secret', 'wg0.conf', 'wg0.key']);
  });
});
