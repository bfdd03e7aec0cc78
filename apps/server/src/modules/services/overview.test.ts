import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { ListResponse, ServiceHealth, ServiceOverview, ServiceOverviewQuery } from '@postern/contract';
import { ServiceOverviewQuerySchema } from '@postern/contract';
import { httpServices } from '../../db/schema.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { listServiceOverview, type HealthSource } from './overview.js';
import { createApiClient, insertNode } from './test-support.js';

// GET /api/services: every node's services in one list, filtered and sorted in SQL.

let t: TestApp;
let api: ReturnType<typeof createApiClient>;

beforeEach(async () => {
  t = await buildTestApp({ env: { POSTERN_PUBLIC_HOST: 'gw.example.test' } });
  api = createApiClient(t, await t.login());
});
afterEach(async () => {
  await t.cleanup();
});

type Page = ListResponse<ServiceOverview>;
const names = (body: Page) => body.data.map((row) => `${row.service.name}@${row.node.name}`);
const online = {
  status: 'online' as const,
  clientIp: '198.51.100.7',
  latestHandshakeTimestamp: new Date().toISOString(),
  transferRx: 0,
  transferTx: 0,
};

/** Two nodes (one online), HTTP on two domains, TCP and UDP; one service switched off. */
async function seed() {
  const home = await insertNode(t.deps, { name: 'home-lab' });
  const office = await insertNode(t.deps, { name: 'office' });
  t.fakeDataPlane.status.setStatus(office.publicKey, online);
  const post = async (nodeId: number, type: 'http' | 'tcp', body: object) =>
    (await api<{ id: number }>('POST', `/api/services/${nodeId}/${type}`, body)).body.id;
  await api('POST', '/api/domains', { domain: 'shop.example.com', ssl: 'certbot' });
  const grafana = await post(home.id, 'http', {
    name: 'Grafana',
    domain: 'metrics.example.com',
    pathLocation: '/grafana',
    backendPort: 3000,
  });
  const wiki = await post(office.id, 'http', { name: 'wiki', domain: 'shop.example.com', backendPort: 80 });
  const mqtt = await post(office.id, 'tcp', { name: 'mqtt', port: 30083, backendPort: 1883 });
  const dns = await post(home.id, 'tcp', { name: 'dns', proto: 'udp', port: 30053, backendPort: 53 });
  await api('PATCH', `/api/services/${office.id}/tcp/${mqtt}/disable`);
  return { home, office, grafana, wiki, mqtt, dns };
}

const query = (overrides: Partial<ServiceOverviewQuery> = {}): ServiceOverviewQuery =>
  ServiceOverviewQuerySchema.parse({ ...overrides });

