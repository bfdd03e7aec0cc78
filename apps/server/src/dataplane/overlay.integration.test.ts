import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSelfSignedCertificates } from './certs/self-signed.js';
import { FakeWireGuard, EMPTY_DESIRED_STATE } from './fakes.js';
import { createNginxDriver } from './nginx/driver.js';
import { overlayDir, overlayRouterSocket, type NginxRenderOptions } from './nginx/options.js';
import { indexRoutes } from './nginx/overlay.js';
import { createOverlayRouter, type OverlayRouter } from './nginx/overlay-router.js';
import { createOverlayStore } from './nginx/overlay-store.js';
import { readChildPids, waitFor } from './nginx/process-info.js';
import { overlayConfFor, renderNginxConfig } from './nginx/render.js';
import { renderStreamConfig } from './nginx/render-stream.js';
import { createReconciler, type Reconciler } from './reconciler.js';
import { lookupUser } from './system-user.js';
import type { DesiredDomain, DesiredHttpRoute, DesiredState, NginxAdapter } from './types.js';
import { canRunNginx, freeLoopbackPort, silentLogger } from './nginx/integration-support.js';

// Real nginx on loopback: an HTTP routing change is served through the overlay with no reload (the same workers
// answer), and the next reload folds it into a static generation.


interface Answer {
  status: number;
  body: string;
  certificateNames: string;
}

