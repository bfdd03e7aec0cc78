import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BOOT_GROW_AT,
  chooseSizes,
  DEFAULT_DICT_LIMITS,
  entryBytes,
  parseDicts,
  readSnapshotNeeds,
  renderDicts,
  routesBytes,
  statsBytes,
  withLiveFor,
  type DictLimits,
  type DictNeeds,
} from './dict-sizes.js';
import { snapshotFile } from './options.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const none: DictNeeds = { gw_routes: 0, gw_certs: 0, gw_stats: 0 };
const floors = DEFAULT_DICT_LIMITS.floors;

describe('the shared dictionaries’ sizes', () => {
  it('counts an entry as nginx’s slab allocator stores it: a power of two up to half a page, whole pages above', () => {
    expect(entryBytes(1, 1)).toBe(128); // 68 + 2 = 70 → 128
    expect(entryBytes(10, 8)).toBe(128);
    expect(entryBytes(20, 100)).toBe(256);
    expect(entryBytes(0, 2048 - 68)).toBe(2048);
    expect(entryBytes(0, 2049 - 68)).toBe(4096);
    expect(entryBytes(12, 3500)).toBe(4096);
    expect(entryBytes(12, 4100)).toBe(8192);
    // 20,000 hosts of ~3.75 KB routes each (the measured 75 MB table) take one page each.
    const hosts = Array.from({ length: 20_000 }, (_, i): [string, string] => [`h${i}.example.com`, 'x'.repeat(3750)]);
    expect(routesBytes(hosts)).toBe(20_000 * 4096 + 128);
  });

  it('is its floor for a small gateway, and follows the data with headroom as it grows', () => {
    expect(chooseSizes(none, null)).toEqual(floors);
    // A fresh master with 75 MB of routes and 10,000 services: twice the data, rounded up to a power of two.
    const big = chooseSizes({ gw_routes: 80 * MiB, gw_certs: 40 * MiB, gw_stats: statsBytes(10_000) }, null);
    expect(big.gw_routes).toBe(256 * MiB);
    expect(big.gw_certs).toBe(128 * MiB);
    expect(big.gw_stats).toBe(64 * MiB);
    expect(statsBytes(10_000)).toBeGreaterThan(floors.gw_stats);
    // Not sized from the data: their floors.
    expect(big.gw_acme).toBe(floors.gw_acme);
    expect(big.gw_live).toBe(floors.gw_live);
  });

  it('keeps a running nginx’s sizes until the data would fill 80 %, then doubles at least; never shrinks', () => {
    const current = { ...floors, gw_routes: 64 * MiB };
    expect(chooseSizes({ ...none, gw_routes: 51 * MiB }, current)).toEqual(current);
    expect(chooseSizes({ ...none, gw_routes: 52 * MiB }, current).gw_routes).toBe(128 * MiB);
    // Less data than before: the same size (a shrink would need a reload for nothing).
    expect(chooseSizes(none, current)).toEqual(current);
    // Sizes an older release rendered (bigger than the floors) are kept.
    expect(chooseSizes(none, { ...floors, gw_certs: 128 * MiB }).gw_certs).toBe(128 * MiB);
  });

  it('at boot grows a dictionary more than half full, so the first changes after it find room without a reload', () => {
    const current = { ...floors, gw_certs: 64 * MiB };
    // 40 MiB of certificates (20,000 self-signed ones) in 64: kept by a change, grown at boot to twice the data.
    expect(chooseSizes({ ...none, gw_certs: 40 * MiB }, current).gw_certs).toBe(64 * MiB);
    expect(chooseSizes({ ...none, gw_certs: 40 * MiB }, current, DEFAULT_DICT_LIMITS, BOOT_GROW_AT).gw_certs).toBe(
      128 * MiB,
    );
    // Half full or less: kept at boot too, and 60 % more data fits before a change grows it.
    expect(chooseSizes({ ...none, gw_certs: 32 * MiB }, current, DEFAULT_DICT_LIMITS, BOOT_GROW_AT)).toEqual(current);
    expect(chooseSizes({ ...none, gw_certs: 51 * MiB }, current)).toEqual(current);
  });

  it('never passes its ceiling: what does not fit then is set aside, not grown for', () => {
    const limits: DictLimits = {
      floors: { ...floors, gw_routes: 64 * KiB },
      ceilings: { ...DEFAULT_DICT_LIMITS.ceilings, gw_routes: 256 * KiB },
    };
    expect(chooseSizes(none, null, limits).gw_routes).toBe(64 * KiB);
    expect(chooseSizes({ ...none, gw_routes: 100 * KiB }, null, limits).gw_routes).toBe(256 * KiB);
    expect(chooseSizes({ ...none, gw_routes: 10 * MiB }, { ...limits.floors, gw_routes: 256 * KiB }, limits)).toEqual({
      ...limits.floors,
      gw_routes: 256 * KiB,
    });
  });

  it('gives gw_live room for every connection the workers may hold, fixed by the config', () => {
    // This machine's defaults: 18,432 connections per worker, two workers.
    expect(withLiveFor(DEFAULT_DICT_LIMITS, 18_432, 2).floors.gw_live).toBe(floors.gw_live);
    // 65,536 connections per worker on 32 CPUs: half of them proxied requests, 256 bytes each.
    const big = withLiveFor(DEFAULT_DICT_LIMITS, 65_536, 32);
    expect(big.floors.gw_live).toBe(256 * MiB);
    expect(big.ceilings.gw_live).toBe(256 * MiB);
    expect(chooseSizes({ ...none, gw_routes: 10 * MiB }, null, big).gw_live).toBe(256 * MiB);
  });

  it('renders KiB and reads back what it rendered, and the sizes of an older release', () => {
    const sizes = chooseSizes({ ...none, gw_routes: 100 * MiB }, null);
    const lines = renderDicts(sizes);
    expect(lines).toContain('lua_shared_dict gw_routes 262144k;');
    expect(parseDicts(lines.map((line) => `    ${line}`).join('\n'))).toEqual(sizes);
    expect(parseDicts('    lua_shared_dict gw_routes 64m;\n    lua_shared_dict gw_certs 128m;')).toEqual({
      gw_routes: 64 * MiB,
      gw_certs: 128 * MiB,
    });
    expect(() => renderDicts({ ...floors, gw_acme: 1000 })).toThrow('invalid size');
  });

  describe('of a fresh master, from the snapshot it loads', () => {
    let dir = '';
    afterAll(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('counts the routes, the certificates it names and the services', async () => {
      dir = await mkdtemp(join(tmpdir(), 'postern-dicts-'));
      const prefixDir = join(dir, 'nginx');
      const certsDir = join(dir, 'certs');
      await mkdir(join(prefixDir, 'state'), { recursive: true });
      await mkdir(certsDir);
      await writeFile(join(certsDir, 'a.test.pem'), 'p'.repeat(3000));
      const hosts = { 'a.test': '[{"s":1,"r":"x","p":"/","u":"u"},{"s":2,"r":"y","p":"/b","u":"u"}]', '': '[{"s":3}]' };
      await writeFile(snapshotFile(prefixDir), JSON.stringify({ version: 'v', hosts, certs: ['a.test', 'gone.test'] }));
      expect(await readSnapshotNeeds(prefixDir, certsDir)).toEqual({
        gw_routes: routesBytes(Object.entries(hosts)),
        gw_certs: entryBytes(6, 3000),
        gw_stats: statsBytes(3),
      });
      await rm(snapshotFile(prefixDir));
      expect(await readSnapshotNeeds(prefixDir, certsDir)).toEqual({
        gw_routes: routesBytes([]),
        gw_certs: 0,
        gw_stats: statsBytes(0),
      });
    });
  });
});
