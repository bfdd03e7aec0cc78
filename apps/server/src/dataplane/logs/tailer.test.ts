import { appendFile, mkdtemp, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTailer, type Tailer } from './tailer.js';

describe('createTailer', () => {
  let dir = '';
  let tailer: Tailer | null = null;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postern-tail-'));
  });
  afterEach(async () => {
    tailer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the backlog, then appended lines, across rotation and truncation', async () => {
    const path = join(dir, 'access.log');
    await writeFile(path, 'old 1\nold 2\n');
    const got: string[] = [];
    tailer = createTailer(path, (lines) => got.push(...lines), { pollMs: 10_000 });
    await tailer.check();
    expect(got).toEqual(['old 1', 'old 2']);

    await appendFile(path, 'new 1\nhalf');
    await tailer.check();
    expect(got.slice(2)).toEqual(['new 1']);
    await appendFile(path, ' line\n');
    await tailer.check();
    expect(got.slice(3)).toEqual(['half line']);

    await appendFile(path, 'last before rotate\n');
    await rename(path, `${path}.1`);
    await writeFile(path, 'after rotate\n');
    await tailer.check();
    expect(got.slice(4)).toEqual(['last before rotate', 'after rotate']);

    await truncate(path, 0);
    await tailer.check();
    await appendFile(path, 'after truncate\n');
    await tailer.check();
    expect(got.slice(6)).toEqual(['after truncate']);
  });

  it('waits for a file that does not exist yet', async () => {
    const path = join(dir, 'later.log');
    const got: string[] = [];
    tailer = createTailer(path, (lines) => got.push(...lines), { pollMs: 10_000 });
    await tailer.check();
    await writeFile(path, 'hello\n');
    await tailer.check();
    expect(got).toEqual(['hello']);
  });
});
