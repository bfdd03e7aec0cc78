import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { connectSse, type SseTestClient } from '../../test/sse-client.js';

let t: TestApp;
let token: string;
let base: string;
const clients: SseTestClient[] = [];

beforeEach(async () => {
  t = await buildTestApp();
  token = await t.login();
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
});
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await t.cleanup();
});

const api = (method: 'POST' | 'PATCH', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });

async function open(query: string): Promise<SseTestClient> {
  const client = await connectSse(`${base}/api/nodes/stream?token=${token}&${query}`);
  clients.push(client);
  return client;
}

type NodeEvent = { id: number; name: string; enabled: boolean; status: string };

describe('GET /api/nodes/stream', () => {
  it('list variant: sends the page at once, then again only when a node on it changes', async () => {
    const a = (await api('POST', '/api/nodes', { name: 'a' })).json();
    const b = (await api('POST', '/api/nodes', { name: 'b' })).json();
    const firstPage = await open('page=1&limit=2');
    const secondPage = await open('page=2&limit=2');
    expect(firstPage.status).toBe(200);
    const [initial] = (await firstPage.waitForEvents(1)) as NodeEvent[][];
    expect(initial?.map((n) => n.name)).toEqual(['Gateway (local)', 'a']);
    expect(((await secondPage.waitForEvents(1))[0] as NodeEvent[]).map((n) => n.name)).toEqual(['b']);

    await api('PATCH', `/api/nodes/${a.id}/disable`);
    const [, changed] = (await firstPage.waitForEvents(2)) as NodeEvent[][];
    expect(changed?.find((n) => n.id === a.id)?.enabled).toBe(false);

    // A status change of b (page 2) reaches page 2 only.
    const bKey = t.fakeDataPlane.lastState?.peers.find((p) => p.nodeId === b.id)?.publicKey ?? '';
    t.fakeDataPlane.status.setStatus(bKey, {
      status: 'online',
      clientIp: '198.51.100.7',
      latestHandshakeTimestamp: null,
      transferRx: 1,
      transferTx: 2,
    });
    const [, bOnline] = (await secondPage.waitForEvents(2)) as NodeEvent[][];
    expect(bOnline?.[0]).toMatchObject({ id: b.id, status: 'online' });
    await api('PATCH', `/api/nodes/${a.id}/enable`);
    await firstPage.waitForEvents(3);
    expect(secondPage.events).toHaveLength(2);
  });

  it('list variant with q and sort: a status change off the page can bring a node onto it', async () => {
    await api('POST', '/api/nodes', { name: 'n-a' });
    const b = (await api('POST', '/api/nodes', { name: 'n-b' })).json();
    const none = await open('page=1&limit=1&q=zzz');
    const [nothing] = (await none.waitForEvents(1)) as NodeEvent[][];
    expect(nothing).toEqual([]);
    const sorted = await open('page=1&limit=1&sort=status&order=asc&q=n-');
    const [first] = (await sorted.waitForEvents(1)) as NodeEvent[][];
    expect(first?.map((n) => n.name)).toEqual(['n-a']);
    const bKey = t.fakeDataPlane.lastState?.peers.find((p) => p.nodeId === b.id)?.publicKey ?? '';
    t.fakeDataPlane.status.setStatus(bKey, {
      status: 'online',
      clientIp: null,
      latestHandshakeTimestamp: null,
      transferRx: 0,
      transferTx: 0,
    });
    const [, moved] = (await sorted.waitForEvents(2)) as NodeEvent[][];
    expect(moved?.map((n) => [n.name, n.status])).toEqual([['n-b', 'online']]);
  });

  it("list variant with format=page: named 'page' events carry the whole list answer, total included, on create and delete", async () => {
    const a = (await api('POST', '/api/nodes', { name: 'a' })).json();
    const paged = await open('page=1&limit=2&format=page');
    const rows = await open('page=1&limit=2');
    const [first] = await paged.waitForNamedEvents(1);
    expect(first?.event).toBe('page');
    expect(first?.data).toMatchObject({ page: 1, limit: 2, total: 2 });
    expect((first?.data as { data: NodeEvent[] }).data.map((n) => n.name)).toEqual(['Gateway (local)', 'a']);

    await api('POST', '/api/nodes', { name: 'b' });
    const [, created] = await paged.waitForNamedEvents(2);
    expect(created?.data).toMatchObject({ total: 3 });
    await t.app.inject({ method: 'DELETE', url: `/api/nodes/${a.id}`, headers: { authorization: `Bearer ${token}` } });
    const [, , deleted] = await paged.waitForNamedEvents(3);
    expect(deleted?.data).toMatchObject({ total: 2 });
    expect((deleted?.data as { data: NodeEvent[] }).data.map((n) => n.name)).toEqual(['Gateway (local)', 'b']);
    // Each client gets its own format only: the spec's clients keep their arrays, page clients get no arrays.
    expect(paged.events).toEqual([]);
    const arrays = (await rows.waitForEvents(3)) as NodeEvent[][];
    expect(arrays[2]?.map((n) => n.name)).toEqual(['Gateway (local)', 'b']);
    expect(rows.namedEvents).toEqual([]);
  });

  it('filters by type', async () => {
    await api('POST', '/api/nodes', { name: 'gw', isGateway: true, gatewayNetwork: '192.168.5.0/24' });
    const gateways = await open('type=gateways');
    expect(((await gateways.waitForEvents(1))[0] as NodeEvent[]).map((n) => n.name)).toEqual(['gw']);
  });

  it('detail variant: sends the node, then each change of it', async () => {
    const a = (await api('POST', '/api/nodes', { name: 'a' })).json();
    const detail = await open(`id=${a.id}`);
    expect(((await detail.waitForEvents(1))[0] as NodeEvent).name).toBe('a');
    await api('PATCH', `/api/nodes/${a.id}`, { name: 'renamed' });
    expect(((await detail.waitForEvents(2))[1] as NodeEvent).name).toBe('renamed');
  });

  it('fans one change out to many subscribers', async () => {
    const a = (await api('POST', '/api/nodes', { name: 'a' })).json();
    const many = await Promise.all(Array.from({ length: 20 }, () => open('page=1&limit=10')));
    await Promise.all(many.map((c) => c.waitForEvents(1)));
    await api('PATCH', `/api/nodes/${a.id}`, { name: 'seen-by-all' });
    for (const client of many) {
      const events = (await client.waitForEvents(2)) as NodeEvent[][];
      expect(events[1]?.find((n) => n.id === a.id)?.name).toBe('seen-by-all');
    }
  });

  it('ends open streams when the app closes, so shutdown does not hang', async () => {
    const client = await open('page=1');
    await client.waitForEvents(1);
    const ended = new Promise<void>((resolve) => client.onEnd(resolve));
    await t.app.close();
    await ended;
  });

  it('refuses a missing or bad token with 401 and an unknown id with 404', async () => {
    const anonymous = await connectSse(`${base}/api/nodes/stream`);
    clients.push(anonymous);
    expect(anonymous.status).toBe(401);
    const bad = await connectSse(`${base}/api/nodes/stream?token=nonsense`);
    clients.push(bad);
    expect(bad.status).toBe(401);
    expect((await open('id=999')).status).toBe(404);
  });
});