describe('the services overview', () => {
  test('lists both types across nodes by name, with node, status and certificate facts, paged', async () => {
    const { home, office } = await seed();
    const all = (await api<Page>('GET', '/api/services')).body;
    expect(names(all)).toEqual(['dns@home-lab', 'Grafana@home-lab', 'mqtt@office', 'wiki@office']);
    expect(all.total).toBe(4);
    const grafana = all.data[1];
    expect(grafana?.node).toEqual({ id: home.id, name: 'home-lab', status: 'offline', enabled: true, isLocal: false });
    expect(grafana?.type).toBe('http');
    expect(grafana?.service).toMatchObject({ publicAccess: 'https://metrics.example.com/grafana' });
    // The certbot domain's certificate is pending (issuance runs in the background); TCP without TLS has none.
    expect(all.data[3]?.certificate).toMatchObject({ state: 'pending' });
    expect(all.data[2]?.certificate).toBeNull();
    expect(all.data[3]?.node.status).toBe('online');
    expect(all.data[3]?.node.id).toBe(office.id);

    const second = (await api<Page>('GET', '/api/services?limit=3&page=2')).body;
    expect(names(second)).toEqual(['wiki@office']);
    expect(second.total).toBe(4);
    const beyond = (await api<Page>('GET', '/api/services?limit=3&page=5')).body;
    expect(beyond).toMatchObject({ data: [], total: 4, page: 5 });
  });

  test('equal names across both types page in a fixed order: every service once, descending the exact reverse', async () => {
    const node = await insertNode(t.deps, { name: 'home-lab' });
    for (const [index, name] of ['Same', 'same', 'SAME'].entries()) {
      await api('POST', `/api/services/${node.id}/http`, { name, domain: `s${index}.example.com`, backendPort: 80 });
      await api('POST', `/api/services/${node.id}/tcp`, { name, port: 30090 + index, backendPort: 80 });
    }
    const key = (row: ServiceOverview) => `${row.type}:${row.service.id}`;
    const walk = async (order: 'asc' | 'desc') => {
      const seen: string[] = [];
      for (let page = 1; page <= 3; page++) {
        const body = (await api<Page>('GET', `/api/services?limit=2&page=${page}&order=${order}`)).body;
        expect(body.total).toBe(6);
        seen.push(...body.data.map(key));
      }
      return seen;
    };
    const ascending = await walk('asc');
    expect(new Set(ascending).size).toBe(6);
    expect(await walk('desc')).toEqual([...ascending].reverse());
    const whole = (await api<Page>('GET', '/api/services?limit=10')).body;
    expect(whole.data.map(key)).toEqual(ascending);

    // The same walk by cursor: each answer's `next` starts the following page; the last page's is null.
    const byCursor = async (order: 'asc' | 'desc') => {
      const seen: string[] = [];
      let after: string | null | undefined;
      for (let turn = 0; turn < 4 && after !== null; turn++) {
        const cursor = after === undefined ? '' : `&after=${encodeURIComponent(after)}`;
        const body = (
          await api<Page & { next?: string | null }>('GET', `/api/services?limit=3&order=${order}${cursor}`)
        ).body;
        expect(body.total).toBe(6);
        seen.push(...body.data.map(key));
        after = body.next;
      }
      expect(after).toBeNull();
      return seen;
    };
    expect(await byCursor('asc')).toEqual(ascending);
    expect(await byCursor('desc')).toEqual([...ascending].reverse());
  });

  test('a cursor is refused (422, on `after`) when it is not one the list gave, or with another order than by name', async () => {
    const node = await insertNode(t.deps);
    await api('POST', `/api/services/${node.id}/tcp`, { name: 'mqtt', port: 30083, backendPort: 1883 });
    const first = (await api<Page & { next?: string | null }>('GET', '/api/services?limit=1')).body;
    expect(first.next).toEqual(expect.any(String));
    const forged = Buffer.from(JSON.stringify(['x', 'not a number', 'http'])).toString('base64url');
    for (const search of [`after=${forged}`, 'after=%7B', `sort=node&after=${first.next ?? ''}`]) {
      const response = await api<{ errors: { body: { field: string }[] } }>('GET', `/api/services?${search}`);
      expect(response.status, search).toBe(422);
      expect(response.body.errors.body[0]?.field, search).toBe('after');
    }
  });

  test('searches name, domain, path and port; filters by kind, node, domain and status; sorts', async () => {
    const { home, office } = await seed();
    const get = async (search: string) => names((await api<Page>('GET', `/api/services?${search}`)).body);
    expect(await get('q=GRAF')).toEqual(['Grafana@home-lab']);
    expect(await get('q=shop.example')).toEqual(['wiki@office']);
    expect(await get('q=30083')).toEqual(['mqtt@office']);
    // Typed text is text: % and _ match themselves only.
    expect(await get('q=%25')).toEqual([]);
    expect(await get('kind=http')).toEqual(['Grafana@home-lab', 'wiki@office']);
    expect(await get('kind=udp')).toEqual(['dns@home-lab']);
    expect(await get('kind=tcp')).toEqual(['mqtt@office']);
    expect(await get(`nodeId=${office.id}`)).toEqual(['mqtt@office', 'wiki@office']);
    expect(await get('domain=metrics.example.com')).toEqual(['Grafana@home-lab']);
    expect(await get('status=disabled')).toEqual(['mqtt@office']);
    expect(await get('status=public')).toEqual(['dns@home-lab', 'Grafana@home-lab', 'wiki@office']);
    expect(await get('status=node-offline')).toEqual(['dns@home-lab', 'Grafana@home-lab']);
    expect(await get(`status=public&nodeId=${home.id}&kind=http`)).toEqual(['Grafana@home-lab']);

    expect(await get('sort=name&order=desc')).toEqual([
      'wiki@office',
      'mqtt@office',
      'Grafana@home-lab',
      'dns@home-lab',
    ]);
    expect(await get('sort=node&order=desc')).toEqual([
      'wiki@office',
      'mqtt@office',
      'Grafana@home-lab',
      'dns@home-lab',
    ]);
    expect(await get('sort=kind')).toEqual(['Grafana@home-lab', 'wiki@office', 'mqtt@office', 'dns@home-lab']);
    expect(await get('sort=status&order=desc')).toEqual([
      'mqtt@office',
      'dns@home-lab',
      'Grafana@home-lab',
      'wiki@office',
    ]);
  });

  test('a disconnected node makes its services not public; set-aside rows are their own status', async () => {
    const { home, grafana } = await seed();
    await api('PATCH', `/api/nodes/${home.id}/disable`);
    const get = async (search: string) => names((await api<Page>('GET', `/api/services?${search}`)).body);
    expect(await get('status=public')).toEqual(['wiki@office']);
    expect(await get('status=disabled')).toEqual(['dns@home-lab', 'Grafana@home-lab', 'mqtt@office']);
    // A disconnected node is the operator's choice, not an outage.
    expect(await get('status=node-offline')).toEqual([]);

    await api('PATCH', `/api/nodes/${home.id}/enable`);
    await t.db.write(
      async (tx) =>
        await tx
          .update(httpServices)
          .set({ applyError: 'two services on one path' })
          .where(eq(httpServices.id, grafana))
          .run(),
    );
    expect(await get('status=set-aside')).toEqual(['Grafana@home-lab']);
    expect(await get('status=public')).toEqual(['dns@home-lab', 'wiki@office']);
  });

  test('backend-down and certificate-failed come from the health checks and the certificate facts', async () => {
    const { grafana, wiki, dns } = await seed();
    const down = (type: 'http' | 'tcp', id: number): ServiceHealth => ({
      type,
      id,
      nodeId: 1,
      state: 'down',
      since: null,
      lastCheckedAt: null,
      lastError: 'connection refused',
      latencyMs: null,
      intervalSeconds: 30,
      timeoutSeconds: 5,
    });
    const health: HealthSource = { list: () => Promise.resolve([down('http', grafana), down('tcp', dns)]) };
    const run = async (overrides: Partial<ServiceOverviewQuery>) =>
      names(await listServiceOverview(t.deps, query(overrides), health));
    expect(await run({ status: 'backend-down' })).toEqual(['dns@home-lab', 'Grafana@home-lab']);
    expect(await run({ status: 'backend-down', kind: 'http' })).toEqual(['Grafana@home-lab']);

    expect(await run({ status: 'certificate-failed' })).toEqual([]);
    t.fakeDataPlane.certs.infos.set('shop.example.com', {
      state: 'failed',
      issuer: null,
      notBefore: null,
      notAfter: null,
      fingerprint: null,
      error: 'DNS problem: NXDOMAIN looking up A for shop.example.com',
    });
    expect(await run({ status: 'certificate-failed' })).toEqual(['wiki@office']);
    const row = (await listServiceOverview(t.deps, query({ q: 'wiki' }), health)).data[0];
    expect(row?.certificate).toEqual({
      state: 'failed',
      notAfter: null,
      error: 'DNS problem: NXDOMAIN looking up A for shop.example.com',
    });
    expect(wiki).toBeGreaterThan(0);
  });

  test('refuses unknown filters and sorts with the spec messages, changing nothing', async () => {
    const bad = await api<{ errors: { body: { field: string; message: string }[] } }>(
      'GET',
      '/api/services?sort=id;drop&status=everything&kind=icmp&limit=1000',
    );
    expect(bad.status).toBe(422);
    expect(bad.body.errors.body.map((error) => error.field).sort()).toEqual(['kind', 'limit', 'sort', 'status']);
    expect(bad.body.errors.body.find((error) => error.field === 'kind')?.message).toBe(
      'This field must be one of http, tcp, udp',
    );
  });
});
