import { mkdir, mkdtemp, readFile, readlink, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../atomic-write.js';
import { createSelfSignedPem, pemPath } from '../certs/self-signed.js';
import { createConnectionCutter } from '../connections.js';
import { RecordingCertificates, RecordingWireGuard } from '../offline.js';
import { planDataPlane } from '../plan.js';
import { createProxy, type Proxy } from '../proxy.js';
import { createReconciler, type Reconciler } from '../reconciler.js';
import type { DesiredHttpRoute, DesiredState } from '../types.js';
import { DEFAULT_DICT_LIMITS, type DictLimits } from './dict-sizes.js';
import { createHttpInstance, type HttpInstance } from './http-instance.js';
import { canRunNginx, loopbackRenderOptions, silentLogger } from './integration-support.js';
import { readLuaModule } from './lua-source.js';
import { FALLBACK_CERT_NAME, type NginxRenderOptions } from './options.js';
import { readChildPids, waitFor } from './process-info.js';
import { renderHttpInstance } from './render-main.js';
import { createStreamInstances } from './stream-instances.js';

// Real nginx with dictionaries small enough to fill in a few pushes (the sizes are injectable): a push that does not
// fit changes nothing and is reported on the services that caused it while everything else applies; the next change
// applies; gw_live and gw_stats never lose an entry silently; a dictionary that needs more room grows with a graceful
// reload that keeps open connections and the cut-off. (64 KiB is 14 pages of 4 KiB; 16 KiB is 2.)

const KiB = 1024;

/** A route whose JSON takes about `kib` KiB (its block list makes it big): one page per 4 KiB. */
const bigBlockList = (kib: number, seed: number): string[] =>
  Array.from({ length: Math.floor((kib * 1024) / 16) }, (_, i) => `10.${seed}.${Math.floor(i / 250)}.${i % 250}`);

interface Stream {
  status: number;
  ended: Promise<void>;
  chunks: () => number;
  close: () => void;
}

describe.skipIf(!canRunNginx)('nginx’s shared dictionaries (real nginx, small dictionaries)', () => {
  let dataDir = '';
  let backend: Server;
  let backendPort = 0;
  const trickles = new Set<ServerResponse>();

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'postern-dicts-it-'));
    backend = createHttpServer((req, res) => {
      if (req.url?.includes('trickle')) {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write('data: first\n\n');
        trickles.add(res);
        const timer = setInterval(() => res.write('data: more\n\n'), 100);
        res.on('close', () => {
          clearInterval(timer);
          trickles.delete(res);
        });
        return;
      }
      res.end('ok');
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    backendPort = (backend.address() as AddressInfo).port;
  });

  afterAll(async () => {
    for (const res of trickles) res.destroy();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
    await new Promise((resolve) => backend?.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
  });

  /** A gateway's nginx side in `name`: HTTP instance, proxy, and the real reconciler over them. */
  async function startGateway(name: string, limits: DictLimits) {
    const prefixDir = join(dataDir, name, 'nginx');
    const certsDir = join(dataDir, name, 'certs');
    await mkdir(certsDir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(pemPath(certsDir, FALLBACK_CERT_NAME), await createSelfSignedPem('gw.test'), 0o600);
    const options: NginxRenderOptions = await loopbackRenderOptions({
      prefixDir,
      certsDir,
      consoleUpstream: `http://127.0.0.1:${backendPort}`,
    });
    const http: HttpInstance = createHttpInstance({
      prefixDir,
      logger: silentLogger,
      dictLimits: limits,
      render: (dir, dicts) => renderHttpInstance(options, dir, readLuaModule(), dicts),
    });
    const proxy: Proxy = createProxy({
      prefixDir,
      certsDir,
      http,
      streams: createStreamInstances({ prefixDir, logger: silentLogger, listenAddress: '127.0.0.1' }),
      cutter: createConnectionCutter(silentLogger),
      logger: silentLogger,
    });
    await proxy.start();
    const stateFor = (routes: DesiredHttpRoute[]): DesiredState => ({
      gateway: { address: '10.44.0.1/16', listenPort: 51820, privateKey: `${'A'.repeat(43)}=`, publicHost: 'gw.test' },
      peers: [],
      http: routes,
      stream: [],
      domains: [...new Set(routes.map((r) => r.domain ?? ''))]
        .filter((d) => d !== '')
        .map((domain, i) => ({ domainId: i + 1, domain, ssl: 'self-signed' })),
    });
    let state = stateFor([]);
    const reconciler: Reconciler = createReconciler({
      loadDesiredState: () => Promise.resolve(state),
      plan: (desired) => planDataPlane(desired, options, new Map()),
      wireguard: new RecordingWireGuard(),
      proxy,
      certs: new RecordingCertificates(),
      logger: silentLogger,
    });
    const route = (serviceId: number, domain: string, over: Partial<DesiredHttpRoute> = {}): DesiredHttpRoute => ({
      serviceId,
      nodeId: 1,
      domain,
      pathLocation: '/',
      backendProto: 'http',
      backendHost: '127.0.0.1',
      backendPort,
      allowedIps: [],
      blockedIps: [],
      ...over,
    });
    /** Applies the state with these services (their domains made as needed). */
    const apply = async (routes: DesiredHttpRoute[]) => {
      state = stateFor(routes);
      return reconciler.apply();
    };
    /** What the database would say nginx must route for these services. */
    const hostsFor = (routes: DesiredHttpRoute[]) => planDataPlane(stateFor(routes), options, new Map()).routes.hosts;
    const status = async (domain: string, path = '/'): Promise<number> => (await get(domain, path)).status;
    const get = (domain: string, path: string) =>
      new Promise<Stream>((resolve, reject) => {
        let count = 0;
        const req = httpsRequest(
          {
            host: '127.0.0.1',
            port: options.httpsPort,
            path,
            agent: false,
            rejectUnauthorized: false,
            servername: domain,
            headers: { Host: domain },
          },
          (res) => {
            const ended = new Promise<void>((done) => res.on('close', () => done()));
            res.on('data', () => {
              count++;
            });
            if (res.statusCode !== 200 || !path.includes('trickle')) res.resume();
            resolve({ status: res.statusCode ?? 0, ended, chunks: () => count, close: () => req.destroy() });
          },
        );
        req.on('error', reject);
        req.end();
      });
    const space = () =>
      http.control.get<{
        dicts: Record<string, { capacity: number; free: number }>;
        dropped: number;
        live_refused: number;
      }>('/space');
    return { http, proxy, reconciler, route, apply, hostsFor, status, get, space, prefixDir, certsDir };
  }

  const tiny: DictLimits = {
    floors: {
      ...DEFAULT_DICT_LIMITS.floors,
      gw_routes: 64 * KiB,
      gw_certs: 32 * KiB,
      gw_live: 16 * KiB,
      gw_stats: 16 * KiB,
    },
    ceilings: {
      ...DEFAULT_DICT_LIMITS.ceilings,
      gw_routes: 64 * KiB,
      gw_certs: 32 * KiB,
      gw_live: 16 * KiB,
      gw_stats: 16 * KiB,
    },
  };

  it('a scoped push sets and deletes only its hosts; one nginx has no room for changes nothing', async () => {
    const gw = await startGateway('scoped', tiny);
    try {
      const { apply, route, proxy, status, hostsFor, http } = gw;
      expect(await apply([route(1, 'a.test'), route(2, 'b.test'), route(4, 'd.test')])).toMatchObject({ ok: true });
      const digest = () => http.control.get<{ version: string; hosts: Record<string, string> }>('/digest');
      const untouched = (await digest()).hosts['d.test'];
      // a.test changed, b.test's last service gone, c.test new; d.test is not in the scope and not pushed.
      const after = [route(1, 'a.test', { pathLocation: '/v2' }), route(3, 'c.test'), route(4, 'd.test')];
      const scoped = hostsFor(after);
      scoped.delete('d.test');
      expect(await proxy.patchRoutes(scoped, ['a.test', 'b.test', 'c.test'], ['c.test'])).toBe(true);
      expect(await status('a.test', '/v2/x')).toBe(200);
      expect(await status('a.test', '/')).toBe(404);
      expect(await status('b.test')).toBe(404);
      expect(await status('c.test')).toBe(200);
      expect((await digest()).hosts['d.test']).toBe(untouched);
      expect(await proxy.drift(hostsFor(after), [], new Map())).toEqual([]);
      // A host bigger than the whole dictionary: refused whole, reported as "apply everything instead".
      const before = await digest();
      const huge = hostsFor([route(9, 'huge.test', { blockedIps: bigBlockList(80, 9) })]);
      expect(await proxy.patchRoutes(huge, ['huge.test'], [])).toBe(false);
      expect(await digest()).toEqual(before);
    } finally {
      await gw.proxy.stop({ keepServing: false });
    }
  });

  describe('at their ceiling', () => {
    let gw: Awaited<ReturnType<typeof startGateway>>;
    beforeAll(async () => {
      gw = await startGateway('full', tiny);
    });
    afterAll(async () => {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
      await gw?.proxy.stop({ keepServing: false });
    });

    it('refuses a change that does not fit whole, before anything changes, and undoes one whose write fails', async () => {
      const { http, space } = gw;
      const digest = () => http.control.get<{ version: string; hosts: Record<string, string> }>('/digest');
      // Small hosts until no page is free.
      let version = (await digest()).version;
      for (let batch = 0; (await space()).dicts.gw_routes?.free !== 0; batch++) {
        const set = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`s${batch}-${i}.test`, `[${i}]`]));
        const next = `fill-${batch}`;
        await http.control.post('/routes', { base: version, version: next, set }).catch(() => undefined);
        version = (await digest()).version;
      }
      const before = await digest();
      const small = Object.keys(before.hosts).sort();
      const big = 'x'.repeat(5000);
      // Needs two pages; deleting two small hosts frees no page: refused before anything is written.
      const refused = await http.control
        .post('/routes', { base: version, version: 'too-big', set: { 'big.test': big }, del: small.slice(0, 2) })
        .catch((err: unknown) => err as { status: number; refusal: { intact: boolean; dict: string } });
      expect(refused).toMatchObject({ status: 507, refusal: { intact: true, dict: 'gw_routes' } });
      expect(await digest()).toEqual(before);
      // Small entries share pages free_space() cannot see, so they are tried: 64 new ones, five grown and three deleted
      // run out of slots midway, and every write before that is undone, every deleted and replaced entry restored.
      const grown = Object.fromEntries(small.slice(10, 15).map((host) => [host, `[${'z'.repeat(150)}]`]));
      const added = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`n${i}.test`, `[${i}]`]));
      const undone = await http.control
        .post('/routes', { base: version, version: 'undone', set: { ...added, ...grown }, del: small.slice(20, 23) })
        .catch((err: unknown) => err as { status: number; refusal: { intact: boolean } });
      expect(undone).toMatchObject({ status: 507, refusal: { intact: true } });
      expect(await digest()).toEqual(before);
      // (Refused by a failed write, not by the check: nginx says it undid it.)
      expect(await readFile(join(gw.prefixDir, 'logs', 'error.log'), 'utf8')).toMatch(
        /gw_routes had no room for a change \(no memory\); undone/,
      );
      // The control plane's own view is still right: its next push reads back what differs and applies.
      gw.proxy.forget();
      expect(await gw.apply([])).toMatchObject({ ok: true });
      expect(Object.keys((await digest()).hosts)).toEqual([]);
    });

    it('sets aside exactly the services that do not fit, serves the rest, and applies the next change', async () => {
      const { apply, route, status, proxy, hostsFor } = gw;
      const small = [route(1, 'a.test'), route(2, 'b.test')];
      expect(await apply(small)).toMatchObject({ ok: true });
      // Ten pages of the fourteen taken by ten one-page hosts.
      const fillers = Array.from({ length: 10 }, (_, i) =>
        route(100 + i, `f${i}.test`, { blockedIps: bigBlockList(3, i) }),
      );
      let result = await apply([...small, ...fillers]);
      expect(result).toMatchObject({ ok: true });
      expect(result.rejected.http.size).toBe(0);
      // One change: a host of five pages (two services), service 2 disabled, a small service added beside service 1.
      const huge = [
        route(50, 'huge.test', { blockedIps: bigBlockList(9, 50) }),
        route(51, 'huge.test', { pathLocation: '/b', blockedIps: bigBlockList(9, 51) }),
      ];
      const added = route(3, 'a.test', { pathLocation: '/small' });
      result = await apply([route(1, 'a.test'), added, ...fillers, ...huge]);
      expect(result.ok).toBe(true);
      expect([...result.rejected.http.keys()].sort()).toEqual([50, 51]);
      expect(result.rejected.http.get(50)).toMatch(
        /^nginx has no room for this service's routes: its routes dictionary is full at 0\.1 MiB and cannot grow further\./,
      );
      expect(await status('huge.test')).toBe(404);
      expect(await status('b.test')).toBe(404);
      expect(await status('a.test', '/small/x')).toBe(200);
      expect(await status('f3.test')).toBe(200);
      // nginx serves exactly the rest (no drift to repair); the drift check reports the set-aside services by these.
      expect(await proxy.drift(hostsFor([route(1, 'a.test'), added, ...fillers, ...huge]), [], new Map())).toEqual([]);
      expect(proxy.crowdedServices().sort()).toEqual([50, 51]);
      const routesDict = (await proxy.dictionaries()).find((d) => d.name === 'gw_routes');
      expect(routesDict).toMatchObject({ capacityBytes: 64 * KiB });
      expect(routesDict?.refusedWrites).toBeGreaterThan(0);
      // The next small change applies at once; the set-aside services are tried again and still do not fit.
      result = await apply([route(1, 'a.test'), added, route(4, 'b.test'), ...fillers, ...huge]);
      expect(result.ok).toBe(true);
      expect([...result.rejected.http.keys()].sort()).toEqual([50, 51]);
      expect(await status('b.test')).toBe(200);
      // Room made: served, nothing set aside.
      result = await apply([route(1, 'a.test'), route(4, 'b.test'), ...huge]);
      expect(result).toMatchObject({ ok: true });
      expect(result.rejected.http.size).toBe(0);
      expect(await status('huge.test', '/b/x')).toBe(200);
      expect(await status('f3.test')).toBe(404);
    });

    it('refuses a certificate that does not fit and sets aside its domain’s services, pushing every other', async () => {
      const { apply, route, certsDir, status } = gw;
      // Five pages are free after the fallback: eight domains of one page each.
      const names = Array.from({ length: 8 }, (_, i) => `c${i}.test`);
      for (const name of names) await writeFileAtomic(pemPath(certsDir, name), `${'c'.repeat(3000)}\n`, 0o600);
      const result = await apply(names.map((name, i) => route(200 + i, name)));
      expect(result.ok).toBe(true);
      const refused = [...result.rejected.http.keys()];
      expect(refused.length).toBeGreaterThanOrEqual(3);
      expect(refused.length).toBeLessThan(8);
      expect(result.rejected.http.get(refused[0] ?? 0)).toMatch(
        /^nginx has no room for the certificate of this domain/,
      );
      for (const [i, name] of names.entries())
        expect(await status(name), name).toBe(refused.includes(200 + i) ? 404 : 200);
    });

    it('refuses (503) and counts a request it cannot track rather than serving it untracked; the cut-off gets all others', async () => {
      const { apply, route, get, space, proxy } = gw;
      await apply([route(1, 'a.test')]);
      const before = (await space()).live_refused;
      const open: Stream[] = [];
      let refused: Stream | null = null;
      for (let i = 0; i < 200 && refused === null; i++) {
        const stream = await get('a.test', '/trickle');
        if (stream.status === 200) open.push(stream);
        else refused = stream;
      }
      expect(refused?.status).toBe(503);
      expect(open.length).toBeGreaterThan(20);
      expect((await space()).live_refused).toBe(before + 1);
      // Every stream that was served is known to the cut-off.
      expect(await proxy.cutStale(new Map())).toBe(open.length);
      await Promise.all(open.map((stream) => stream.ended));
    });

    it('drops and counts counter updates it has no room for, and never starts a counter again from zero', async () => {
      const { apply, route, status, space, proxy } = gw;
      await apply(Array.from({ length: 24 }, (_, i) => route(300 + i, 'a.test', { pathLocation: `/s${i}` })));
      // The earlier tests' counters go first (what the control plane does for services removed a while ago).
      const earlier = await gw.http.control.get<{ services: Record<string, unknown> }>('/stats');
      await gw.http.control.post('/stats', { del: Object.keys(earlier.services) });
      // nginx counts a request in its log phase, after the answer has left: read the counters until they move.
      const counted = async () => (await proxy.httpTraffic()).services.get(300)?.requests[1] ?? 0;
      await status('a.test', '/s0/x');
      expect(await waitFor(async () => (await counted()) > 0, 5000)).toBe(true);
      const first = await counted();
      for (let i = 1; i < 24; i++) await status('a.test', `/s${i}/x`);
      expect(await waitFor(async () => (await space()).dropped > 0, 5000)).toBe(true);
      for (let i = 0; i < 3; i++) await status('a.test', '/s0/x');
      expect(await waitFor(async () => (await counted()) >= first + 3, 5000)).toBe(true);
      expect(await counted()).toBe(first + 3);
    });
  });

  it('a control plane that adopts nginx sizes its certificates from what nginx holds: the first new domain does not reload', async () => {
    const limits: DictLimits = {
      floors: { ...tiny.floors, gw_certs: 64 * KiB },
      ceilings: { ...tiny.ceilings, gw_certs: 4096 * KiB },
    };
    const first = await startGateway('adopt-certs', limits);
    // Twelve domains of one ~1 KB self-signed PEM each: 2 KiB slots, 26 KiB of the 64 (less than half).
    const names = Array.from({ length: 12 }, (_, i) => `d${i}.test`);
    for (const name of names)
      await writeFileAtomic(pemPath(first.certsDir, name), await createSelfSignedPem(name), 0o600);
    const routes = names.map((name, i) => first.route(400 + i, name));
    expect(await first.apply(routes)).toMatchObject({ ok: true });
    await first.proxy.stop({ keepServing: true });
    // The restart: a new control plane adopts the running master and reads back what it holds.
    const gw = await startGateway('adopt-certs', limits);
    try {
      const { apply, route, status, http, prefixDir, certsDir } = gw;
      const generation = await readlink(join(prefixDir, 'current'));
      const workers = await readChildPids(http.pid() ?? 0);
      expect(await apply(routes)).toMatchObject({ ok: true });
      await writeFileAtomic(pemPath(certsDir, 'new.test'), await createSelfSignedPem('new.test'), 0o600);
      expect(await apply([...routes, route(450, 'new.test')])).toMatchObject({ ok: true });
      expect(await status('new.test')).toBe(200);
      expect(http.dictSizes().gw_certs).toBe(64 * KiB);
      expect(await readlink(join(prefixDir, 'current'))).toBe(generation);
      expect(await readChildPids(http.pid() ?? 0)).toEqual(workers);
    } finally {
      await gw.proxy.stop({ keepServing: false });
    }
  });

  it('grows a dictionary the data needs with a graceful reload: open streams and their cut-off survive', async () => {
    const gw = await startGateway('grow', {
      floors: { ...tiny.floors, gw_routes: 64 * KiB },
      ceilings: { ...tiny.ceilings, gw_routes: 4096 * KiB },
    });
    try {
      const { apply, route, get, status, proxy, http, prefixDir, hostsFor } = gw;
      await apply([route(1, 'a.test'), route(2, 'b.test')]);
      const kept = await get('a.test', '/trickle');
      const cut = await get('b.test', '/trickle');
      const generation = await readlink(join(prefixDir, 'current'));
      const workers = await readChildPids(http.pid() ?? 0);
      // 40 one-page hosts: 160 KiB, more than the 64 KiB it has.
      const many = Array.from({ length: 40 }, (_, i) =>
        route(10 + i, `m${i}.test`, { blockedIps: bigBlockList(3, i) }),
      );
      const result = await apply([route(1, 'a.test'), route(2, 'b.test'), ...many]);
      expect(result).toMatchObject({ ok: true });
      expect(result.rejected.http.size).toBe(0);
      expect(http.dictSizes().gw_routes).toBe(512 * KiB);
      expect(await readlink(join(prefixDir, 'current'))).not.toBe(generation);
      expect(await readChildPids(http.pid() ?? 0)).not.toEqual(workers);
      expect(await status('m39.test')).toBe(200);
      expect(await readFile(join(prefixDir, 'current', 'nginx.conf'), 'utf8')).toContain(
        'lua_shared_dict gw_routes 512k;',
      );
      // The streams opened before the reload flow on, and the cut-off still reaches them (gw_live was kept).
      const before = kept.chunks();
      expect(await waitFor(() => kept.chunks() > before + 2, 3000)).toBe(true);
      await apply([route(1, 'a.test'), ...many]);
      await cut.ended;
      const after = kept.chunks();
      expect(await waitFor(() => kept.chunks() > after + 2, 3000)).toBe(true);
      kept.close();
      expect(await proxy.drift(hostsFor([route(1, 'a.test'), ...many]), [], new Map())).toEqual([]);
    } finally {
      await gw.proxy.stop({ keepServing: false });
    }
  });
});
