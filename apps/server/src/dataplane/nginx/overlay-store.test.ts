import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OVERLAY_ROOT, overlayDir } from './options.js';
import { createOverlayStore, type OverlayStore } from './overlay-store.js';

/** Name → content of every file in a dir (temp files of an atomic write included, so none may linger). */
async function readDir(dir: string): Promise<Record<string, string>> {
  const entries: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort()) entries[name] = await readFile(join(dir, name), 'utf8');
  return entries;
}

describe('overlay store', () => {
  let prefix: string;
  let store: OverlayStore;

  beforeEach(async () => {
    prefix = await mkdtemp(join(tmpdir(), 'gw-ovl-store-'));
    store = createOverlayStore(prefix);
    await store.reset();
  });

  afterEach(async () => {
    await rm(prefix, { recursive: true, force: true });
  });

  it('makes an epoch dir hold exactly the given files', async () => {
    await store.sync(1, new Map([['000000', 'default\n'], ['000001', 'a\n'], ['host.new.example.com', 'new\n']]));
    expect(await readDir(overlayDir(prefix, 1))).toEqual({ '000000': 'default\n', '000001': 'a\n', 'host.new.example.com': 'new\n' });

    await store.sync(1, new Map([['000001', 'a2\n'], ['000002', 'b\n']]));
    expect(await readDir(overlayDir(prefix, 1))).toEqual({ '000001': 'a2\n', '000002': 'b\n' });

    await store.sync(1, new Map());
    expect(await readDir(overlayDir(prefix, 1))).toEqual({});
  });

  it('leaves an unchanged file alone, so nginx keeps reading the same one', async () => {
    await store.sync(3, new Map([['000001', 'a\n'], ['000002', 'b\n']]));
    const before = await stat(join(overlayDir(prefix, 3), '000001'));
    await store.sync(3, new Map([['000001', 'a\n'], ['000002', 'b2\n']]));
    const after = await stat(join(overlayDir(prefix, 3), '000001'));
    expect({ ino: after.ino, mtimeMs: after.mtimeMs }).toEqual({ ino: before.ino, mtimeMs: before.mtimeMs });
    expect(await readFile(join(overlayDir(prefix, 3), '000002'), 'utf8')).toBe('b2\n');
  });

  it('keeps the epochs apart', async () => {
    await store.sync(1, new Map([['000001', 'one\n']]));
    await store.sync(2, new Map([['000001', 'two\n']]));
    expect(await readDir(overlayDir(prefix, 1))).toEqual({ '000001': 'one\n' });
    expect(await readDir(overlayDir(prefix, 2))).toEqual({ '000001': 'two\n' });
  });

  it('refuses a file name that is not a domain id or host.<name>', async () => {
    for (const bad of ['../x', 'host.a/b', 'host.../x', '1234567', '00001', 'host.', 'host.A.example.com', '.hidden', '']) {
      await expect(store.sync(1, new Map([[bad, 'x']])), bad).rejects.toThrow('invalid overlay file name');
    }
    expect(await readdir(join(prefix, OVERLAY_ROOT, '..'))).toEqual([OVERLAY_ROOT]);
    expect(await readDir(overlayDir(prefix, 1))).toEqual({});
  });

  it('prunes every epoch not kept', async () => {
    for (const epoch of [1, 2, 3]) await store.sync(epoch, new Map([['000001', `${epoch}\n`]]));
    await mkdir(join(prefix, OVERLAY_ROOT, 'junk'));
    await store.prune([2]);
    expect(await readdir(join(prefix, OVERLAY_ROOT))).toEqual(['2']);
    expect(await readDir(overlayDir(prefix, 2))).toEqual({ '000001': '2\n' });

    // A pruned epoch synced again starts from an empty dir.
    await store.sync(1, new Map([['000002', 'again\n']]));
    expect(await readDir(overlayDir(prefix, 1))).toEqual({ '000002': 'again\n' });
  });

  it('empties the root on reset, also of what an earlier process left', async () => {
    await store.sync(1, new Map([['000001', 'a\n']]));
    await writeFile(join(prefix, OVERLAY_ROOT, 'leftover'), 'x');
    await store.reset();
    expect(await readdir(join(prefix, OVERLAY_ROOT))).toEqual([]);

    // Nothing is remembered across a reset: the same content is written again.
    await store.sync(1, new Map([['000001', 'a\n']]));
    expect(await readDir(overlayDir(prefix, 1))).toEqual({ '000001': 'a\n' });
  });
});
