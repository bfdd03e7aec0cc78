import { request } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DesiredDomain, DesiredHttpRoute } from '../types.js';
import { indexRoutes } from './overlay.js';
import { createOverlayRouter, type OverlayRouter } from './overlay-router.js';

const route = (over: Partial<DesiredHttpRoute>): DesiredHttpRoute => ({
  serviceId: 1, nodeId: 1, domain: null, pathLocation: '/', backendProto: 'http', backendHost: '10.44.0.2', backendPort: 8080,
  allowedIps: [], blockedIps: [], ...over,
});
const domain = (id: number, name: string): DesiredDomain => ({ domainId: id, domain: name, ssl: 'self-signed' });
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

interface Answer {
  status: number;
  service: string | undefined;
  upstream: string | undefined;
}

/** One auth_request subrequest as nginx sends it. */
function ask(socketPath: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: '/route', headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({
        status: res.statusCode ?? 0,
        service: res.headers['x-gw-svc'] as string | undefined,
        upstream: res.headers['x-gw-up'] as string | undefined,
      }));
    });
    req.on('error', reject);
    req.end();
  });
}

const forHost = (host: string, uri: string, addr = '192.0.2.10') =>
  ({ 'x-gw-host': host, 'x-gw-uri': uri, 'x-gw-addr': addr });

describe('overlay router', () => {
  let dir: string;
  let socketPath: string;
  let router: OverlayRouter;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-ovl-router-'));
    socketPath = join(dir, 'router.sock');
    router = createOverlayRouter({ socketPath, logger: silent });
    await router.listen();
  });

  afterEach(async () => {
    await router.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 200 with no upstream before it knows any routes, so nginx answers 404', async () => {
    expect(await ask(socketPath, forHost('a.example.com', '/'))).toEqual({ status: 200, service: undefined, upstream: undefined });
  });

  it('answers with the service and upstream of the newest routes, 403 for a denied client, none for no route', async () => {
    router.setRoutes(indexRoutes([
      route({ serviceId: 1 }),
      route({ serviceId: 2, domain: 'a.example.com', pathLocation: '/api', backendHost: '10.44.0.3', backendPort: 9000 }),
      route({ serviceId: 3, domain: 'a.example.com', pathLocation: '/admin', allowedIps: ['192.0.2.0/24'] }),
    ], [domain(1, 'a.example.com')]));

    expect(await ask(socketPath, forHost('a.example.com', '/api/items?x=1')))
      .toEqual({ status: 200, service: '2', upstream: 'http://10.44.0.3:9000' });
    expect(await ask(socketPath, forHost('a.example.com', '/api/..%2Fadmin', '203.0.113.5')))
      .toEqual({ status: 403, service: undefined, upstream: undefined });
    expect(await ask(socketPath, forHost('a.example.com', '/admin', '192.0.2.77')))
      .toEqual({ status: 200, service: '3', upstream: 'http://10.44.0.2:8080' });
    expect(await ask(socketPath, forHost('a.example.com', '/apix')))
      .toEqual({ status: 200, service: undefined, upstream: undefined });
    expect(await ask(socketPath, forHost('unknown.example.com', '/x', '192.0.2.10')))
      .toEqual({ status: 200, service: '1', upstream: 'http://10.44.0.2:8080' });

    // A newer desired state replaces the old one at once: a.example.com is no domain any more, so it gets the
    // default host's routes.
    router.setRoutes(indexRoutes([route({ serviceId: 1 })], []));
    expect(await ask(socketPath, forHost('a.example.com', '/api/items')))
      .toEqual({ status: 200, service: '1', upstream: 'http://10.44.0.2:8080' });
  });

  it('takes over a socket file a crashed process left behind', async () => {
    await router.close();
    await writeFile(socketPath, 'stale');
    router = createOverlayRouter({ socketPath, logger: silent });
    await router.listen();
    router.setRoutes(indexRoutes([route({ serviceId: 1 })], []));
    expect(await ask(socketPath, forHost('a.example.com', '/', '192.0.2.10')))
      .toEqual({ status: 200, service: '1', upstream: 'http://10.44.0.2:8080' });
  });

  it('refuses a socket path the kernel cannot hold, naming the setting to change', async () => {
    const long = createOverlayRouter({ socketPath: join(dir, 'x'.repeat(120), 'overlay.sock'), logger: silent });
    await expect(long.listen()).rejects.toThrow(/longer than 107 bytes: choose a shorter POSTERN_DATA_DIR/);
  });

  it('opens its socket to its own user only when no owner is given', async () => {
    expect((await stat(socketPath)).mode & 0o777).toBe(0o600);
  });

  it('removes its socket on close', async () => {
    expect(existsSync(socketPath)).toBe(true);
    await router.close();
    expect(existsSync(socketPath)).toBe(false);
  });
});
