import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAccessCookie, type CookiePayload } from '../../modules/access/cookie.js';
import { writeFileAtomic } from '../atomic-write.js';
import { createSelfSignedPem, pemPath } from '../certs/self-signed.js';
import { createConnectionCutter } from '../connections.js';
import { createProxy, type Proxy } from '../proxy.js';
import type { DesiredAccess, DesiredDomain, DesiredHttpRoute } from '../types.js';
import { buildAccessTable } from './access-table.js';
import { createHttpInstance } from './http-instance.js';
import { canRunNginx, loopbackRenderOptions, silentLogger } from './integration-support.js';
import { readLuaModule } from './lua-source.js';
import { waitUntil } from '../../lib/wait.js';
import { FALLBACK_CERT_NAME, HTTP_ACCESS_LOG, accessSnapshotFile, type NginxRenderOptions } from './options.js';
import { renderHttpInstance } from './render-main.js';
import { buildRouteTable } from './routes.js';
import { createStreamInstances } from './stream-instances.js';

// Real nginx with both Lua modules (docs/ACCESS.md): a protected route checked inside nginx against cookies the control
// plane's own code signs; identity headers and cookies a client sends never reach a backend; revocations, bypasses and
// a share link's path; fail closed when a route names a policy nginx does not hold, also in a fresh master.

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

