import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from './atomic-write.js';
import { parseLive, staleRequests, type ConnectionCutter } from './connections.js';
import { ControlError } from './nginx/control-client.js';
import type { HttpInstance } from './nginx/http-instance.js';
import { FALLBACK_CERT_NAME, snapshotFile } from './nginx/options.js';
import type { StreamInstances, WantedInstance } from './nginx/stream-instances.js';
import type { ProxyAdapter } from './reconciler.js';
import { LATENCY_BUCKETS_MS, type DataPlaneLogger, type HttpTraffic } from './types.js';
import { isHostname } from './validate.js';
import { pemPath } from './certs/self-signed.js';

// The real proxy: the HTTP instance fed over its control socket, the TCP/UDP instances, the connection cutter.
// What nginx holds is tracked here (routes by host, their version), so a change pushes only what differs; anything
// unexpected (nginx restarted, a push lost) falls back to a full push, which is always correct.

export interface Proxy extends ProxyAdapter {
  /** Adopts or starts nginx and the service instances (before the first apply). */
  start(): Promise<void>;
  /** Restarts what died; true when nginx's HTTP instance was restarted (everything must be pushed again). */
  heal(): Promise<{ http: boolean; streams: string[] }>;
  /** HTTP-01 answers, served on port 80 by nginx itself. */
  setChallenge(token: string, answer: string): Promise<void>;
  removeChallenge(token: string): Promise<void>;
  /** A certificate file was replaced (renewal, issuance): push it and reload the TCP instances serving it. */
  certificateInstalled(name: string): Promise<void>;
  /** HTTP traffic counters per service, as nginx counted them (lua/postern.lua `count()`). */
  httpTraffic(): Promise<{ epoch: string; services: Map<number, HttpTraffic> }>;
  /** What nginx serves that differs from `routes`, `certNames`, `streams` and `challenges` (what the DB says). */
  drift(
    routes: ReadonlyMap<string, string>,
    certNames: readonly string[],
    streams: ReadonlyMap<string, WantedInstance>,
    challenges?: ReadonlyMap<string, string>,
  ): Promise<string[]>;
  /** The next apply pushes everything again (after drift). */
  forget(): void;
  stop(options: { keepServing: boolean }): Promise<void>;
}

const TOKEN_RE = /^[A-Za-z0-9_-]{1,256}$/;
/** Certificates per push: a full push at 10,000 domains is ~10-50 MB of PEMs. */
const CERTS_PER_PUSH = 500;
const PEMS_READ_AT_ONCE = 32;

