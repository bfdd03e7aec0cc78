import type { Domain, HttpService, Node } from '@postern/contract';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { buildTestApp, TEST_STORE, type TestApp } from '../test/build-test-app.js';
import { postgresAvailable } from '../test/postgres.js';

// Several gateways on one PostgreSQL database: a change made through one is applied by the others (announced with
// NOTIFY after it committed), without any call to them.

const apps: TestApp[] = [];
afterEach(async () => {
  // The first app made the database: it goes last.
  for (const app of apps.reverse()) await app.cleanup();
  apps.length = 0;
});

const servedDomains = (app: TestApp): string[] => app.fakeDataPlane.lastState?.http.map((r) => r.domain ?? '') ?? [];

// Once per test command: the run on PostgreSQL (POSTERN_TEST_STORE=postgres) would only repeat it.
describe.skipIf(TEST_STORE === 'postgres' || !(await postgresAvailable()))('several gateways on one database', () => {
  test('a service created through gateway A is applied by gateways B and C within 1 s', async () => {
    const a = await buildTestApp({ postgres: true });
    apps.push(a);
    const b = await buildTestApp({ sameDatabaseAs: a });
    apps.push(b);
    const c = await buildTestApp({ sameDatabaseAs: a });
    apps.push(c);
    const headers = { authorization: `Bearer ${await a.login()}` };
    const post = async <T>(url: string, payload: object): Promise<T> => {
      const response = await a.app.inject({ method: 'POST', url, headers, payload });
      expect(response.statusCode, response.body).toBeLessThan(300);
      return response.json<T>();
    };
    const node = await post<Node>('/api/nodes', { name: 'office' });
    await post<Domain>('/api/domains', { domain: 'shop.example.com' });
    const before = { b: b.fakeDataPlane.applyCount, c: c.fakeDataPlane.applyCount };
    const started = performance.now();
    await post<HttpService>(`/api/services/${node.id}/http`, {
      name: 'shop',
      domain: 'shop.example.com',
      backendPort: 8080,
    });
    await vi.waitFor(
      () => {
        expect(servedDomains(b)).toContain('shop.example.com');
        expect(servedDomains(c)).toContain('shop.example.com');
      },
      { timeout: 1000, interval: 10 },
    );
    expect(performance.now() - started).toBeLessThan(1000);
    expect(b.fakeDataPlane.applyCount).toBeGreaterThan(before.b);
    expect(c.fakeDataPlane.applyCount).toBeGreaterThan(before.c);
    // The node's peer too: B and C would open the tunnel for it.
    expect(b.fakeDataPlane.lastState?.peers.map((p) => p.nodeId)).toContain(node.id);
    // The service's announcement carried its scope: B and C pushed its host alone.
    expect(b.fakeDataPlane.proxy.patches.at(-1)).toEqual({ set: ['shop.example.com'], del: [] });
    expect(c.fakeDataPlane.proxy.patches.at(-1)).toEqual({ set: ['shop.example.com'], del: [] });
  });

  test("a gateway's own announcements do not make it apply twice", async () => {
    const a = await buildTestApp({ postgres: true });
    apps.push(a);
    const b = await buildTestApp({ sameDatabaseAs: a });
    apps.push(b);
    const headers = { authorization: `Bearer ${await a.login()}` };
    const beforeA = a.fakeDataPlane.applyCount;
    const created = await a.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: 'one' } });
    expect(created.statusCode).toBe(201);
    await vi.waitFor(() => expect(b.fakeDataPlane.lastState?.peers).toHaveLength(1), { timeout: 1000, interval: 10 });
    expect(a.fakeDataPlane.applyCount).toBe(beforeA + 1);
  });

  test('a topic announcement reaches the topic listeners of the other gateways only, and applies no data plane', async () => {
    const a = await buildTestApp({ postgres: true });
    apps.push(a);
    const b = await buildTestApp({ sameDatabaseAs: a });
    apps.push(b);
    const heard = { a: [] as (string | null)[], b: [] as (string | null)[], other: [] as (string | null)[] };
    a.db.onAnnounce('test.topic', (payload) => heard.a.push(payload));
    b.db.onAnnounce('test.topic', (payload) => heard.b.push(payload));
    b.db.onAnnounce('test.other', (payload) => heard.other.push(payload));
    let dataHeard = 0;
    b.db.onAnnounce(() => dataHeard++);
    // B's LISTEN connection opens in the background: it is in place once one of A's announcements reaches it.
    let isListening = false;
    b.db.onAnnounce('test.ready', () => (isListening = true));
    await vi.waitFor(
      async () => {
        await a.db.announce('test.ready');
        expect(isListening).toBe(true);
      },
      { timeout: 2000, interval: 20 },
    );
    const appliesBefore = b.fakeDataPlane.applyCount;
    await a.db.announce('test.topic', 'hello');
    await a.db.announce('test.topic');
    await vi.waitFor(() => expect(heard.b).toEqual(['hello', '']), { timeout: 1000, interval: 10 });
    // NOTIFYs of one session arrive in order: this one, behind the topic's, shows nothing else is on its way.
    await a.db.announce('test.other', 'last');
    await vi.waitFor(() => expect(heard.other).toEqual(['last']), { timeout: 1000, interval: 10 });
    expect(heard.a).toEqual([]);
    expect(dataHeard).toBe(0);
    expect(b.fakeDataPlane.applyCount).toBe(appliesBefore);
  });

  test('refuses a topic or payload no gateway could receive', async () => {
    const a = await buildTestApp({ postgres: true });
    apps.push(a);
    for (const store of [a.db]) {
      await expect(store.announce('Not A Topic')).rejects.toThrow('not an announcement topic');
      await expect(store.announce(undefined, 'payload')).rejects.toThrow('needs a topic');
      await expect(store.announce('big', 'x'.repeat(4001))).rejects.toThrow('at most 4000 bytes');
    }
  });
});

describe('announcements on the embedded engine', () => {
  test('go nowhere: one gateway, nothing to tell', async () => {
    const a = await buildTestApp();
    apps.push(a);
    if (a.db.engine !== 'sqlite') return;
    const heard: (string | null)[] = [];
    const stop = a.db.onAnnounce('sessions', (payload) => heard.push(payload));
    await a.db.announce('sessions', 'x');
    await a.db.announce();
    expect(heard).toEqual([]);
    stop();
    await expect(a.db.announce('Bad!')).rejects.toThrow('not an announcement topic');
  });
});
