import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from './atomic-write.js';
import type { SupervisedProxy } from './supervisor.js';
import { parseLive, staleRequests, type ConnectionCutter } from './connections.js';
import { ControlError, mib, type Refusal } from './nginx/control-client.js';
import {
  certsBytes,
  DICT_NAMES,
  entryBytes,
  pageBytes,
  routesBytes,
  statsBytes,
  type DictName,
  type DictNeeds,
} from './nginx/dict-sizes.js';
import type { HttpInstance } from './nginx/http-instance.js';
import { FALLBACK_CERT_NAME, accessSnapshotFile, snapshotFile } from './nginx/options.js';
import type { AccessTable } from './nginx/access-table.js';
import type { StreamInstances, WantedInstance } from './nginx/stream-instances.js';
import type { ProxyAdapter } from './reconciler.js';
import {
  LATENCY_BUCKETS_MS,
  NoRoomError,
  type DataPlaneLogger,
  type DictionaryUsage,
  type HttpTraffic,
} from './types.js';
import { isHostname } from './validate.js';
import { routesWithout, withoutServices } from './nginx/routes.js';
import { NO_ROOM } from './reconcile/problems.js';
import { pemPath } from './certs/self-signed.js';

// The real proxy: the HTTP instance fed over its control socket, the TCP/UDP instances, the connection cutter.
// What nginx holds is tracked here (routes by host, their version), so a change pushes only what differs. When that
// knowledge is lost (nginx restarted or was changed behind our back, a push failed midway) it is read back from nginx
// (GET /digest, an MD5 per host) and the next push is again only what differs: never a push of everything, which at
// scale is larger than the control socket takes.
//
// Every push is all or nothing (lua/postern.lua `transact`). The shared dictionaries grow with the data
// (dict-sizes.ts); a change that still does not fit (a dictionary at its ceiling) is refused whole, and the rows that
// caused it are set aside: the routes of the services it adds or grows are left out (they get an applyError),
// everything else is pushed, and the next change tries them again. So a full dictionary never stops other changes.

/** heal, drift, crowdedServices and forget: the part supervision uses (supervisor.ts). */
export interface Proxy extends ProxyAdapter, SupervisedProxy {
  /** Adopts or starts nginx and the service instances (before the first apply). */
  start(): Promise<void>;
  /** HTTP-01 answers, served on port 80 by nginx itself. */
  setChallenge(token: string, answer: string): Promise<void>;
  removeChallenge(token: string): Promise<void>;
  /** A certificate file was replaced (renewal, issuance): push it and reload the TCP instances serving it. */
  certificateInstalled(name: string): Promise<void>;
  /** HTTP traffic counters per service, as nginx counted them (lua/postern.lua `count()`). */
  httpTraffic(): Promise<{ epoch: string; services: Map<number, HttpTraffic> }>;
  /** How full nginx's shared dictionaries are, and the writes refused for lack of room. */
  dictionaries(): Promise<DictionaryUsage[]>;
  stop(options: { keepServing: boolean }): Promise<void>;
}

const TOKEN_RE = /^[A-Za-z0-9_-]{1,256}$/;
/** Certificates per push: a full push at 10,000 domains is ~10-50 MB of PEMs. */
const CERTS_PER_PUSH = 500;
const PEMS_READ_AT_ONCE = 32;
/** Routes per push: larger deltas (a first push at scale) go in parts, after checking the whole fits. */
const ROUTE_BYTES_PER_PUSH = 8 * 1024 * 1024;
/** A certificate read back from nginx, of unknown length: most combined PEMs take one or two pages. */
const UNKNOWN_CERT_BYTES = 8192;
/** The routes snapshot is written this long after a push (a burst of pushes writes it once). */
const SNAPSHOT_PAUSE_MS = 200;
/** After a failed attempt to grow the dictionaries, the next one waits this long. */
const GROW_RETRY_MS = 60_000;
/** Counters of a service that is no longer served are forgotten once the traffic history has read them. */
const FORGET_COUNTERS_AFTER_MS = 5 * 60_000;

/** What nginx holds for a host: the text pushed, or the MD5 read back from it. */
type Held = { text: string; md5?: undefined } | { text?: undefined; md5: string };

/**
 * The snapshot's JSON (`{"version", "hosts": {host: routes JSON}, "certs": [name]}`, what lua/postern.lua `init` reads)
 * in pieces of about 1 MiB, made as they are written.
 */
export function* snapshotPieces(
  hosts: ReadonlyMap<string, string>,
  certNames: readonly string[],
  version: string,
): Generator<string> {
  yield `{"version":${JSON.stringify(version)},"hosts":{`;
  let piece = '';
  let separator = '';
  for (const [host, json] of hosts) {
    piece += `${separator}${JSON.stringify(host)}:${JSON.stringify(json)}`;
    separator = ',';
    if (piece.length >= 1 << 20) {
      yield piece;
      piece = '';
    }
  }
  yield `${piece}},"certs":${JSON.stringify([FALLBACK_CERT_NAME, ...certNames.filter(isHostname)])}}`;
}

