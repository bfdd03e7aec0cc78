import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { HttpService, TcpService } from '@postern/contract';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { CONSOLE_SERVICE_ID, createApiClient, insertNode } from './test-support.js';

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
const nodeHttpRoutes = () => t.fakeDataPlane.lastState?.http.filter((r) => r.serviceId !== CONSOLE_SERVICE_ID);

describe('enable and disable access', () => {
  test('disabling removes the route from the data plane and enabling brings it back', async () => {
    const node = insertNode(t.deps);
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
    const node = insertNode(t.deps);
    const other = insertNode(t.deps);
    const { body: svc } = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, { name: 'db', backendPort: 5432 });
    const disabled = await api<TcpService>('PATCH', `/api/services/${node.id}/tcp/${svc.id}/disable`);
    expect(disabled.body.enabled).toBe(false);
    expect(t.fakeDataPlane.lastState?.stream).toEqual([]);
    expect((await api('PATCH', `/api/services/${other.id}/tcp/${svc.id}/enable`)).status).toBe(404);
    expect((await api('PATCH', `/api/services/${node.id}/http/${svc.id}/enable`)).status).toBe(404);
  });

  test('a disabled node serves none of its services', async () => {
    const node = insertNode(t.deps, { enabled: false });
    await api('POST', `/api/services/${node.id}/http`, web);
    expect(nodeHttpRoutes()).toEqual([]);
  });
});

describe('data plane rejections', () => {
  test('surface as 400 with the reason and stay visible as applyError until an apply succeeds', async () => {
    const node = insertNode(t.deps);
    const { body: svc } = await api<HttpService>('POST', `/api/services/${node.id}/http`, web);
    t.fakeDataPlane.failNextApply('nginx: [emerg] invalid parameter');
    const rejected = await api('PATCH', `/api/services/${node.id}/http/${svc.id}`, { backendPort: 8081 });
    expect(rejected.status).toBe(400);
    expect(rejected.body).toEqual({ message: 'nginx: [emerg] invalid parameter' });

    const stored = await api<HttpService>('GET', `/api/services/${node.id}/http/${svc.id}`);
    expect(stored.body).toMatchObject({ backendPort: 8081, applyError: 'nginx: [emerg] invalid parameter' });

    await api('PATCH', `/api/services/${node.id}/http/${svc.id}`, { backendPort: 8082 });
    expect((await api<HttpService>('GET', `/api/services/${node.id}/http/${svc.id}`)).body.applyError).toBeNull();
  });

  test('a rejected create keeps the service and reports the reason', async () => {
    const node = insertNode(t.deps);
    t.fakeDataPlane.failNextApply('port 30000 is busy');
    const rejected = await api('POST', `/api/services/${node.id}/tcp`, { name: 'db', backendPort: 5432 });
    expect(rejected.status).toBe(400);
    const list = await api<{ data: TcpService[] }>('GET', `/api/services/${node.id}/tcp`);
    expect(list.body.data).toEqual([expect.objectContaining({ name: 'db', applyError: 'port 30000 is busy' })]);
  });
});

describe('deleting a service', () => {
  test('removes it from the API and the data plane', async () => {
    const node = insertNode(t.deps);
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