describe.skipIf(!canRunNginx)('routing overlay against real nginx', () => {
  let dataDir = '';
  let prefixDir = '';
  let nginx: NginxAdapter;
  let router: OverlayRouter;
  let reconciler: Reconciler;
  let backend: Server;
  let backendPort = 0;
  let httpsPort = 0;
  let state: DesiredState = EMPTY_DESIRED_STATE;

  const route = (serviceId: number, domain: string, over: Partial<DesiredHttpRoute> = {}): DesiredHttpRoute => ({
    serviceId, nodeId: 1, domain, pathLocation: '/', backendProto: 'http', backendHost: '127.0.0.1', backendPort,
    allowedIps: [], blockedIps: [], ...over,
  });
  const domain = (domainId: number, name: string): DesiredDomain => ({ domainId, domain: name, ssl: 'self-signed' });

  function get(host: string, path: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest({
        host: '127.0.0.1', port: httpsPort, path, servername: /^[\d.]+$/.test(host) ? '' : host, headers: { host }, rejectUnauthorized: false, agent: false, timeout: 2000,
      }, (res) => {
        const certificate = (res.socket as TLSSocket).getPeerCertificate();
        let body = '';
        res.on('data', (chunk: Buffer) => { body += chunk.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, certificateNames: certificate.subjectaltname ?? '' }));
      });
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.end();
    });
  }

  async function workers(): Promise<number[]> {
    const pid = Number((await readFile(join(prefixDir, 'nginx.pid'), 'utf8')).trim());
    return ((await readChildPids(pid)) ?? []).sort();
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'postern-overlay-it-'));
    await chmod(dataDir, 0o711);
    prefixDir = join(dataDir, 'nginx');
    const owner = (await lookupUser('www-data')) ?? undefined;
    backend = createHttpServer((req, res) => res.end(`backend ${String(req.headers.host)} ${req.url ?? ''}`));
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    backendPort = (backend.address() as AddressInfo).port;
    httpsPort = await freeLoopbackPort();
    const certsDir = join(dataDir, 'certs');
    const certs = createSelfSignedCertificates({ certsDir, fallbackHost: '127.0.0.1', logger: silentLogger, owner });
    await certs.ensureFallback();
    const options: NginxRenderOptions = {
      prefixDir, certsDir, acmeWebroot: join(dataDir, 'acme'), httpPort: await freeLoopbackPort(), httpsPort, listenAddress: '127.0.0.1',
      workerShutdownTimeoutSeconds: 1,
    };
    nginx = createNginxDriver({ prefixDir, logger: silentLogger });
    await nginx.start();
    const store = createOverlayStore(prefixDir);
    await store.reset();
    router = createOverlayRouter({ socketPath: overlayRouterSocket(options), ...(owner ? { owner } : {}), logger: silentLogger });
    await router.listen();
    reconciler = createReconciler({
      loadDesiredState: () => state,
      renderNginx: (s) => renderNginxConfig(s, options),
      wireguard: new FakeWireGuard(),
      nginx,
      certs,
      logger: silentLogger,
      overlay: {
        snapshot: (s) => ({ routes: indexRoutes(s.http, s.domains), reloadKey: renderStreamConfig(s.stream, options) }),
        configFor: (epoch) => overlayConfFor(options, epoch),
        store,
        publish: (routes) => router.setRoutes(routes),
      },
      // Long enough that no background reload runs during a test: each reload here is forced by a stream change.
      compactDelayMs: 600_000,
    });
    state = { ...EMPTY_DESIRED_STATE, domains: [domain(1, 'a.postern.test')], http: [route(1, 'a.postern.test')] };
    expect(await reconciler.runAtBoot()).toMatchObject({ ok: true });
  });

  afterAll(async () => {
    await reconciler.stop();
    await nginx.stop();
    await router.close();
    await new Promise((resolve) => backend.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves a new domain, an access change and a removal at once, on the same workers', async () => {
    expect((await get('a.postern.test', '/x')).body).toBe('backend a.postern.test /x');
    const before = await workers();
    expect(before.length).toBeGreaterThan(0);

    state = {
      ...state,
      domains: [domain(1, 'a.postern.test'), domain(2, 'new.postern.test')],
      http: [
        route(1, 'a.postern.test'),
        route(2, 'new.postern.test'),
        route(3, 'new.postern.test', { pathLocation: '/api', allowedIps: ['192.0.2.0/24'] }),
      ],
    };
    expect(await reconciler.apply()).toMatchObject({ ok: true });
    // No waiting: the change is live when apply() resolves.
    const fresh = await get('new.postern.test', '/page?q=1');
    expect(fresh).toMatchObject({ status: 200, body: 'backend new.postern.test /page?q=1' });
    expect(fresh.certificateNames).toContain('DNS:new.postern.test');
    expect((await get('new.postern.test', '/api/items')).status).toBe(403);
    expect((await get('new.postern.test', '/apix')).body).toBe('backend new.postern.test /apix');

    state = { ...state, http: [route(1, 'a.postern.test', { blockedIps: ['127.0.0.0/8'] }), ...state.http.slice(1)] };
    await reconciler.apply();
    expect((await get('a.postern.test', '/x')).status).toBe(403);

    state = { ...state, domains: state.domains.slice(1), http: state.http.slice(1) };
    await reconciler.apply();
    expect((await get('a.postern.test', '/x')).status).toBe(404);
    expect((await get('new.postern.test', '/')).status).toBe(200);

    expect(await workers()).toEqual(before);
    const log = await readFile(join(prefixDir, 'logs', 'access-http.log'), 'utf8');
    expect(log).toMatch(/"svc":"2","host":"new.postern.test"/);
  });

  it('folds the overlay into the next generation, which serves the same', async () => {
    const before = await workers();
    state = {
      ...state,
      stream: [{ serviceId: 9, nodeId: 1, proto: 'tcp', port: await freeLoopbackPort(), ssl: false, domain: null, backendHost: '127.0.0.1', backendPort, allowedIps: [], blockedIps: [] }],
    };
    expect(await reconciler.apply()).toMatchObject({ ok: true });
    expect(await waitFor(async () => !(await workers()).some((pid) => before.includes(pid)), 5000)).toBe(true);
    const epochs = (await readdir(join(prefixDir, 'overlay'))).map(Number).sort((a, b) => a - b);
    const newest = epochs.at(-1) ?? 0;
    expect(await readdir(overlayDir(prefixDir, newest))).toEqual([]);
    expect((await get('new.postern.test', '/')).status).toBe(200);
    expect((await get('new.postern.test', '/api')).status).toBe(403);
    // The deleted domain's certificate went with the reload: its name no longer completes a handshake.
    await expect(get('a.postern.test', '/x')).rejects.toThrow(/alert/);
    expect((await get('127.0.0.1', '/')).certificateNames).toContain('127.0.0.1');
  });
});
