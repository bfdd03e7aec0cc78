import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { HttpService, TcpService } from '@postern/contract';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { createApiClient, insertNode } from './test-support.js';

// Enable/disable/delete and how data-plane outcomes reach the caller and the service.

let t: TestApp;
let api: ReturnType<typeof createApiClient>;

beforeEach(async () => {
  t = await buildTestApp();
  api = createApiClient(t, await t.login());
});
afterEach(async () => {
  await t.cleanup();
});

const web = { name: 'web', domain: 'app.example.com', pathLocation: '/' };
/** HTTP routes of the nodes under test: without the console service the local node publishes from first boot. */
const nodeHttpRoutes = () => t.fakeDataPlane.lastState?.http;

describe('enable and disable access', () => {
  test('disabling removes the route from the data plane and enabling brings it back', async () => {
    const node = await insertNode(t.deps);
    const { body: svc } = await api<HttpService>('POST', `/api/services/${node.id}/http`, web);
    const servedIds = () => nodeHttpRoutes()?.map((r) => r.serviceId);
    expect(servedIds()).toEqual([svc.id]);

    const applies = t.fakeDataPlane.applyCount;
    const disabled = await api<HttpService>('PATCH', `/api/services/${node.id}/http/${svc.id}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.body.enabled).toBe(false);
    expect(t.fakeDataPlane.applyCount).toBe(applies + 1);
    expect(servedIds()).toEqual([]);

    const enabled = await api<HttpService>('PATCH', `/api/services/${node.id}/http/${svc.id}/enable`);
    expect(enabled.body.enabled).toBe(true);
    expect(servedIds()).toEqual([svc.id]);
  });

  test('works for TCP services too and 404s for another node’s service', async () => {
    const node = await insertNode(t.deps);
    const other = await insertNode(t.deps);
    const { body: svc } = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, {
      name: 'db',
      backendPort: 5432,
    });
    const disabled = await api<TcpService>('PATCH', `/api/services/${node.id}/tcp/${svc.id}/disable`);
    expect(disabled.body.enabled).toBe(false);
    expect(t.fakeDataPlane.lastState?.stream).toEqual([]);
    expect((await api('PATCH', `/api/services/${other.id}/tcp/${svc.id}/enable`)).status).toBe(404);
    expect((await api('PATCH', `/api/services/${node.id}/http/${svc.id}/enable`)).status).toBe(404);
  });

  test('a disabled node serves none of its services', async () => {
    const node = await insertNode(t.deps, { enabled: false });
    await api('POST', `/api/services/${node.id}/http`, web);
    expect(nodeHttpRoutes()).toEqual([]);
  });
});

describe('data plane rejections', () => {
  test('set the row aside: 400 with the reason, visible as applyError until it is served, and nobody else is affected', async () => {
    const node = await insertNode(t.deps);
    const { body: other } = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, {
      name: 'other',
      backendPort: 22,
      port: 30001,
    });
    t.fakeDataPlane.proxy.streamFailures.set('tcp-30000', 'port 30000/tcp is in use by another program on the gateway');
    const rejected = await api('POST', `/api/services/${node.id}/tcp`, { name: 'db', backendPort: 5432, port: 30000 });
    expect(rejected.status).toBe(400);
    expect(rejected.body).toEqual({
      message: 'port 30000/tcp is in use by another program on the gateway',
      code: 'dataplane_rejected',
    });
    const list = await api<{ data: TcpService[] }>('GET', `/api/services/${node.id}/tcp`);
    expect(list.body.data).toEqual([
      expect.objectContaining({ name: 'other', applyError: null }),
      expect.objectContaining({ name: 'db', applyError: 'port 30000/tcp is in use by another program on the gateway' }),
    ]);
    // A later, unrelated change succeeds, and the set-aside row stays out of what is served.
    expect((await api('PATCH', `/api/services/${node.id}/tcp/${other.id}`, { backendPort: 2222 })).status).toBe(200);
    expect([...t.fakeDataPlane.proxy.streams.keys()]).toEqual(['tcp-30001']);
    // Once the port is free, the next apply serves it and clears the reason.
    t.fakeDataPlane.proxy.streamFailures.clear();
    expect((await api('PATCH', `/api/services/${node.id}/tcp/${other.id}`, { backendPort: 22 })).status).toBe(200);
    const after = await api<{ data: TcpService[] }>('GET', `/api/services/${node.id}/tcp`);
    expect(after.body.data.map((s) => s.applyError)).toEqual([null, null]);
  });

  test('a change nginx has no room for sets aside the services it adds: 400, applyError, audited, in the status at once; other changes apply', async () => {
    const node = await insertNode(t.deps);
    const { body: small } = await api<HttpService>('POST', `/api/services/${node.id}/http`, web);
    t.fakeDataPlane.proxy.noRoomFor.add('big.example.com');
    const refused = await api('POST', `/api/services/${node.id}/http`, { name: 'big', domain: 'big.example.com' });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      message: "nginx has no room for this service's routes: its routes dictionary is full.",
      code: 'dataplane_rejected',
    });
    const listed = (await api<{ data: HttpService[] }>('GET', `/api/services/${node.id}/http`)).body.data;
    const big = listed.find((s) => s.name === 'big');
    expect(big?.applyError).toMatch(/^nginx has no room for this service's routes/);
    expect(listed.find((s) => s.id === small.id)?.applyError).toBeNull();
    const audit = await api<{ data: { action: string; target: { id: number } | null; detail: string | null }[] }>(
      'GET',
      `/api/audit?node=${node.id}&action=dataplane.rejected`,
    );
    expect(audit.body.data).toEqual([
      expect.objectContaining({ target: expect.objectContaining({ id: big?.id }), detail: big?.applyError }),
    ]);
    const status = await api<{ drift: { differences: string[] } | null }>('GET', '/api/system/status');
    expect(status.body.drift?.differences).toEqual([`nginx has no room for service ${big?.id}: they are not served`]);
    // Nothing of it reached nginx; the next change applies at once.
    expect([...t.fakeDataPlane.proxy.routes.keys()]).not.toContain('big.example.com');
    const moved = await api('PATCH', `/api/services/${node.id}/http/${small.id}`, { pathLocation: '/app' });
    expect(moved.status).toBe(200);
    expect(t.fakeDataPlane.proxy.routes.get('app.example.com')).toContain('"p":"/app"');
    // Room again: served, the reason cleared.
    t.fakeDataPlane.proxy.noRoomFor.clear();
    expect((await api('PATCH', `/api/services/${node.id}/http/${small.id}`, { pathLocation: '/' })).status).toBe(200);
    expect(t.fakeDataPlane.proxy.routes.has('big.example.com')).toBe(true);
    const after = (await api<{ data: HttpService[] }>('GET', `/api/services/${node.id}/http`)).body.data;
    expect(after.map((s) => s.applyError)).toEqual([null, null]);
  });

  test('a data plane that is down as a whole answers 503, and the change is kept', async () => {
    const node = await insertNode(t.deps);
    t.fakeDataPlane.failNextApply('nginx: the master is not running');
    const response = await api('POST', `/api/services/${node.id}/http`, web);
    expect(response.status).toBe(503);
    expect(response.body).toEqual({
      message: 'Saved, but the gateway could not apply it yet: nginx: the master is not running',
      code: 'dataplane_unavailable',
      messageCode: 'saved_not_applied',
      params: { reason: 'nginx: the master is not running' },
    });
    expect((await api<{ data: HttpService[] }>('GET', `/api/services/${node.id}/http`)).body.data).toHaveLength(1);
  });
});

describe('deleting a service', () => {
  test('removes it from the API and the data plane', async () => {
    const node = await insertNode(t.deps);
    const { body: svc } = await api<HttpService>('POST', `/api/services/${node.id}/http`, web);
    expect((await api('DELETE', `/api/services/${node.id}/http/${svc.id}`)).status).toBe(204);
    expect((await api('GET', `/api/services/${node.id}/http/${svc.id}`)).status).toBe(404);
    expect(nodeHttpRoutes()).toEqual([]);
    expect((await api('DELETE', `/api/services/${node.id}/http/${svc.id}`)).status).toBe(404);
  });

  test('answers 401 without a token and 404 for an unknown node', async () => {
    const response = await t.app.inject({ method: 'DELETE', url: '/api/services/1/http/1' });
    expect(response.statusCode).toBe(401);
    expect((await api('DELETE', '/api/services/9999/http/1')).status).toBe(404);
    expect((await api('GET', '/api/services/9999/tcp')).status).toBe(404);
  });
});
