import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { Attention, ServiceHealth } from '@postern/contract';
import { tcpServices } from '../../db/schema.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { createApiClient, insertNode } from '../services/test-support.js';
import { ATTENTION_MAX_AGE_MS, readAttention } from './attention.js';

// GET /api/system/attention: what the home page lists as needing attention, and the totals.

const NOW = new Date('2026-11-26T12:00:00.000Z');
let clock = NOW.getTime();
const DAY = 86_400_000;

let t: TestApp;
let api: ReturnType<typeof createApiClient>;

beforeEach(async () => {
  clock = NOW.getTime();
  t = await buildTestApp({ now: () => new Date(clock) });
  api = createApiClient(t, await t.login());
});
afterEach(async () => {
  await t.cleanup();
});

const certificate = (state: 'valid' | 'failed' | 'pending', notAfter: Date | null, error: string | null = null) => ({
  state,
  issuer: 'CN=Test CA',
  notBefore: null,
  notAfter: notAfter?.toISOString() ?? null,
  fingerprint: null,
  error,
});

describe('what needs attention', () => {
  test('an unused gateway has nothing to show and totals of zero (the local node does not count)', async () => {
    const { body } = await api<Attention>('GET', '/api/system/attention');
    expect(body).toEqual({
      totals: { nodes: 0, domains: 0, httpServices: 0, tcpServices: 0 },
      offlineNodes: { total: 0, items: [] },
      disconnectedNodeIds: [],
      backendsDown: { total: 0, items: [] },
      certificates: { total: 0, items: [] },
      setAside: { total: 0, items: [] },
      drift: null,
    });
  });

  test('lists offline nodes, down backends, certificates failing or ending, set-aside changes and drift', async () => {
    const offline = await insertNode(t.deps, { name: 'pi-1' });
    const online = await insertNode(t.deps, { name: 'office' });
    const parked = await insertNode(t.deps, { name: 'parked', enabled: false });
    t.fakeDataPlane.status.setStatus(online.publicKey, {
      status: 'online',
      clientIp: null,
      latestHandshakeTimestamp: NOW.toISOString(),
      transferRx: 0,
      transferTx: 0,
    });
    for (const domain of ['broken.example.com', 'ending.example.com', 'fine.example.com', 'gone.example.com'])
      await api('POST', '/api/domains', { domain, ssl: 'certbot' });
    const infos = t.fakeDataPlane.certs.infos;
    infos.set('broken.example.com', certificate('failed', null, 'NXDOMAIN'));
    infos.set('ending.example.com', certificate('valid', new Date(NOW.getTime() + 5 * DAY)));
    infos.set('fine.example.com', certificate('valid', new Date(NOW.getTime() + 60 * DAY)));
    infos.set('gone.example.com', certificate('valid', new Date(NOW.getTime() - DAY)));
    const web = (
      await api<{ id: number }>('POST', `/api/services/${offline.id}/http`, {
        name: 'web',
        domain: 'fine.example.com',
        backendPort: 80,
      })
    ).body;
    const db = (await api<{ id: number }>('POST', `/api/services/${online.id}/tcp`, { name: 'db', backendPort: 5432 }))
      .body;
    await t.db.write(
      async (tx) =>
        await tx.update(tcpServices).set({ applyError: 'port in use' }).where(eq(tcpServices.id, db.id)).run(),
    );
    t.fakeDataPlane.reportDrift({ checkedAt: NOW.toISOString(), differences: ['route web'], repaired: true });
    const down: ServiceHealth = {
      type: 'http',
      id: web.id,
      nodeId: offline.id,
      state: 'down',
      since: NOW.toISOString(),
      lastCheckedAt: NOW.toISOString(),
      lastError: 'connect ETIMEDOUT',
      latencyMs: null,
      intervalSeconds: 30,
      timeoutSeconds: 5,
    };
    const gone: ServiceHealth = { ...down, id: 999_999 };

    const attention = await readAttention(t.deps, { list: () => Promise.resolve([down, gone]) });
    expect(attention.totals).toEqual({ nodes: 3, domains: 4, httpServices: 1, tcpServices: 1 });
    expect(attention.offlineNodes).toEqual({
      total: 1,
      items: [{ id: offline.id, name: 'pi-1', latestHandshakeTimestamp: null }],
    });
    expect(attention.disconnectedNodeIds).toEqual([parked.id]);
    // A service deleted since its last check is counted by the checker but not listed.
    expect(attention.backendsDown.items).toEqual([
      {
        type: 'http',
        id: web.id,
        nodeId: offline.id,
        name: 'web',
        nodeName: 'pi-1',
        since: NOW.toISOString(),
        lastError: 'connect ETIMEDOUT',
      },
    ]);
    expect(attention.certificates.items.map((c) => `${c.domain}:${c.problem}`)).toEqual([
      'broken.example.com:failed',
      'ending.example.com:expiring',
      'gone.example.com:expired',
    ]);
    expect(attention.setAside).toEqual({
      total: 1,
      items: [{ type: 'tcp', id: db.id, nodeId: online.id, name: 'db', nodeName: 'office', applyError: 'port in use' }],
    });
    expect(attention.drift).toMatchObject({ differences: ['route web'], repaired: true });
  });

  test('a pending certificate is not a problem, whatever end date its stand-in has', async () => {
    await api('POST', '/api/domains', { domain: 'new.example.com', ssl: 'certbot' });
    t.fakeDataPlane.certs.infos.set('new.example.com', certificate('pending', new Date(NOW.getTime() + DAY)));
    const { body } = await api<Attention>('GET', '/api/system/attention');
    expect(body.certificates).toEqual({ total: 0, items: [] });
    expect(body.totals.domains).toBe(1);
  });

  test('is read once per change: any recorded change or tunnel event drops the answer, the rest ages out', async () => {
    const node = await insertNode(t.deps, { name: 'pi-2' });
    const db = (await api<{ id: number }>('POST', `/api/services/${node.id}/tcp`, { name: 'db', backendPort: 5432 }))
      .body;
    const read = async () => (await api<Attention>('GET', '/api/system/attention')).body;
    expect((await read()).offlineNodes.items.map((n) => n.name)).toEqual(['pi-2']);

    // A change through the API is in the audit log, so the next read sees it.
    await api('PATCH', `/api/nodes/${node.id}/disable`);
    const afterDisable = await read();
    expect(afterDisable.offlineNodes.total).toBe(0);
    expect(afterDisable.disconnectedNodeIds).toEqual([node.id]);
    await api('PATCH', `/api/nodes/${node.id}/enable`);
    expect((await read()).offlineNodes.total).toBe(1);

    // A node's tunnel coming up is an event too.
    t.fakeDataPlane.status.setStatus(node.publicKey, {
      status: 'online',
      clientIp: null,
      latestHandshakeTimestamp: NOW.toISOString(),
      transferRx: 0,
      transferTx: 0,
    });
    expect((await read()).offlineNodes.total).toBe(0);

    // What announces nothing (a row written behind the API's back, a certificate) shows once the answer has aged.
    await t.db.write(
      async (tx) =>
        await tx.update(tcpServices).set({ applyError: 'port in use' }).where(eq(tcpServices.id, db.id)).run(),
    );
    expect((await read()).setAside.total).toBe(0);
    clock += ATTENTION_MAX_AGE_MS;
    expect((await read()).setAside.total).toBe(1);
  });
});