type Control = HttpInstance['control'];

async function readPem(certsDir: string, name: string): Promise<string | null> {
  return readFile(pemPath(certsDir, name), 'utf8').catch(() => null);
}

/** PEMs of `names`, read PEMS_READ_AT_ONCE at a time (one after the other cost 2.9 s at 10,000; together 1.1 s). */
async function readPems(certsDir: string, names: readonly string[]): Promise<(string | null)[]> {
  const pems: (string | null)[] = [];
  for (let i = 0; i < names.length; i += PEMS_READ_AT_ONCE) {
    pems.push(...(await Promise.all(names.slice(i, i + PEMS_READ_AT_ONCE).map((name) => readPem(certsDir, name)))));
  }
  return pems;
}

/**
 * Writes the latest value it was offered, one write at a time, off the caller's path: a burst of offers writes once
 * or twice, and nobody waits but flush().
 */
class LatestWins<T> {
  private pending: { value: T } | null = null;
  private writer: Promise<void> | null = null;

  constructor(
    private readonly write: (value: T) => Promise<void>,
    /** A pause before the first write, so a burst is written once. */
    private readonly pauseMs = 0,
  ) {}

  offer(value: T): void {
    this.pending = { value };
    this.writer ??= (async () => {
      if (this.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
      while (this.pending !== null) {
        const { value: latest } = this.pending;
        this.pending = null;
        await this.write(latest);
      }
      this.writer = null;
    })();
  }

  async flush(): Promise<void> {
    while (this.writer) await this.writer;
  }
}

/** Every HTTP service's counters as nginx's gw_stats holds them. */
async function readHttpTraffic(control: Control): Promise<{ epoch: string; services: Map<number, HttpTraffic> }> {
  const answer = await control.get<{
    epoch: string | null;
    services: Record<string, Record<string, unknown>>;
  }>('/stats');
  const services = new Map<number, HttpTraffic>();
  for (const [id, row] of Object.entries(answer.services)) {
    const n = (field: string): number => Number(row[field] ?? 0);
    services.set(Number(id), {
      requests: [n('c1'), n('c2'), n('c3'), n('c4'), n('c5')],
      bytesIn: n('bi'),
      bytesOut: n('bo'),
      latencySumMs: n('ls'),
      latencyBuckets: Array.from({ length: LATENCY_BUCKETS_MS.length + 1 }, (_, i) => n(`b${i}`)),
      open: n('open'),
    });
  }
  return { epoch: answer.epoch ?? 'none', services };
}

/** How full each shared dictionary is, and how many writes it refused. */
async function readDictionaries(
  control: Control,
  refusedPushes: ReadonlyMap<string, number>,
): Promise<DictionaryUsage[]> {
  const space = await control.get<{
    dicts: Record<string, { capacity: number; free: number }>;
    dropped: number;
    live_refused: number;
  }>('/space');
  const refused = (name: DictName): number =>
    name === 'gw_live' ? space.live_refused : name === 'gw_stats' ? space.dropped : (refusedPushes.get(name) ?? 0);
  return DICT_NAMES.map((name) => ({
    name,
    capacityBytes: space.dicts[name]?.capacity ?? 0,
    freeBytes: space.dicts[name]?.free ?? 0,
    refusedWrites: refused(name),
  }));
}

interface AccessDigest {
  key: string | null;
  /** An empty table arrives as {} (Debian's cjson has no empty array). */
  policies: Record<string, string>;
  revoked: string[] | Record<string, never>;
}

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

/** What nginx's access module holds that differs from the table: the key, policies, revoked sessions. */
async function accessDrift(control: Control, access: AccessTable, key: string): Promise<string[]> {
  const differences: string[] = [];
  const held = await control.get<AccessDigest>('/access/digest');
  const { policies } = held;
  if (held.key !== md5(key)) differences.push('nginx checks visitors with another key than the database says');
  for (const [ref, json] of access.entries)
    if (policies[ref] !== md5(json)) differences.push(`nginx lacks the access policy ${ref}`);
  const revoked = new Set(Array.isArray(held.revoked) ? held.revoked : []);
  const missing = [...access.revoked.keys()].filter((sid) => !revoked.has(sid)).length;
  if (missing > 0) differences.push(`nginx lets in ${missing} revoked visitor session(s)`);
  return differences;
}

/** Pending orders' HTTP-01 answers nginx was not handed (null: unknown, so every one is missing). */
function challengeDrift(pushed: ReadonlyMap<string, string> | null, challenges: ReadonlyMap<string, string>): string[] {
  const answers = pushed ?? new Map<string, string>();
  return [...challenges]
    .filter(([token, answer]) => answers.get(token) !== answer)
    .map(([token]) => `nginx lacks the ACME answer of a pending order (${token})`);
}

/** Routes and certificates nginx holds (its digest) that differ from `served` and the PEMs on disk. */
async function routesAndCertificatesDrift(
  control: Control,
  served: ReadonlyMap<string, string>,
  certNames: readonly string[],
  certsDir: string,
): Promise<string[]> {
  const differences: string[] = [];
  const digest = await control.get<{ hosts: Record<string, string>; certs: Record<string, string> }>('/digest');
  const label = (host: string): string => (host === '' ? 'services without a domain' : host);
  for (const [host, json] of served) {
    const hash = digest.hosts[host];
    if (hash === undefined) differences.push(`nginx lacks the routes of ${label(host)}`);
    else if (hash !== md5(json))
      differences.push(`nginx serves other routes for ${label(host)} than the database says`);
  }
  for (const host of Object.keys(digest.hosts))
    if (!served.has(host)) differences.push(`nginx routes ${label(host)}, which the database does not`);
  const pems = await readPems(certsDir, certNames);
  for (const [i, name] of certNames.entries()) {
    const pem = pems[i];
    if (pem == null) continue;
    const hash = digest.certs[name];
    if (hash === undefined) differences.push(`nginx lacks the certificate of ${name}`);
    else if (hash !== md5(pem)) differences.push(`nginx serves another certificate for ${name} than the one on disk`);
  }
  return differences;
}

/** TCP/UDP instances that should run and do not (unless set aside), and those that run unwanted. */
function streamsDrift(
  running: ReadonlyMap<string, unknown>,
  wanted: ReadonlyMap<string, WantedInstance>,
  failures: ReadonlyMap<string, string>,
): string[] {
  const differences: string[] = [];
  for (const key of wanted.keys())
    if (!running.has(key) && !failures.has(key)) differences.push(`the instance of ${key} is not running`);
  for (const key of running.keys())
    if (!wanted.has(key)) differences.push(`an instance of ${key} runs, which the database does not want`);
  return differences;
}

export function createProxy(options: {
  prefixDir: string;
  certsDir: string;
  http: HttpInstance;
  streams: StreamInstances;
  cutter: ConnectionCutter;
  logger: DataPlaneLogger;
}): Proxy {
  const { http, streams, cutter, logger, certsDir } = options;
  /** Routes nginx holds, by host; null: unknown, read back before the next push. */
  let held: Map<string, Held> | null = null;
  let version: string | null = null;
  let sequence = 0;
  const bootId = Date.now().toString(36);
  /** Whether start() has run: before it, nginx takes certificates from disk when it starts. */
  let isStarted = false;
  const installedBeforeStart = new Set<string>();
  /** Instances that could not start at the last sync (set aside): not drift. */
  let lastStreamFailures = new Map<string, string>();
  /** Services whose routes were left out at the last push for lack of room, with the reason. */
  let crowded = new Map<number, string>();
  /**
   * The hosts they are in (with the routes the database wanted for them then), and the routes dictionary's free
   * pages after that push: while neither changes, they are left out without trying.
   */
  let setAside: {
    hosts: Map<string, { json: string; ids: number[]; kept: string | null }>;
    message: string;
    free: number;
  } | null = null;
  /** Certificates nginx holds: name → MD5 of the PEM as pushed, and its size when known. */
  const pushedCerts = new Map<string, string>();
  const certSizes = new Map<string, number>();
  /** Pushes refused for lack of room, by dictionary (since this control plane started). */
  const refusedPushes = new Map<string, number>();
  /** What the data takes in the dictionaries sized from it (dict-sizes.ts). */
  const needs: DictNeeds = { gw_routes: 0, gw_certs: 0, gw_stats: 0 };
  let growAgainAt = 0;
  /** Services served at the last cut-off, and since when services no longer served have been gone. */
  let lastRevisions: ReadonlyMap<number, string> | null = null;
  const goneSince = new Map<number, number>();
  /**
   * HTTP-01 answers handed to nginx, by token; null: unknown (nginx adopted or restarted), the next sync sets them all.
   * Answers of orders that ended while unknown may linger in nginx; they answer nothing anyone asks for.
   */
  let pushedChallenges: Map<string, string> | null = null;
  const isSame = (entry: Held | undefined, json: string): boolean =>
    entry !== undefined && (entry.text !== undefined ? entry.text === json : entry.md5 === md5(json));
  /**
   * The whole route table as last synced, patched by scoped runs since, and the certificates a fresh master loads:
   * what the snapshot holds. null before the first full sync: a scoped run then waits for one.
   */
  let table: Map<string, string> | null = null;
  let tableCerts: Set<string> | null = null;
  /** What nginx's access module holds (docs/ACCESS.md); null: unknown, learnt from its digest before the next push. */
  let heldAccess: { key: string | null; refs: Set<string>; revoked: Set<string> } | null = null;

  function countRefusal(err: unknown): Refusal | null {
    const refusal = err instanceof ControlError ? err.refusal : null;
    if (refusal) refusedPushes.set(refusal.dict, (refusedPushes.get(refusal.dict) ?? 0) + 1);
    return refusal;
  }

  /** What a running nginx (adopted, restarted, reloaded, or changed behind our back) holds. */
  async function learnWhatNginxHolds(): Promise<void> {
    const digest = await http.control.get<{
      version: string | null;
      hosts: Record<string, string>;
      certs: Record<string, string>;
    }>('/digest');
    version = digest.version;
    held = new Map(Object.entries(digest.hosts).map(([host, hash]) => [host, { md5: hash }]));
    pushedChallenges = null;
    heldAccess = null;
    pushedCerts.clear();
    certSizes.clear();
    for (const [name, hash] of Object.entries(digest.certs)) pushedCerts.set(name, hash);
  }

  /** What the access module holds: refs, the key's MD5 (compared as such) and the revoked session ids. */
  async function learnAccess(table: AccessTable): Promise<NonNullable<typeof heldAccess>> {
    const digest = await http.control.get<AccessDigest>('/access/digest');
    const keyMatches = table.key !== null && digest.key === md5(table.key);
    return {
      key: keyMatches ? table.key : null,
      refs: new Set(Object.keys(digest.policies)),
      revoked: new Set(Array.isArray(digest.revoked) ? digest.revoked : []),
    };
  }

  /** What a fresh master loads with the routes (the key inside: 0600, root only, like the secret key beside it). */
  const accessSnapshot = new LatestWins<string>((text) =>
    writeFileAtomic(accessSnapshotFile(options.prefixDir), text, 0o600).catch((err: unknown) =>
      logger.error({ err }, 'nginx: could not save the access snapshot'),
    ),
  );
  const writeAccessSnapshot = (table: AccessTable, at: string): void =>
    accessSnapshot.offer(
      JSON.stringify({
        version: at,
        key: table.key,
        policies: Object.fromEntries(table.entries),
        revoked: Object.fromEntries(table.revoked),
      }),
    );

  const nextVersion = (): string => `${bootId}.${++sequence}`;

  /**
   * The snapshot a fresh master (or a grown dictionary) loads before its first request. Written off the apply's path
   * and after a short pause, latest wins: a burst of changes writes it once, and the apply never waits for it (at
   * 16,000 hosts of ~3.8 KB routes, serialising and writing its 61 MB on every change made each change take ~480 ms
   * instead of ~20 ms). A master that dies before it lands is restarted by this process, which reads back what it
   * holds and pushes what differs.
   */
  const routesSnapshot = new LatestWins<{
    hosts: ReadonlyMap<string, string>;
    certNames: Iterable<string>;
    at: string;
  }>(
    // Copied when written (once per burst): scoped runs patch the table in place meanwhile.
    ({ hosts, certNames, at }) =>
      writeFileAtomic(snapshotFile(options.prefixDir), snapshotPieces(new Map(hosts), [...certNames], at), 0o600).catch(
        (err: unknown) => logger.error({ err }, 'nginx: could not save the routes snapshot'),
      ),
    SNAPSHOT_PAUSE_MS,
  );
  const flushSnapshot = (): Promise<void> => routesSnapshot.flush();

  /**
   * Grows the dictionaries the data would fill (a graceful reload; nginx then holds what the snapshot says, read
   * back here). A failure leaves the sizes as they are: what does not fit is then set aside.
   */
  async function grow(): Promise<void> {
    // A reload that failed (nginx could not map that much shared memory, say) is not tried on every apply.
    if (Date.now() < growAgainAt) return;
    let isReloaded = false;
    try {
      isReloaded = await http.fit(needs, flushSnapshot);
    } catch (err) {
      growAgainAt = Date.now() + GROW_RETRY_MS;
      logger.error({ err }, 'nginx: could not grow its shared dictionaries; changes that do not fit are set aside');
      return;
    }
    if (isReloaded) await learnWhatNginxHolds();
  }

  /** The whole change against GET /space before it is sent in parts: refused whole, like one push would be. */
  async function checkRoom(set: [string, string][], del: string[], known: ReadonlyMap<string, Held>): Promise<void> {
    const space = await http.control.get<{ dicts: Record<string, { capacity: number; free: number }> }>('/space');
    const dict = space.dicts.gw_routes ?? { capacity: 0, free: 0 };
    let need = 0;
    let freed = 0;
    for (const [host, json] of set) need += pageBytes(2 + host.length, json.length);
    for (const host of [...del, ...set.map(([h]) => h)]) {
      const text = known.get(host)?.text;
      if (text !== undefined) freed += pageBytes(2 + host.length, text.length);
    }
    if (need <= dict.free + freed) return;
    const refusal: Refusal = {
      dict: 'gw_routes',
      need,
      free: dict.free + freed,
      freeSpace: dict.free,
      capacity: dict.capacity,
      intact: true,
    };
    throw new ControlError('nginx did not take POST /routes: its routes dictionary has no room for it.', 507, refusal);
  }

  /** Sends a delta: one push, or parts of at most ROUTE_BYTES_PER_PUSH once the whole was checked to fit. */
  async function sendRoutes(known: Map<string, Held>, set: [string, string][], del: string[]): Promise<void> {
    const parts: [string, string][][] = [[]];
    let bytes = 0;
    for (const entry of set) {
      const size = entry[0].length + entry[1].length;
      const last = parts.at(-1) as [string, string][];
      if (last.length > 0 && bytes + size > ROUTE_BYTES_PER_PUSH) {
        parts.push([entry]);
        bytes = size;
      } else {
        last.push(entry);
        bytes += size;
      }
    }
    if (parts.length > 1) await checkRoom(set, del, known);
    for (const [i, part] of parts.entries()) {
      const next = nextVersion();
      await http.control.post('/routes', {
        base: version,
        version: next,
        set: Object.fromEntries(part),
        ...(i === 0 && del.length > 0 ? { del } : {}),
      });
      version = next;
      if (i === 0) for (const host of del) known.delete(host);
      for (const [host, json] of part) known.set(host, { text: json });
    }
  }

  async function pushRoutes(hosts: ReadonlyMap<string, string>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (held === null) await learnWhatNginxHolds();
      const known = held as Map<string, Held>;
      const set: [string, string][] = [];
      const del: string[] = [];
      for (const [host, json] of hosts) {
        const entry = known.get(host);
        if (!isSame(entry, json)) set.push([host, json]);
        else if (entry?.text === undefined) known.set(host, { text: json });
      }
      for (const host of known.keys()) if (!hosts.has(host)) del.push(host);
      if (set.length === 0 && del.length === 0) return;
      try {
        await sendRoutes(known, set, del);
        return;
      } catch (err) {
        const isConflict = err instanceof ControlError && err.status === 409;
        // A refusal leaves nginx as it was: what is known stays true. Anything else: read it back next time.
        if (!(err instanceof ControlError && err.refusal?.intact === true)) held = null;
        if (isConflict && attempt === 0) {
          logger.warn({}, 'nginx: its routes changed behind the control plane; reading back what it holds');
          continue;
        }
        throw err;
      }
    }
  }

