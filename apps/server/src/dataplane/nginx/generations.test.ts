import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  listGenerations,
  pruneGenerations,
  readCurrentGeneration,
  switchCurrent,
  writeGeneration,
} from './generations.js';

describe('config generations', () => {
  let prefix = '';
  beforeEach(async () => {
    prefix = await mkdtemp(join(tmpdir(), 'postern-gen-'));
  });
  afterEach(async () => {
    await rm(prefix, { recursive: true, force: true });
  });

  it('writes a generation, points current at it, and keeps only recent ones plus the one in use', async () => {
    for (let g = 1; g <= 5; g++) await writeGeneration(prefix, g, { 'nginx.conf': `# ${g}\n` });
    await switchCurrent(prefix, 2);
    expect(await readCurrentGeneration(prefix)).toBe(2);
    expect(await readFile(join(prefix, 'current', 'nginx.conf'), 'utf8')).toBe('# 2\n');
    await pruneGenerations(prefix, 2, [2]);
    expect(await listGenerations(prefix)).toEqual([2, 4, 5]);
  });

  it('refuses a file name that leaves the generation dir', async () => {
    await expect(writeGeneration(prefix, 1, { '../x.conf': '' })).rejects.toThrow('invalid config file name');
  });
});
