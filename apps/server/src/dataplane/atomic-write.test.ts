import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replaceFileSync, writeFileAtomic } from './atomic-write.js';

describe('writeFileAtomic', () => {
  let dir = '';
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('replaces the file with the requested mode and leaves no temp file behind', async () => {
    dir = await mkdtemp(join(tmpdir(), 'postern-atomic-'));
    const path = join(dir, 'key.pem');
    await writeFileAtomic(path, 'old', 0o600);
    await writeFileAtomic(path, 'new', 0o600);
    expect(await readFile(path, 'utf8')).toBe('new');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['key.pem']);
  });
});

describe('replaceFileSync', () => {
  let dir = '';
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('replaces the file with the requested mode, and leaves no temp file behind when the rename fails', async () => {
    dir = await mkdtemp(join(tmpdir(), 'postern-replace-'));
    const path = join(dir, 'a.pem');
    replaceFileSync(path, 'old', 0o600);
    replaceFileSync(path, 'new', 0o600);
    expect(await readFile(path, 'utf8')).toBe('new');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    // A directory where the file should go: the rename fails, the error reaches the caller, the temp file is gone.
    await mkdir(join(dir, 'b.pem'));
    expect(() => replaceFileSync(join(dir, 'b.pem'), 'x', 0o600)).toThrow();
    expect((await readdir(dir)).sort()).toEqual(['a.pem', 'b.pem']);
  });
});