  /**
   * After a refusal: which services to leave out so the rest fits. Hosts whose routes shrink or stay the same size
   * always go in (removals and disabled services are always applied); of the hosts that grow, the smallest growth
   * first while the free room lasts (`everything`: none of them). In a host left out, the services whose route is new
   * or changed are left out; its other services are served as before.
   */
  async function crowdOut(
    hosts: ReadonlyMap<string, string>,
    refusal: Refusal,
    everything: boolean,
  ): Promise<Map<string, number[]>> {
    if (held === null) await learnWhatNginxHolds();
    const known = held ?? new Map<string, Held>();
    const changed = [...hosts].filter(([host, json]) => !isSame(known.get(host), json));
    const unknownText = changed.map(([host]) => host).filter((host) => known.get(host)?.md5 !== undefined);
    const old = new Map<string, string>();
    for (const [host, json] of known) if (json.text !== undefined) old.set(host, json.text);
    if (unknownText.length > 0) {
      const answer = await http.control.post<{ hosts: Record<string, string> }>('/held', { hosts: unknownText });
      for (const [host, json] of Object.entries(answer.hosts)) old.set(host, json);
    }
    // Room in whole pages, as the Lua module counts it. A host whose entry takes no more than it took (same or smaller
    // slab slot, same or fewer pages) always fits; small entries that grow are tried (the second round, `everything`,
    // leaves them out too); of those that need more pages, the smallest growth first while the free pages last.
    const pages = (host: string, json: string | undefined): number =>
      json === undefined ? 0 : pageBytes(2 + host.length, json.length);
    const slots = (host: string, json: string | undefined): number =>
      json === undefined ? 0 : entryBytes(2 + host.length, json.length);
    let room = refusal.freeSpace;
    for (const host of known.keys()) if (!hosts.has(host)) room += pages(host, old.get(host));
    const growing: { host: string; json: string; growth: number }[] = [];
    for (const [host, json] of changed) {
      const growth = pages(host, json) - pages(host, old.get(host));
      if (slots(host, json) <= slots(host, old.get(host)) || (growth === 0 && !everything)) room -= growth;
      else growing.push({ host, json, growth });
    }
    growing.sort((a, b) => a.growth - b.growth || a.host.localeCompare(b.host));
    const out = new Map<string, number[]>();
    for (const { host, json, growth } of growing) {
      if (!everything && growth <= room) {
        room -= growth;
        continue;
      }
      const before = new Map(
        (JSON.parse(old.get(host) ?? '[]') as { s: number }[]).map((route) => [route.s, JSON.stringify(route)]),
      );
      const ids = (JSON.parse(json) as { s: number }[])
        .filter((route) => before.get(route.s) !== JSON.stringify(route))
        .map((route) => route.s);
      if (ids.length > 0) out.set(host, ids);
    }
    return out;
  }

