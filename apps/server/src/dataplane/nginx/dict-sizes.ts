import { readFile, stat } from 'node:fs/promises';
import { pemPath } from '../certs/self-signed.js';
import { snapshotFile } from './options.js';

// Sizes of the HTTP instance's shared dictionaries (lua/postern.lua), from the data they hold. A dictionary's size is
// fixed when nginx loads its config: a bigger one takes a new generation and a graceful reload (http-instance.ts
// `fit`), which gives the grown dictionary a fresh, empty zone that the Lua module fills from the snapshot on disk;
// dictionaries whose size did not change keep their zone (nginx reuses a zone of the same name and size), so gw_live
// (the cut-off's record) and the others survive. So a dictionary grows rarely and by a lot (to twice its data, a power
// of two), only grows while nginx runs, and a fresh master gets what the snapshot needs.

export const DICT_NAMES = ['gw_routes', 'gw_certs', 'gw_acme', 'gw_live', 'gw_stats', 'gw_access'] as const;
export type DictName = (typeof DICT_NAMES)[number];
/** Bytes per dictionary (whole KiB). */
export type DictSizes = Record<DictName, number>;
/** The dictionaries sized from the data, and the bytes their data takes. */
export type DictNeeds = Record<'gw_routes' | 'gw_certs' | 'gw_stats', number>;

export interface DictLimits {
  /** No dictionary is smaller: room for a typical gateway without ever growing. */
  floors: DictSizes;
  /** Nor bigger (shared memory is real memory once filled): a change that needs more is set aside. */
  ceilings: DictSizes;
}

const KiB = 1024;
const MiB = 1024 * KiB;

export const DEFAULT_DICT_LIMITS: DictLimits = {
  // gw_routes: ~60,000 one-route hosts; gw_certs: ~8,000 certificates of one page; gw_live: ~130,000 requests in
  // flight (more than the workers' connections); gw_stats: ~6,500 services with traffic; gw_access (docs/ACCESS.md):
  // the cookie key, policies (a few hundred bytes each) and revoked visitor sessions (~128 bytes each: ~120,000).
  floors: {
    gw_routes: 16 * MiB,
    gw_certs: 32 * MiB,
    gw_acme: 1 * MiB,
    gw_live: 16 * MiB,
    gw_stats: 16 * MiB,
    gw_access: 16 * MiB,
  },
  ceilings: {
    gw_routes: 1024 * MiB,
    gw_certs: 1024 * MiB,
    gw_acme: 1 * MiB,
    gw_live: 16 * MiB,
    gw_stats: 256 * MiB,
    gw_access: 16 * MiB,
  },
};

/** A grown dictionary holds twice its data... */
const HEADROOM = 2;
/** ...and grows again once its data would take more than this share of it. */
export const GROW_AT = 0.8;
/**
 * At boot (until the first full run has pushed everything) a dictionary grows already when its data takes more than
 * half of it: the reload happens while the boot's rebuild runs anyway, and the data can then grow by 60 % (half of it
 * to GROW_AT) before a change ever has to wait for one.
 */
export const BOOT_GROW_AT = 1 / HEADROOM;

const PAGE = 4096;
/** The red-black tree node and lua-nginx-module's dictionary node before the key (64-bit). */
const NODE_BYTES = 68;

/**
 * Bytes an entry takes: nginx's slab allocator gives an entry of up to half a page the next power of two (at least
 * 8 bytes) and a larger one whole pages. The same arithmetic as the Lua module's `entry_bytes` (its all-or-nothing
 * check of a change).
 */
export function entryBytes(keyLength: number, valueLength: number): number {
  const n = NODE_BYTES + keyLength + valueLength;
  if (n > PAGE / 2) return Math.ceil(n / PAGE) * PAGE;
  let slot = 8;
  while (slot < n) slot *= 2;
  return slot;
}

/**
 * The whole pages an entry takes: 0 for one of up to half a page, which shares a page with entries of its size. What
 * the Lua module's all-or-nothing check counts against free_space() (whole free pages); small entries are just tried.
 */
export function pageBytes(keyLength: number, valueLength: number): number {
  const bytes = entryBytes(keyLength, valueLength);
  return bytes > PAGE / 2 ? bytes : 0;
}

/**
 * gw_routes: `h:<host>` → the host's routes, and the version. Route tables are ASCII (every value passed an
 * allow-list), so a string's length is its size in bytes: this runs on every apply.
 */
export function routesBytes(hosts: Iterable<[string, string]>): number {
  let total = entryBytes(1, 32);
  for (const [host, json] of hosts) total += entryBytes(2 + host.length, json.length);
  return total;
}

/** Counters per service: five status classes, bytes in and out, the latency sum and twelve latency buckets. */
const STATS_PER_SERVICE = 19;
/** gw_stats: every counter of `services` services (keys like `12345:b10`, numbers of 8 bytes). */
export function statsBytes(services: number): number {
  return services * STATS_PER_SERVICE * entryBytes(10, 8) + 3 * entryBytes(12, 24);
}