export function createProxy(options: {
  prefixDir: string;
  certsDir: string;
  http: HttpInstance;
  streams: StreamInstances;
  cutter: ConnectionCutter;
  logger: DataPlaneLogger;
}): Proxy {
  const { http, streams, cutter, logger, certsDir } = options;
  /** Routes nginx holds, by host; null: unknown (a failed push): the next push is full. */
  let pushed: Map<string, string> | null = null;
  /** After adopting a running nginx: the MD5 of each host's routes it holds, until the first push compares them. */
  let adoptedDigests: Map<string, string> | null = null;
  let version: string | null = null;
  let sequence = 0;
  const bootId = Date.now().toString(36);
  /** Instances that could not start at the last sync (set aside): not drift. */
  let lastStreamFailures = new Map<string, string>();
  /** Certificates nginx holds: name → MD5 of the PEM as pushed. */
  const pushedCerts = new Map<string, string>();
  /**
   * HTTP-01 answers handed to nginx, by token; null: unknown (nginx adopted or restarted), the next sync sets them all.
   * Answers of orders that ended while unknown may linger in nginx; they answer nothing anyone asks for.
   */
  let pushedChallenges: Map<string, string> | null = null;
  const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

  /** What a running nginx (adopted, or one that restarted and loaded its snapshot) holds already. */
  async function learnWhatNginxHolds(): Promise<void> {
    const digest = await http.control.get<{
      version: string | null;
      hosts: Record<string, string>;
      certs: Record<string, string>;
    }>('/digest');
    version = digest.version;
    adoptedDigests = version === null ? null : new Map(Object.entries(digest.hosts));
    pushed = null;
    pushedChallenges = null;
    pushedCerts.clear();
    for (const [name, hash] of Object.entries(digest.certs)) pushedCerts.set(name, hash);
  }

  const nextVersion = (): string => `${bootId}.${++sequence}`;

  /**
   * The snapshot a fresh master loads before its first request. Written off the apply's path (an fsync under load
   * costs up to ~100 ms), latest wins: a master that dies in the moment before it lands is restarted by this
   * process, which pushes everything to it anyway.
   */
  let pendingSnapshot: string | null = null;
  let snapshotWriter: Promise<void> | null = null;
  function writeSnapshot(hosts: ReadonlyMap<string, string>, certNames: readonly string[], at: string): void {
    pendingSnapshot = JSON.stringify({
      version: at,
      hosts: Object.fromEntries(hosts),
      certs: [FALLBACK_CERT_NAME, ...certNames.filter(isHostname)],
    });
    snapshotWriter ??= (async () => {
      while (pendingSnapshot !== null) {
        const text = pendingSnapshot;
        pendingSnapshot = null;
        await writeFileAtomic(snapshotFile(options.prefixDir), text, 0o600).catch((err: unknown) =>
          logger.error({ err }, 'nginx: could not save the routes snapshot'),
        );
      }
      snapshotWriter = null;
    })();
  }

  async function pushRoutes(hosts: ReadonlyMap<string, string>): Promise<void> {
    const next = nextVersion();
    if (pushed === null && adoptedDigests !== null && version !== null) {
      // First push after adopting nginx: compare by digest once, then by text from here on.
      const digests = adoptedDigests;
      adoptedDigests = null;
      const set: Record<string, string> = {};
      for (const [host, json] of hosts) if (digests.get(host) !== md5(json)) set[host] = json;
      const del = [...digests.keys()].filter((host) => !hosts.has(host));
      try {
        if (Object.keys(set).length > 0 || del.length > 0)
          await http.control.post('/routes', { base: version, version: next, set, del });
        pushed = new Map(hosts);
        if (Object.keys(set).length > 0 || del.length > 0) version = next;
        return;
      } catch (err) {
        if (!(err instanceof ControlError) || err.status !== 409) throw err;
      }
    }
    if (pushed !== null && version !== null) {
      const set: Record<string, string> = {};
      const del: string[] = [];
      for (const [host, json] of hosts) if (pushed.get(host) !== json) set[host] = json;
      for (const host of pushed.keys()) if (!hosts.has(host)) del.push(host);
      if (Object.keys(set).length === 0 && del.length === 0) return;
      try {
        await http.control.post('/routes', { base: version, version: next, set, del });
        pushed = new Map(hosts);
        version = next;
        return;
      } catch (err) {
        if (!(err instanceof ControlError) || err.status !== 409) throw err;
        logger.warn({}, 'nginx: routes changed under us; pushing them all');
      }
    }
    pushed = null;
    await http.control.post('/routes', { base: null, version: next, set: Object.fromEntries(hosts) });
    pushed = new Map(hosts);
    version = next;
  }

  async function readPem(name: string): Promise<string | null> {
    return readFile(pemPath(certsDir, name), 'utf8').catch(() => null);
  }

  /** PEMs of `names`, read PEMS_READ_AT_ONCE at a time (one after the other cost 2.9 s at 10,000; together 1.1 s). */
  async function readPems(names: readonly string[]): Promise<(string | null)[]> {
    const pems: (string | null)[] = [];
    for (let i = 0; i < names.length; i += PEMS_READ_AT_ONCE) {
      pems.push(...(await Promise.all(names.slice(i, i + PEMS_READ_AT_ONCE).map(readPem))));
    }
    return pems;
  }

  async function publish(names: readonly string[]): Promise<void> {
    for (let i = 0; i < names.length; i += CERTS_PER_PUSH) {
      const chunk = names.slice(i, i + CERTS_PER_PUSH);
      const batch: Record<string, string> = {};
      const pems = await readPems(chunk);
      chunk.forEach((name, j) => {
        const pem = pems[j];
        if (pem != null && pushedCerts.get(name) !== md5(pem)) batch[name] = pem;
      });
      if (Object.keys(batch).length === 0) continue;
      await http.control.post('/certs', { set: batch });
      for (const [name, pem] of Object.entries(batch)) pushedCerts.set(name, md5(pem));
    }
  }

  return {
    async start() {
      await http.start();
      await streams.adopt();
      // A running nginx (adopted, or a fresh one that loaded its snapshot) holds most of what the first apply wants:
      // only what differs is pushed.
      await learnWhatNginxHolds();
      await publish([FALLBACK_CERT_NAME]);
    },

    async syncRoutes(hosts, certNames) {
      try {
        await pushRoutes(hosts);
      } catch (err) {
        pushed = null;
        throw err;
      }
      if (version !== null) writeSnapshot(hosts, certNames, version);
    },

    publishCertificates: (names) => publish(names),

    async unpublishCertificates(names) {
      if (names.length === 0) return;
      await http.control.post('/certs', { del: names });
      for (const name of names) pushedCerts.delete(name);
    },

    async syncStreams(wanted: ReadonlyMap<string, WantedInstance>) {
      lastStreamFailures = await streams.sync(wanted);
      return lastStreamFailures;
    },

    async cutStale(revisions) {
      const live = parseLive(await http.control.get('/live'));
      const stale = staleRequests(live, revisions);
      await cutter.cut(stale);
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
      await http.control.post('/acme', { set, ...(del.length > 0 ? { del } : {}) });
      pushedChallenges = new Map([...answers].filter(([token]) => TOKEN_RE.test(token)));
    },

    async certificateInstalled(name) {
      pushedCerts.delete(name);
      await publish([name]).catch((err: unknown) =>
        logger.error({ err, name }, 'nginx: could not hand over a renewed certificate'),
      );
      await streams.reloadServing(name);
    },

    async httpTraffic() {
      const answer = await http.control.get<{
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
    },

    async drift(routes, certNames, wantedStreams, challenges) {
      const differences: string[] = [];
      if (challenges !== undefined) {
        const held = pushedChallenges ?? new Map<string, string>();
        for (const [token, answer] of challenges)
          if (held.get(token) !== answer) differences.push(`nginx lacks the ACME answer of a pending order (${token})`);
      }
      const digest = await http.control.get<{ hosts: Record<string, string>; certs: Record<string, string> }>(
        '/digest',
      );
      const label = (host: string): string => (host === '' ? 'services without a domain' : host);
      for (const [host, json] of routes) {
        const held = digest.hosts[host];
        if (held === undefined) differences.push(`nginx lacks the routes of ${label(host)}`);
        else if (held !== md5(json))
          differences.push(`nginx serves other routes for ${label(host)} than the database says`);
      }
      for (const host of Object.keys(digest.hosts))
        if (!routes.has(host)) differences.push(`nginx routes ${label(host)}, which the database does not`);
      const names = [FALLBACK_CERT_NAME, ...certNames];
      const pems = await readPems(names);
      for (const [i, name] of names.entries()) {
        const pem = pems[i];
        if (pem == null) continue;
        const held = digest.certs[name];
        if (held === undefined) differences.push(`nginx lacks the certificate of ${name}`);
        else if (held !== md5(pem))
          differences.push(`nginx serves another certificate for ${name} than the one on disk`);
      }
      const running = streams.running();
      for (const key of wantedStreams.keys()) {
        if (!running.has(key) && !lastStreamFailures.has(key))
          differences.push(`the instance of ${key} is not running`);
      }
      for (const key of running.keys())
        if (!wantedStreams.has(key)) differences.push(`an instance of ${key} runs, which the database does not want`);
      return differences;
    },

    forget() {
      pushed = null;
      pushedChallenges = null;
      adoptedDigests = null;
      version = null;
      pushedCerts.clear();
    },

    async stop({ keepServing }) {
      await snapshotWriter;
      await streams.stop({ keepServing });
      await http.stop({ keepServing });
    },
  };
}