  const routesSpace = async (): Promise<number> =>
    (await http.control.get<{ dicts: Record<string, { free: number }> }>('/space')).dicts.gw_routes?.free ?? 0;

  /** gw_certs as it would be with `batch` pushed. */
  function certsNeed(batch: Readonly<Record<string, string>>): number {
    const sizes = new Map<string, number>();
    for (const name of pushedCerts.keys()) sizes.set(name, certSizes.get(name) ?? UNKNOWN_CERT_BYTES);
    for (const [name, pem] of Object.entries(batch)) sizes.set(name, Buffer.byteLength(pem));
    return certsBytes(sizes);
  }

  async function pushCerts(batch: Record<string, string>): Promise<void> {
    await http.control.post('/certs', { set: batch });
    for (const [name, pem] of Object.entries(batch)) {
      pushedCerts.set(name, md5(pem));
      certSizes.set(name, Buffer.byteLength(pem));
    }
  }

  /**
   * Pushes the current PEMs of `names` that nginx does not hold yet. When one does not fit (the certificate dictionary
   * at its ceiling), the others are still pushed, one by one, and NoRoomError names those left out.
   */
  async function publish(names: readonly string[]): Promise<void> {
    if (held === null) await learnWhatNginxHolds();
    const refused: string[] = [];
    let refusal: Refusal | null = null;
    for (let i = 0; i < names.length; i += CERTS_PER_PUSH) {
      const chunk = names.slice(i, i + CERTS_PER_PUSH);
      const batch: Record<string, string> = {};
      const pems = await readPems(certsDir, chunk);
      chunk.forEach((name, j) => {
        const pem = pems[j];
        if (pem != null && pushedCerts.get(name) !== md5(pem)) batch[name] = pem;
      });
      if (Object.keys(batch).length === 0) continue;
      needs.gw_certs = certsNeed(batch);
      await grow();
      try {
        await pushCerts(batch);
      } catch (err) {
        if (countRefusal(err) === null) throw err;
        for (const [name, pem] of Object.entries(batch)) {
          await pushCerts({ [name]: pem }).catch((single: unknown) => {
            const why = countRefusal(single);
            if (why === null) throw single;
            refusal = why;
            refused.push(name);
          });
        }
      }
    }
    const last = refusal as Refusal | null;
    if (last !== null && refused.length > 0)
      throw new NoRoomError(
        `${NO_ROOM}the certificate of this domain: its certificate dictionary is full at ` +
          `${mib(last.capacity)} MiB and cannot grow further. The domain's services are not served; the next change ` +
          'tries again.',
        refused,
      );
  }