function request(port: number, path: string, host: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        agent: false,
        timeout: 3000,
        rejectUnauthorized: false,
        servername: host,
        headers: { Host: host, ...headers },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

describe.skipIf(!canRunNginx)('access checks inside nginx (real nginx + Lua)', () => {
  let dataDir = '';
  let prefixDir = '';
  let certsDir = '';
  let options: NginxRenderOptions;
  let backend: Server;
  let backendPort = 0;
  let proxy: Proxy;
  const key = randomBytes(32);
  const domains: DesiredDomain[] = [
    { domainId: 1, domain: 'app.test', ssl: 'self-signed' },
    { domainId: 2, domain: 'other.test', ssl: 'self-signed' },
  ];
  const now = () => Math.floor(Date.now() / 1000);

  const route = (over: Partial<DesiredHttpRoute>): DesiredHttpRoute => ({
    serviceId: 1,
    nodeId: 1,
    domain: 'app.test',
    pathLocation: '/',
    backendProto: 'http',
    backendHost: '127.0.0.1',
    backendPort,
    allowedIps: [],
    blockedIps: [],
    ...over,
  });
  let access: DesiredAccess;
  const routes = (): DesiredHttpRoute[] => [
    route({ serviceId: 1, pathLocation: '/', accessPolicyId: 7 }),
    route({ serviceId: 2, pathLocation: '/open' }),
    route({ serviceId: 3, domain: 'other.test', accessPolicyId: 7 }),
  ];

  /** What the reconciler does: access first, then routes, then stale policies out. */
  async function apply(http: DesiredHttpRoute[] = routes(), state: DesiredAccess = access): Promise<void> {
    const table = buildAccessTable(state);
    await proxy.syncAccess(table);
    await proxy.syncRoutes(
      buildRouteTable(http, domains, { reservedHosts: [options.consoleHost], access: table }).hosts,
      domains.map((d) => d.domain),
    );
    await proxy.pruneAccess(table);
  }

  const cookie = (over: Partial<CookiePayload> = {}, host = 'app.test', kid = '1'): string =>
    `__Host-postern-7=${signAccessCookie(key, kid, host, { s: 'session-aaaaaaaaaaaaaaaa', p: 7, e: 1, x: now() + 600, u: 'ann', m: 'ann@corp.test', g: ['ops', 'dev'], ...over })}`;
  const get = (path: string, headers: Record<string, string> = {}, host = 'app.test') =>
    request(options.httpsPort, path, host, { accept: 'text/html', ...headers });
  const seen = (answer: Answer) => JSON.parse(answer.body) as { url: string; headers: Record<string, string> };

  const makeProxy = (): Proxy =>
    createProxy({
      prefixDir,
      certsDir,
      http: createHttpInstance({
        prefixDir,
        logger: silentLogger,
        render: (dir) => renderHttpInstance(options, dir, readLuaModule()),
      }),
      streams: createStreamInstances({ prefixDir, logger: silentLogger, listenAddress: '127.0.0.1' }),
      cutter: createConnectionCutter(silentLogger),
      logger: silentLogger,
    });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'postern-access-it-'));
    prefixDir = join(dataDir, 'nginx');
    certsDir = join(dataDir, 'certs');
    await mkdir(certsDir, { recursive: true, mode: 0o700 });
    for (const name of [FALLBACK_CERT_NAME, 'app.test', 'other.test'])
      await writeFileAtomic(
        pemPath(certsDir, name),
        await createSelfSignedPem(name === FALLBACK_CERT_NAME ? 'gw.test' : name),
        0o600,
      );
    // The backend (and the "control plane" the sign-in exchange goes to) says what it received.
    backend = createHttpServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url, headers: req.headers }));
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    backendPort = (backend.address() as AddressInfo).port;
    options = await loopbackRenderOptions({ prefixDir, certsDir, consoleUpstream: `http://127.0.0.1:${backendPort}` });
    proxy = makeProxy();
    await proxy.start();
    await proxy.publishCertificates(['app.test', 'other.test']);
    access = {
      key: { id: '1', secret: key.toString('base64') },
      policies: [{ id: 7, epoch: 1, bypassPaths: ['/hooks'], bypassNetworks: [] }],
      revoked: new Map(),
    };
    await apply();
  });

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
    await proxy?.stop({ keepServing: false });
    await new Promise((resolve) => {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
      if (backend) backend.close(resolve);
      else resolve(undefined);
    });
    await rm(dataDir, { recursive: true, force: true });
  });

  it('sends a page load without a session to sign in, and refuses API calls and WebSocket upgrades', async () => {
    const page = await get('/dashboard?x=1&y=%2F');
    expect(page.status).toBe(302);
    expect(page.headers.location).toBe('/_postern/access/sign-in?s=1&rd=%2Fdashboard%3Fx%3D1%26y%3D%252F');
    const api = await get('/api/data', { accept: 'application/json' });
    expect(api.status).toBe(401);
    expect(JSON.parse(api.body)).toMatchObject({ message: 'Sign-in required' });
    const upgrade = await get('/socket', {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    });
    expect(upgrade.status).toBe(401);
    const stream = await get('/events', { accept: 'text/event-stream' });
    expect(stream.status).toBe(401);
  });

  it('lets a valid session in, with identity headers nginx set and none the client sent, and no session cookie', async () => {
    const answer = await get('/dashboard', {
      cookie: `theme=dark; ${cookie()}; other=1`,
      'x-postern-user': 'admin',
      'X-POSTERN-EMAIL': 'boss@corp.test',
      'x-postern-groups': 'admins',
    });
    expect(answer.status).toBe(200);
    const { headers } = seen(answer);
    expect(headers['x-postern-user']).toBe('ann');
    expect(headers['x-postern-email']).toBe('ann@corp.test');
    expect(headers['x-postern-groups']).toBe('ops,dev');
    expect(headers.cookie).toBe('theme=dark; other=1');
  });

  it('refuses a cookie made for another host, tampered, of another epoch or policy, expired, or under another key', async () => {
    const refused = [
      cookie({}, 'other.test'),
      cookie({ e: 2 }),
      cookie({ p: 8 }),
      cookie({ x: now() - 1 }),
      cookie({}, 'app.test', '2'),
      cookie().replace(/\.([A-Za-z0-9_-]+)$/, '.AAAA$1'),
      `__Host-postern-7=${signAccessCookie(randomBytes(32), '1', 'app.test', { s: 'session-aaaaaaaaaaaaaaaa', p: 7, e: 1, x: now() + 600 })}`,
    ];
    for (const value of refused) expect((await get('/', { cookie: value, accept: '*/*' })).status, value).toBe(401);
    // A valid value under a longer name is not the cookie; a planted look-alike before the real one does not hide it.
    expect((await get('/', { cookie: `x${cookie()}`, accept: '*/*' })).status).toBe(401);
    expect((await get('/', { cookie: `__Host-postern-7=planted; ${cookie()}` })).status).toBe(200);
    // The cookie of other.test works there, and only there.
    expect((await get('/', { cookie: cookie({}, 'other.test') }, 'other.test')).status).toBe(200);
  });

  it('strips identity headers and visitor cookies on public services too', async () => {
    const answer = await get('/open/x', {
      cookie: `a=1; ${cookie()}`,
      'x-postern-user': 'admin',
      'X-Postern-Groups': 'root',
    });
    expect(answer.status).toBe(200);
    const { headers } = seen(answer);
    expect(headers['x-postern-user']).toBeUndefined();
    expect(headers['x-postern-groups']).toBeUndefined();
    expect(headers.cookie).toBe('a=1');
  });

  it('passes bypass paths (never a path that only starts alike) and keeps a share link to its path', async () => {
    expect((await get('/hooks/github', { accept: '*/*' })).status).toBe(200);
    expect((await get('/hooks', { accept: '*/*' })).status).toBe(200);
    expect((await get('/hooksx', { accept: '*/*' })).status).toBe(401);
    expect((await get('/hooks/../admin', { accept: '*/*' })).status).toBe(401);
    // Matched on the canonical path form routing uses: encoded, or only alike in case (ambiguous), no bypass.
    expect((await get('/hook%73/x', { accept: '*/*' })).status).toBe(200);
    expect((await get('/HOOKS/x', { accept: '*/*' })).status).toBe(401);
    expect((await get('/hooks/%2e%2e/admin', { accept: '*/*' })).status).toBe(401);
    const share = cookie({ a: '/reports', u: 'share:Bob' });
    expect((await get('/reports/q3', { cookie: share })).status).toBe(200);
    expect((await get('/reportsx', { cookie: share, accept: '*/*' })).status).toBe(401);
    expect((await get('/admin', { cookie: share, accept: '*/*' })).status).toBe(401);
  });

  it('refuses a revoked session at the next request, and a network bypass lets a LAN in', async () => {
    const value = cookie({ s: 'session-to-revoke-bbbbbbb' });
    expect((await get('/', { cookie: value })).status).toBe(200);
    access = { ...access, revoked: new Map([['session-to-revoke-bbbbbbb', now() + 600]]) };
    await apply();
    expect((await get('/', { cookie: value, accept: '*/*' })).status).toBe(401);
    access = { ...access, policies: [{ id: 7, epoch: 1, bypassPaths: ['/hooks'], bypassNetworks: ['127.0.0.0/8'] }] };
    await apply();
    expect((await get('/', { accept: '*/*' })).status).toBe(200);
    access = { ...access, policies: [{ id: 7, epoch: 1, bypassPaths: ['/hooks'], bypassNetworks: [] }] };
    await apply();
    expect((await get('/', { accept: '*/*' })).status).toBe(401);
  });

  it('proxies the sign-in exchange to the control plane and never logs its query', async () => {
    const answer = await get('/_postern/access/share?token=secret-share-token', {
      'x-forwarded-for': '6.6.6.6',
      'x-postern-user': 'admin',
    });
    expect(answer.status).toBe(200);
    const { url, headers } = seen(answer);
    expect(url).toBe('/_postern/access/share?token=secret-share-token');
    expect(headers.host).toBe('app.test');
    expect(headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(headers['x-postern-user']).toBeUndefined();
    // nginx writes the line after the answer has left: wait for it.
    const logFile = join(prefixDir, 'logs', HTTP_ACCESS_LOG);
    const logged = await waitUntil(
      async () => (await readFile(logFile, 'utf8')).includes('"uri":"/_postern/access/share"'),
      5000,
    );
    expect(logged).toBe(true);
    expect(await readFile(logFile, 'utf8')).not.toContain('secret-share-token');
  });

  it('fails closed: a route naming a policy nginx lacks is refused, also by a fresh master', async () => {
    // Routes pushed without their policy (what a half-done push would leave): 503, never the backend.
    const table = buildAccessTable(access);
    const orphan = buildRouteTable([route({ serviceId: 1, accessPolicyId: 7 })], domains, {
      reservedHosts: [options.consoleHost],
      access: { ...table, refOf: new Map([[7, '7.not-pushed']]) },
    });
    await proxy.syncRoutes(orphan.hosts, ['app.test']);
    expect((await get('/', { cookie: cookie() })).status).toBe(503);
    await apply();
    expect((await get('/', { cookie: cookie() })).status).toBe(200);

    // nginx dies and a fresh master starts from the snapshots, before any push: protected, not open.
    await proxy.stop({ keepServing: false });
    proxy = makeProxy();
    await proxy.start();
    expect((await get('/', { accept: '*/*' })).status).toBe(401);
    expect((await get('/', { cookie: cookie() })).status).toBe(200);
    // Without the access snapshot the routes still name their policy: refused, never served unprotected.
    await proxy.stop({ keepServing: false });
    await rm(accessSnapshotFile(prefixDir));
    proxy = makeProxy();
    await proxy.start();
    expect((await get('/', { cookie: cookie() })).status).toBe(503);
    expect((await get('/open/x', { accept: '*/*' })).status).toBe(200);
  });
});
