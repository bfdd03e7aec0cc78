import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from './atomic-write.js';

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