  /** Forgets the counters of services gone for a while (their last figures were read by then). */
  async function forgetCounters(revisions: ReadonlyMap<number, string>): Promise<void> {
    const now = Date.now();
    for (const id of lastRevisions?.keys() ?? []) if (!revisions.has(id) && !goneSince.has(id)) goneSince.set(id, now);
    for (const id of revisions.keys()) goneSince.delete(id);
    lastRevisions = revisions;
    const due = [...goneSince].filter(([, since]) => now - since >= FORGET_COUNTERS_AFTER_MS).map(([id]) => id);
    if (due.length === 0) return;
    await http.control.post('/stats', { del: due.map(String) });
    for (const id of due) goneSince.delete(id);
  }

  return {
    async start() {
      await http.start();
      await streams.adopt();
      // A running nginx (adopted, or a fresh one that loaded its snapshot) holds most of what the first apply wants:
      // only what differs is pushed.
      await learnWhatNginxHolds();
      await publish([FALLBACK_CERT_NAME]);
      isStarted = true;
      // Certificates replaced before this (the first boot's fallback): nginx read them from disk when it started, or
      // the publish above handed them over; the TCP instances serving them are reloaded now.
      for (const name of installedBeforeStart) await streams.reloadServing(name);
      installedBeforeStart.clear();
    },

    async syncRoutes(hosts, certNames, serviceCount) {
      needs.gw_routes = routesBytes(hosts);
      if (serviceCount !== undefined) needs.gw_stats = statsBytes(serviceCount);
      await grow();
      const left = new Map<number, string>();
      /** Hosts with services left out: which ones, and what is pushed for the host instead (null: nothing). */
      const leftIn = new Map<string, { ids: number[]; kept: string | null }>();
      let wanted = new Map(hosts);
      const leaveOut = (host: string, ids: readonly number[], message: string, kept?: string | null): void => {
        const all = [...(leftIn.get(host)?.ids ?? []), ...ids];
        for (const id of ids) left.set(id, message);
        const json = hosts.get(host);
        const rest = kept !== undefined ? kept : json === undefined ? null : routesWithout(json, new Set(all));
        leftIn.set(host, { ids: all, kept: rest });
        if (rest === null) wanted.delete(host);
        else wanted.set(host, rest);
      };
      /** Pushes `wanted`; what does not fit is left out (two rounds at most), the rest pushed. */
      const push = async (): Promise<void> => {
        for (let round = 0; ; round++) {
          try {
            await pushRoutes(wanted);
            return;
          } catch (err) {
            const refusal = countRefusal(err);
            if (refusal === null || round === 2) throw err;
            let out = await crowdOut(wanted, refusal, round === 1);
            // Nothing needed more pages: a small entry found no slot, so everything that grows is left out.
            if (out.size === 0 && round === 0) out = await crowdOut(wanted, refusal, true);
            if (out.size === 0) throw err;
            const message =
              `${NO_ROOM}this service's routes: its routes dictionary is full at ${mib(refusal.capacity)} MiB and ` +
              'cannot grow further. It is served once there is room again.';
            for (const [host, ids] of out) leaveOut(host, ids, message);
            logger.error(
              { services: [...out.values()].flat(), capacity: refusal.capacity, free: refusal.freeSpace },
              'nginx: no room in the routes dictionary for a change; its services are set aside',
            );
          }
        }
      };
      // What was set aside last time, unchanged, is not tried again while nginx has no more room than then (a refused
      // push of them on every change would cost every change seconds at scale); once this push made room, it is.
      const before = setAside;
      if (before !== null && (await routesSpace()) <= before.free) {
        for (const [host, memo] of before.hosts)
          if (hosts.get(host) === memo.json) leaveOut(host, memo.ids, before.message, memo.kept);
      }
      const isHeldBack = left.size > 0;
      await push();
      if (isHeldBack && before !== null && (await routesSpace()) > before.free) {
        left.clear();
        leftIn.clear();
        wanted = new Map(hosts);
        await push();
      }
      crowded = left;
      setAside =
        left.size === 0
          ? null
          : {
              hosts: new Map([...leftIn].map(([host, out]) => [host, { json: hosts.get(host) ?? '', ...out }])),
              message: [...left.values()][0] ?? '',
              free: await routesSpace(),
            };
      table = wanted;
      tableCerts = new Set(certNames);
      if (version !== null) routesSnapshot.offer({ hosts: table, certNames: tableCerts, at: version });
      return left;
    },

    async patchRoutes(entries, hosts, certNames) {
      // Services set aside for lack of room are the full sync's to bring back; unknown contents are read back by it.
      if (table === null || tableCerts === null || setAside !== null || held === null) return false;
      const known = held;
      const set: [string, string][] = [];
      const del: string[] = [];
      for (const host of hosts) {
        const json = entries.get(host);
        const entry = known.get(host);
        if (json === undefined) {
          if (entry !== undefined) del.push(host);
        } else if (!isSame(entry, json)) set.push([host, json]);
      }
      if (set.length > 0 || del.length > 0) {
        try {
          await sendRoutes(known, set, del);
        } catch (err) {
          // Refused for lack of room (nginx as it was): the full sync grows the dictionary or sets services aside.
          // Anything else (409 included): what nginx holds is read back by the full sync.
          const refusal = countRefusal(err);
          if (refusal === null || !refusal.intact) held = null;
          if (refusal !== null || (err instanceof ControlError && err.status === 409)) return false;
          throw err;
        }
      }
      for (const host of hosts) {
        const json = entries.get(host);
        if (json === undefined) table.delete(host);
        else table.set(host, json);
      }
      for (const name of certNames) tableCerts.add(name);
      if (version !== null) routesSnapshot.offer({ hosts: table, certNames: tableCerts, at: version });
      return true;
    },

    // Before the routes: new policy entries, the key and revocations, so a route never names a policy nginx lacks.
    async syncAccess(table) {
      if (table.key === null && table.entries.size === 0 && heldAccess === null) return;
      try {
        const held = heldAccess ?? (await learnAccess(table));
        const set: Record<string, string> = {};
        for (const [ref, json] of table.entries) if (!held.refs.has(ref)) set[ref] = json;
        const revoke: Record<string, number> = {};
        for (const [sid, expiry] of table.revoked) if (!held.revoked.has(sid)) revoke[sid] = expiry;
        const key = held.key === table.key ? undefined : table.key;
        if (Object.keys(set).length > 0 || Object.keys(revoke).length > 0 || key) {
          const at = nextVersion();
          await http.control.post('/access', { version: at, ...(key ? { key } : {}), set, revoke });
          writeAccessSnapshot(table, at);
        }
        heldAccess = {
          key: table.key,
          refs: new Set([...held.refs, ...table.entries.keys()]),
          revoked: new Set([...held.revoked, ...table.revoked.keys()]),
        };
      } catch (err) {
        heldAccess = null;
        throw err;
      }
    },

    // After the routes: entries no route names any more.
    async pruneAccess(table) {
      if (heldAccess === null) return;
      const del = [...heldAccess.refs].filter((ref) => !table.entries.has(ref));
      if (del.length === 0) return;
      await http.control.post('/access', { version: nextVersion(), del });
      for (const ref of del) heldAccess.refs.delete(ref);
    },

    publishCertificates: (names) => publish(names),

    async unpublishCertificates(names) {
      if (names.length === 0) return;
      await http.control.post('/certs', { del: names });
      for (const name of names) {
        pushedCerts.delete(name);
        certSizes.delete(name);
      }
    },

    async syncStreams(wanted: ReadonlyMap<string, WantedInstance>) {
      lastStreamFailures = await streams.sync(wanted);
      return lastStreamFailures;
    },

    async cutStale(revisions, only) {
      // Requests still open on the workers of a killed master count too: they serve until they end.
      const answer = await http.control.get<unknown>('/live');
      // cjson writes an empty list as {}.
      const held: unknown[] = Array.isArray(answer) ? answer : [];
      const live = parseLive([...held, ...http.drainingRequests()]);
      const stale = staleRequests(only ? live.filter((request) => only.has(request.serviceId)) : live, revisions);
      await cutter.cut(stale);
      // A scoped run's revisions are a few services': the counters of the others are the full run's to forget.
      if (only) return stale.length;
      await forgetCounters(revisions).catch((err: unknown) =>
        logger.warn({ err }, 'nginx: could not forget the counters of removed services'),
      );
      return stale.length;
    },

    async heal() {
      const restarted = await http.heal();
      if (restarted) {
        await learnWhatNginxHolds();
        await publish([FALLBACK_CERT_NAME]);
      }
      return { http: restarted, streams: await streams.heal() };
    },

    async setChallenge(token, answer) {
      if (!TOKEN_RE.test(token)) throw new Error('malformed ACME challenge token');
      await http.control.post('/acme', { set: { [token]: answer } });
      pushedChallenges?.set(token, answer);
    },

    async removeChallenge(token) {
      if (!TOKEN_RE.test(token)) return;
      await http.control.post('/acme', { del: [token] });
      pushedChallenges?.delete(token);
    },

    async syncChallenges(answers) {
      const set: Record<string, string> = {};
      for (const [token, answer] of answers)
        if (TOKEN_RE.test(token) && pushedChallenges?.get(token) !== answer) set[token] = answer;
      const del = pushedChallenges === null ? [] : [...pushedChallenges.keys()].filter((token) => !answers.has(token));
      if (Object.keys(set).length === 0 && del.length === 0) {
        pushedChallenges ??= new Map();
        return;
      }
      pushedChallenges = null;
      await http.control.post('/acme', { set, ...(del.length > 0 ? { del } : {}) }).catch((err: unknown) => {
        countRefusal(err);
        throw err;
      });
      pushedChallenges = new Map([...answers].filter(([token]) => TOKEN_RE.test(token)));
    },

    async certificateInstalled(name) {
      // Before start() there is nothing to hand over: nginx reads the file when it starts (first boot: the fallback).
      if (!isStarted) {
        installedBeforeStart.add(name);
        return;
      }
      pushedCerts.delete(name);
      await publish([name]).catch((err: unknown) =>
        logger.error({ err, name }, 'nginx: could not hand over a renewed certificate'),
      );
      await streams.reloadServing(name);
    },

    httpTraffic: () => readHttpTraffic(http.control),

    dictionaries: () => readDictionaries(http.control, refusedPushes),

    async drift(routes, certNames, wantedStreams, challenges, access) {
      const served = withoutServices(routes, crowded, setAside?.hosts.keys());
      return [
        ...(access !== undefined && access.key !== null ? await accessDrift(http.control, access, access.key) : []),
        ...(challenges === undefined ? [] : challengeDrift(pushedChallenges, challenges)),
        ...(await routesAndCertificatesDrift(http.control, served, [FALLBACK_CERT_NAME, ...certNames], certsDir)),
        ...streamsDrift(streams.running(), wantedStreams, lastStreamFailures),
      ];
    },

    crowdedServices: () => [...crowded.keys()],

    forget() {
      // Routes and certificates are read back before the next push (GET /digest), so only what differs is pushed.
      held = null;
      pushedChallenges = null;
      heldAccess = null;
    },

    async stop({ keepServing }) {
      await routesSnapshot.flush();
      await accessSnapshot.flush();
      await streams.stop({ keepServing });
      await http.stop({ keepServing });
    },
  };
}