/** gw_certs: name → combined PEM. */
export function certsBytes(pems: Iterable<[string, number]>): number {
  let total = 0;
  for (const [name, length] of pems) total += entryBytes(Buffer.byteLength(name), length);
  return total;
}

/** The smallest power of two from 8 KiB up that holds `bytes`. */
function roundUp(bytes: number): number {
  let size = 8 * KiB;
  while (size < bytes) size *= 2;
  return size;
}

/**
 * The sizes to render. `current` (what the running nginx has): each keeps its size while its data takes at most
 * `growAt` of it (GROW_AT; BOOT_GROW_AT at boot), else grows to twice its data; none ever shrinks. Without `current`
 * (a fresh master): twice the data. Always within the limits; dictionaries not sized from the data are their floor.
 */
export function chooseSizes(
  needs: DictNeeds,
  current: DictSizes | null,
  limits = DEFAULT_DICT_LIMITS,
  growAt = GROW_AT,
): DictSizes {
  const sizes = { ...limits.floors };
  for (const name of DICT_NAMES) {
    const need = name in needs ? needs[name as keyof DictNeeds] : 0;
    const floor = limits.floors[name];
    const ceiling = Math.max(floor, limits.ceilings[name]);
    const held = current === null ? null : Math.max(floor, current[name]);
    if (held !== null && (need <= held * growAt || held >= ceiling)) sizes[name] = held;
    else sizes[name] = Math.min(ceiling, Math.max(floor, held ?? 0, roundUp(need * HEADROOM)));
  }
  return sizes;
}

/**
 * gw_live holds one entry per request in flight (its connection, service, revision and client): room for every
 * connection the workers may hold (`workerConnections` each; a proxied request holds two, one of them the backend's),
 * with entries of up to 256 bytes (a long service id, an address of 15 characters). Fixed by the config, so a reload
 * for a dictionary that grows keeps it (and the cut-off sees what old and new workers serve). At least the floor.
 */
export function withLiveFor(limits: DictLimits, workerConnections: number, workers: number): DictLimits {
  const live = Math.max(limits.floors.gw_live, roundUp((workerConnections / 2) * workers * 256));
  return { floors: { ...limits.floors, gw_live: live }, ceilings: { ...limits.ceilings, gw_live: live } };
}

export const sameSizes = (a: DictSizes, b: DictSizes): boolean => DICT_NAMES.every((name) => a[name] === b[name]);

/** The `lua_shared_dict` lines of an HTTP instance's nginx.conf (sizes in KiB). */
export function renderDicts(sizes: DictSizes): string[] {
  return DICT_NAMES.map((name) => {
    const kib = Math.ceil(sizes[name] / KiB);
    if (!Number.isSafeInteger(kib) || kib < 8) throw new Error(`invalid size for ${name}: ${String(sizes[name])}`);
    return `lua_shared_dict ${name} ${kib}k;`;
  });
}

/** The dictionary sizes an nginx.conf of ours declares (`k` or `m`); those it does not name are absent. */
export function parseDicts(conf: string): Partial<DictSizes> {
  const sizes: Partial<DictSizes> = {};
  for (const match of conf.matchAll(/^\s*lua_shared_dict (gw_[a-z]+) (\d+)([km]);$/gm)) {
    const [, name = '', amount = '0', unit] = match;
    if ((DICT_NAMES as readonly string[]).includes(name))
      sizes[name as DictName] = Number(amount) * (unit === 'm' ? MiB : KiB);
  }
  return sizes;
}

/** What a fresh master loads: the routes snapshot (lua/postern.lua `init`) and the certificates it names. */
export async function readSnapshotNeeds(prefixDir: string, certsDir: string): Promise<DictNeeds> {
  const text = await readFile(snapshotFile(prefixDir), 'utf8').catch(() => null);
  let snapshot: { hosts?: Record<string, string>; certs?: string[] } = {};
  try {
    snapshot = text === null ? {} : (JSON.parse(text) as typeof snapshot);
  } catch {
    // A torn or foreign file: the master loads nothing from it either.
  }
  const hosts = Object.entries(snapshot.hosts ?? {}).filter((entry) => typeof entry[1] === 'string');
  const pems: [string, number][] = [];
  for (const name of snapshot.certs ?? []) {
    if (typeof name !== 'string' || !/^[a-z0-9_][a-z0-9.-]*$/.test(name)) continue;
    const size = await stat(pemPath(certsDir, name)).then(
      (s) => s.size,
      () => null,
    );
    if (size !== null) pems.push([name, size]);
  }
  let services = 0;
  for (const [, json] of hosts) services += json.split('{"s":').length - 1;
  return { gw_routes: routesBytes(hosts), gw_certs: certsBytes(pems), gw_stats: statsBytes(services) };
}
