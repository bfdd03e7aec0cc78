import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { FoundService, ListResponse } from '@postern/contract';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { createApiClient, insertNode } from './test-support.js';

// GET /api/services/find: "Find service" across every node, by name or by (a part of) the public address.

let t: TestApp;
let api: ReturnType<typeof createApiClient>;

beforeEach(async () => {
  t = await buildTestApp({ env: { POSTERN_PUBLIC_HOST: 'gw.example.test' } });
  api = createApiClient(t, await t.login());
});
afterEach(async () => {
  await t.cleanup();
});

type Found = ListResponse<FoundService>;
const summary = (body: Found) => body.data.map((found) => `${found.type}:${found.service.name}@${found.nodeName}`);

describe('finding a service without knowing its node', () => {
  test('matches name, domain, domain + path, URL, public port or host:port across nodes and types, by name', async () => {
    const home = await insertNode(t.deps, { name: 'home-lab' });
    const office = await insertNode(t.deps, { name: 'office' });
    await api('POST', `/api/services/${home.id}/http`, {
      name: 'Grafana',
      domain: 'metrics.example.com',
      pathLocation: '/grafana',
      backendPort: 3000,
    });
    await api('POST', `/api/services/${office.id}/http`, {
      name: 'wiki',
      domain: 'docs.example.com',
      pathLocation: '/',
      backendPort: 80,
    });
    await api('POST', `/api/services/${office.id}/http`, { name: 'bare', pathLocation: '/bare', backendPort: 80 });
    await api('POST', `/api/services/${office.id}/tcp`, { name: 'mqtt', port: 30083, backendPort: 1883 });
    await api('POST', `/api/services/${home.id}/tcp`, {
      name: 'grafana-agent',
      proto: 'udp',
      port: 30099,
      backendPort: 9999,
    });

    const find = async (q: string) => (await api<Found>('GET', `/api/services/find?q=${encodeURIComponent(q)}`)).body;
    expect(summary(await find('GRAF'))).toEqual(['http:Grafana@home-lab', 'tcp:grafana-agent@home-lab']);
    expect(summary(await find('docs.example.com'))).toEqual(['http:wiki@office']);
    expect(summary(await find('metrics.example.com/grafana'))).toEqual(['http:Grafana@home-lab']);
    expect(summary(await find('https://metrics.example.com/graf'))).toEqual(['http:Grafana@home-lab']);
    expect(summary(await find('30083'))).toEqual(['tcp:mqtt@office']);
    expect(summary(await find('gw.example.test:30099'))).toEqual(['tcp:grafana-agent@home-lab']);
    // A service without a domain is found by its address on the gateway's own host and no-domain port.
    expect(summary(await find('gw.example.test:8443/bare'))).toEqual(['http:bare@office']);

    const found = (await find('wiki')).data[0];
    expect(found?.service).toMatchObject({
      nodeId: office.id,
      publicAccess: 'https://docs.example.com/',
      enabled: true,
    });
  });

  test('pages the matches with the total, lists every service without q, and takes wildcards as text', async () => {
    const node = await insertNode(t.deps);
    for (const name of ['e', 'd', 'c', 'b', 'a'])
      await api('POST', `/api/services/${node.id}/http`, { name, pathLocation: `/${name}`, backendPort: 80 });
    await api('POST', `/api/services/${node.id}/tcp`, { name: 'c-tcp', backendPort: 1883 });
    const second = await api<Found>('GET', '/api/services/find?limit=2&page=2');
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ page: 2, limit: 2, total: 6 });
    expect(summary(second.body).map((s) => s.split('@')[0])).toEqual(['http:c', 'tcp:c-tcp']);
    expect((await api<Found>('GET', '/api/services/find?q=%25')).body.total).toBe(0);
    expect((await api<Found>('GET', `/api/services/find?q=${encodeURIComponent("' or 1=1 --")}`)).body.total).toBe(0);
    expect((await api('GET', '/api/services/find?limit=0')).status).toBe(422);
  });

  test('finds what services are now: after a rename, a move, a new port and a delete (the search index follows)', async () => {
    const node = await insertNode(t.deps, { name: 'home-lab' });
    const http = await api<{ id: number }>('POST', `/api/services/${node.id}/http`, {
      name: 'Grafana',
      domain: 'metrics.example.com',
      pathLocation: '/grafana',
      backendPort: 3000,
    });
    const tcp = await api<{ id: number }>('POST', `/api/services/${node.id}/tcp`, {
      name: 'mqtt',
      port: 30083,
      backendPort: 1883,
    });
    const find = async (q: string) =>
      summary((await api<Found>('GET', `/api/services/find?q=${encodeURIComponent(q)}`)).body);
    const overview = async (q: string) =>
      (
        await api<ListResponse<{ service: { name: string } }>>('GET', `/api/services?q=${encodeURIComponent(q)}`)
      ).body.data.map((row) => row.service.name);
    expect(await find('metrics.example')).toEqual(['http:Grafana@home-lab']);
    expect(await overview('grafana')).toEqual(['Grafana']);

    await api('PATCH', `/api/services/${node.id}/http/${http.body.id}`, {
      name: 'Dashboards',
      domain: 'dash.example.com',
      pathLocation: '/boards',
    });
    await api('PATCH', `/api/services/${node.id}/tcp/${tcp.body.id}`, { name: 'broker', port: 30084 });
    expect(await find('grafana')).toEqual([]);
    expect(await find('metrics.example')).toEqual([]);
    expect(await find('https://dash.example.com/boa')).toEqual(['http:Dashboards@home-lab']);
    expect(await overview('BOARDS')).toEqual(['Dashboards']);
    expect(await find('30083')).toEqual([]);
    expect(await find('gw.example.test:30084')).toEqual(['tcp:broker@home-lab']);
    expect(await overview('mqtt')).toEqual([]);
    expect(await overview('30084')).toEqual(['broker']);
    // Text that is query syntax to the index is text.
    expect(await find('"dash" OR mqtt')).toEqual([]);
    expect(await overview('dash*')).toEqual([]);

    await api('DELETE', `/api/services/${node.id}/http/${http.body.id}`);
    await api('DELETE', `/api/services/${node.id}/tcp/${tcp.body.id}`);
    expect(await find('dash.example')).toEqual([]);
    expect(await overview('broker')).toEqual([]);
  });

  test('is for the admin only', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/services/find?q=a' });
    expect(response.statusCode).toBe(401);
  });
});
