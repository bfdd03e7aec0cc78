import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ruleMessages, type AuditEntry, type HttpService, type ListResponse, type TcpService } from '@postern/contract';
import { eq } from 'drizzle-orm';
import { auditEvents, tcpServices } from '../../db/schema.js';
import { bootstrap } from '../../bootstrap.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { waitFor } from '../../test/wait-for.js';
import { createApiClient, fieldMessage, insertNode } from './test-support.js';

let t: TestApp;
let clock: Date;
let api: ReturnType<typeof createApiClient>;

beforeEach(async () => {
  clock = new Date('2030-01-01T00:00:00.000Z');
  t = await buildTestApp({ now: () => clock });
  api = createApiClient(t, await t.login());
});
afterEach(() => t.cleanup());

const later = (ms: number): string => new Date(clock.getTime() + ms).toISOString();
const web = { name: 'web', domain: 'temp.example.test', backendPort: 80 };

const servedHosts = (): string[] => [...t.fakeDataPlane.proxy.routes.keys()];

describe('temporary exposure: the API', () => {
  it('takes an expiry as ttl (seconds, on the gateway clock) or expiresAt; absent means none; null clears it', async () => {
    const node = await insertNode(t.deps);
    const plain = await api<HttpService>('POST', `/api/services/${node.id}/http`, web);
    expect(plain.status).toBe(201);
    expect(plain.body.expiresAt).toBeNull();

    const byTtl = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, {
      name: 'db',
      backendPort: 5432,
      ttl: 3600,
    });
    expect(byTtl.body.expiresAt).toBe(later(3600_000));
    const byTime = await api<HttpService>('PATCH', `/api/services/${node.id}/http/${plain.body.id}`, {
      expiresAt: '2030-01-02T00:00:00Z',
    });
    expect(byTime.body.expiresAt).toBe('2030-01-02T00:00:00.000Z');
    const untouched = await api<HttpService>('PATCH', `/api/services/${node.id}/http/${plain.body.id}`, {
      name: 'renamed',
    });
    expect(untouched.body.expiresAt).toBe('2030-01-02T00:00:00.000Z');
    const cleared = await api<HttpService>('PATCH', `/api/services/${node.id}/http/${plain.body.id}`, {
      expiresAt: null,
    });
    expect(cleared.body.expiresAt).toBeNull();

    const past = await api('PATCH', `/api/services/${node.id}/http/${plain.body.id}`, {
      expiresAt: '2029-12-31T00:00:00Z',
    });
    expect(past.status).toBe(422);
    expect(fieldMessage(past.body, 'expiresAt')).toBe(ruleMessages.pastDate);
    const both = await api('POST', `/api/services/${node.id}/tcp`, {
      name: 'x',
      backendPort: 1,
      ttl: 60,
      expiresAt: later(60_000),
    });
    expect(fieldMessage(both.body, 'ttl')).toBe(ruleMessages.expiryTwice);
    expect((await api('POST', `/api/services/${node.id}/tcp`, { name: 'x', backendPort: 1, ttl: 5 })).status).toBe(422);
  });

  it('a node token can publish with a ttl too', async () => {
    const created = (await api<{ token: string }>('POST', '/api/nodes', { name: 'laptop' })).body;
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/agent/services/tcp',
      headers: { authorization: `Bearer ${created.token}` },
      payload: { name: 'ssh', backendPort: 22, ttl: 600 },
    });
    expect(response.json<TcpService>().expiresAt).toBe(later(600_000));
  });
});

describe('temporary exposure: at expiry', () => {
  it('disables the service within seconds (kept, not deleted), stops serving it and records it', async () => {
    const node = await insertNode(t.deps);
    const service = (await api<HttpService>('POST', `/api/services/${node.id}/http`, { ...web, ttl: 60 })).body;
    expect(servedHosts()).toContain('temp.example.test');
    clock = new Date(clock.getTime() + 61_000);
    const disabled = await waitFor(
      async () => {
        const current = (await api<HttpService>('GET', `/api/services/${node.id}/http/${service.id}`)).body;
        return current.enabled ? undefined : current;
      },
      { timeoutMs: 5000, intervalMs: 50, what: 'the expired service to be disabled' },
    );
    expect(disabled).toMatchObject({ id: service.id, enabled: false, expiresAt: service.expiresAt });
    await waitFor(async () => !servedHosts().includes('temp.example.test'), {
      timeoutMs: 5000,
      intervalMs: 50,
      what: 'nginx to stop serving it',
    });
    const entries = (await api<ListResponse<AuditEntry>>('GET', '/api/audit?action=service.expired')).body.data;
    expect(entries).toEqual([
      expect.objectContaining({
        actor: { kind: 'system', name: null, tokenId: null },
        target: { type: 'http', id: service.id, name: 'web' },
        nodeId: node.id,
        after: expect.objectContaining({ enabled: false }),
      }),
    ]);
    // Enabling it again serves it for good: the ended expiry goes.
    const enabled = await api<HttpService>('PATCH', `/api/services/${node.id}/http/${service.id}/enable`);
    expect(enabled.body).toMatchObject({ enabled: true, expiresAt: null });
  });

  it('an expiry that passed while the gateway was down is applied at boot, before the data plane starts', async () => {
    const node = await insertNode(t.deps);
    const service = (
      await api<TcpService>('POST', `/api/services/${node.id}/tcp`, { name: 'db', backendPort: 5432, ttl: 60 })
    ).body;
    await t.app.close(); // the gateway goes down: no sweep runs
    clock = new Date(clock.getTime() + 3600_000);
    await bootstrap(t.deps, () => undefined); // what the next boot runs before anything is served
    const row = await t.deps.db.select().from(tcpServices).where(eq(tcpServices.id, service.id)).get();
    expect(row).toMatchObject({ enabled: false });
    const recorded = await t.deps.db.select().from(auditEvents).where(eq(auditEvents.action, 'service.expired'));
    expect(recorded).toHaveLength(1);
  });
});
