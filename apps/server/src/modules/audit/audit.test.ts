import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { operations, type AuditEntry, type ListResponse } from '@postern/contract';
import { auditEvents, nodes, personalAccessTokens, users } from '../../db/schema.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../../test/build-test-app.js';
import { connectSse } from '../../test/sse-client.js';
import { createApiClient, insertNode } from '../services/test-support.js';
import { pruneAuditLog } from './retention.js';

let t: TestApp;
let clock: Date;
let token: string;
let api: ReturnType<typeof createApiClient>;

const tick = (ms: number): void => {
  clock = new Date(clock.getTime() + ms);
};

beforeEach(async () => {
  clock = new Date('2030-01-01T00:00:00.000Z');
  t = await buildTestApp({ now: () => clock });
  token = await t.login();
  api = createApiClient(t, token);
});
afterEach(() => t.cleanup());

const audit = async (query = ''): Promise<ListResponse<AuditEntry>> => {
  const response = await api<ListResponse<AuditEntry>>('GET', `/api/audit${query}`);
  expect(response.status).toBe(200);
  return response.body;
};
const actions = (list: ListResponse<AuditEntry>): string[] => list.data.map((entry) => entry.action);

describe('audit log: what is recorded', () => {
  it('records a change with who, from where, the target and the fields before and after', async () => {
    const node = (await api<{ id: number }>('POST', '/api/nodes', { name: 'laptop' })).body;
    await api('PATCH', `/api/nodes/${node.id}`, { name: 'desk' });
    const [entry] = (await audit('?action=node.update')).data;
    expect(entry).toMatchObject({
      actor: { kind: 'admin', name: TEST_ADMIN.username, tokenId: null },
      address: '127.0.0.1',
      action: 'node.update',
      target: { type: 'node', id: node.id, name: 'desk' },
      nodeId: node.id,
      at: clock.toISOString(),
    });
    expect(entry?.before).toMatchObject({ name: 'laptop' });
    expect(entry?.after).toMatchObject({ name: 'desk' });
  });

  it('records sign-ins and failed sign-ins with the address, and the node token (id and name) behind agent changes', async () => {
    const failed = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'mallory', password: 'guess-guess-guess' },
      remoteAddress: '192.0.2.7',
    });
    expect(failed.statusCode).toBe(401);
    const node = (await api<{ id: number; token: string }>('POST', '/api/nodes', { name: 'laptop' })).body;
    const pat = (await api<{ id: number }>('POST', `/api/nodes/${node.id}/pats`, { name: 'ci' })).body;
    await api('PATCH', `/api/nodes/${node.id}/pats/${pat.id}/revoke`);
    const tokens = (await api<{ data: { id: number; name: string }[] }>('GET', `/api/nodes/${node.id}/pats`)).body.data;
    const first = tokens.find((row) => row.name !== 'ci');
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/agent/services/tcp',
      headers: { authorization: `Bearer ${node.token}` },
      payload: { name: 'mqtt', backendPort: 1883 },
    });
    expect(created.statusCode).toBe(201);

    const list = await audit('?limit=100');
    expect(actions(list)).toEqual([
      'service.create',
      'token.revoke',
      'token.create',
      'node.create',
      'auth.sign-in-failed',
      'auth.sign-in',
    ]);
    const byAction = (action: string) => list.data.find((entry) => entry.action === action);
    expect(byAction('auth.sign-in-failed')).toMatchObject({
      actor: { kind: 'anonymous', name: 'mallory' },
      address: '192.0.2.7',
    });
    expect(byAction('auth.sign-in')).toMatchObject({ actor: { kind: 'admin', name: TEST_ADMIN.username } });
    expect(byAction('token.revoke')).toMatchObject({
      target: { type: 'token', id: pat.id, name: 'ci' },
      before: { revoked: false },
      after: { revoked: true },
    });
    expect(byAction('service.create')).toMatchObject({
      actor: { kind: 'node', tokenId: first?.id, name: first?.name },
      nodeId: node.id,
      target: { type: 'tcp', name: 'mqtt' },
      before: null,
      after: { name: 'mqtt', backendPort: 1883 },
    });
  });

  it("records a service's create, edit and delete with the service as each left it (after: what the API answered)", async () => {
    const node = (await api<{ id: number }>('POST', '/api/nodes', { name: 'office' })).body;
    const base = `/api/services/${node.id}/http`;
    const created = (await api<{ id: number }>('POST', base, { name: 'wiki', pathLocation: '/wiki', backendPort: 81 }))
      .body;
    const edited = (await api('PATCH', `${base}/${created.id}`, { backendPort: 82 })).body;
    expect((await api('DELETE', `${base}/${created.id}`)).status).toBe(204);

    const list = await audit('?limit=3');
    expect(actions(list)).toEqual(['service.delete', 'service.update', 'service.create']);
    const [deleted, updated, made] = list.data;
    const target = { type: 'http', id: created.id, name: 'wiki' };
    expect(made).toMatchObject({ target, nodeId: node.id, before: null, after: { id: created.id, backendPort: 81 } });
    const { created_at: _c, updated_at: _u, ...answered } = edited;
    expect(updated).toMatchObject({ target, before: { backendPort: 81 }, after: answered });
    expect(updated?.after).toEqual(answered);
    expect(deleted).toMatchObject({ target, nodeId: node.id, before: { backendPort: 82 }, after: null });
  });

  it('writes the entries recorded in one turn in one transaction, each call resolving once its row is committed', async () => {
    // Writes that insert audit rows (other work of the app may write meanwhile, e.g. on PostgreSQL).
    const original = t.db.write.bind(t.db);
    let auditWrites = 0;
    vi.spyOn(t.db, 'write').mockImplementation(async (work) => {
      const seen = { inserts: false };
      const result = await original(async (tx) => {
        const watched = new Proxy(tx, {
          get(target, property) {
            if (property !== 'insert') return Reflect.get(target, property, target) as unknown;
            return (table: unknown) => {
              seen.inserts ||= table === auditEvents;
              return target.insert(table as typeof auditEvents);
            };
          },
        });
        return await work(watched);
      });
      if (seen.inserts) auditWrites++;
      return result;
    });
    const calls = [0, 1, 2, 3, 4].map((id) =>
      t.deps.audit.record({ actor: { kind: 'system' }, action: 'test.batch', target: { type: 'http', id } }),
    );
    await calls[0];
    // The store's reads see committed rows only (a connection of its own).
    const rows = await t.db.select().from(auditEvents).where(eq(auditEvents.action, 'test.batch')).all();
    expect(rows.map((row) => row.targetId)).toEqual([0, 1, 2, 3, 4]);
    await Promise.all(calls);
    expect(auditWrites).toBe(1);
  });

  it('fails only the caller whose entry cannot be stored, not the others written in its turn', async () => {
    const entry = (id: number, action: string) =>
      t.deps.audit.record({ actor: { kind: 'system' }, action, target: { type: 'http', id } });
    const outcomes = await Promise.allSettled([
      entry(1, 'test.shared-turn'),
      entry(2, undefined as unknown as string),
      entry(3, 'test.shared-turn'),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const rows = await t.db.select().from(auditEvents).where(eq(auditEvents.action, 'test.shared-turn')).all();
    expect(rows.map((row) => row.targetId)).toEqual([1, 3]);
  });

  it('never stores a secret: passwords, tokens, token hashes and private keys stay out (canaries)', async () => {
    const passwordCanary = 'canary-password-7f3a9c1e';
    await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: TEST_ADMIN.username, password: passwordCanary },
    });
    const newPassword = 'canary-new-password-51d0';
    expect(
      (await api('PATCH', '/api/auth/password', { currentPassword: TEST_ADMIN.password, newPassword })).status,
    ).toBe(204);
    api = createApiClient(
      t,
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { username: TEST_ADMIN.username, password: newPassword },
        })
      ).json<{ token: string }>().token,
    );
    const node = (await api<{ id: number; token: string }>('POST', '/api/nodes', { name: 'laptop' })).body;
    const pat = (await api<{ id: number; token: string }>('POST', `/api/nodes/${node.id}/pats`, { name: 'ci' })).body;
    await t.app.inject({
      method: 'POST',
      url: '/api/agent/services/tcp',
      headers: { authorization: `Bearer ${pat.token}` },
      payload: { name: 'mqtt', backendPort: 1883 },
    });
    await api('DELETE', `/api/nodes/${node.id}/pats/${pat.id}`);
    await api('PATCH', `/api/nodes/${node.id}`, { name: 'renamed' });

    const nodeRow = (await t.db.select().from(nodes).all()).find((row) => row.id === node.id);
    const hashes = (await t.db.select({ hash: personalAccessTokens.tokenHash }).from(personalAccessTokens).all()).map(
      (row) => row.hash,
    );
    const passwordHash = (await t.db.select().from(users).get())?.passwordHash;
    const canaries = [
      passwordCanary,
      newPassword,
      node.token,
      pat.token,
      ...hashes,
      passwordHash,
      nodeRow?.privateKeyEnc,
      t.deps.secrets.decrypt(nodeRow?.privateKeyEnc ?? ''),
    ];
    const stored = JSON.stringify(await t.db.select().from(auditEvents).all());
    const served = JSON.stringify((await audit('?limit=100')).data);
    expect(stored.length).toBeGreaterThan(500);
    for (const canary of canaries) {
      expect(canary, 'canary').toBeTruthy();
      expect(stored).not.toContain(canary);
      expect(served).not.toContain(canary);
    }
    expect(actions(await audit('?limit=100'))).toContain('auth.password-change');
  });

  it('records a row the data plane sets aside (the request and the rejection itself)', async () => {
    const node = await insertNode(t.deps);
    t.fakeDataPlane.proxy.streamFailures.set('tcp-30000', 'port 30000/tcp is in use by another program on the gateway');
    expect(
      (await api('POST', `/api/services/${node.id}/tcp`, { name: 'db', backendPort: 5432, port: 30000 })).status,
    ).toBe(400);
    const list = await audit(`?node=${node.id}`);
    expect(list.data).toEqual([
      expect.objectContaining({ action: 'service.create', detail: expect.stringContaining('dataplane_rejected') }),
      expect.objectContaining({
        action: 'dataplane.rejected',
        actor: { kind: 'system', name: null, tokenId: null },
        detail: 'port 30000/tcp is in use by another program on the gateway',
      }),
    ]);
  });

  it('records service state changes from the health checks (the hook the health-check module calls)', async () => {
    const node = await insertNode(t.deps);
    t.deps.audit.onHealthChange({
      type: 'http',
      id: 9,
      nodeId: node.id,
      name: 'web',
      domain: 'a.example.test',
      from: 'healthy',
      to: 'unhealthy',
      detail: 'connect ECONNREFUSED',
    });
    const [entry] = (await audit('?action=service.health')).data;
    expect(entry).toMatchObject({
      actor: { kind: 'system' },
      nodeId: node.id,
      domain: 'a.example.test',
      before: { health: 'healthy' },
      after: { health: 'unhealthy' },
    });
  });

  it('keeps every change of a burst (a node with 1,200 services going away) in order with what is recorded after it', async () => {
    const node = await insertNode(t.deps);
    for (let id = 1; id <= 1200; id++) {
      t.deps.audit.onHealthChange({
        type: 'http',
        id,
        nodeId: node.id,
        from: 'up',
        to: 'down',
        detail: 'connection refused',
      });
    }
    await t.deps.audit.record({ actor: { kind: 'system' }, action: 'node.offline', nodeId: node.id });
    const list = await audit(`?node=${node.id}&limit=100`);
    expect(list.total).toBe(1201);
    expect(list.data[0]).toMatchObject({ action: 'node.offline' });
    expect(list.data[1]).toMatchObject({ action: 'service.health', target: { id: 1200 } });
  });
});

describe('audit log: reading it', () => {
  async function seed(): Promise<{ a: number; b: number; times: string[] }> {
    const a = (await api<{ id: number }>('POST', '/api/nodes', { name: 'a' })).body.id;
    tick(60_000);
    const b = (await api<{ id: number }>('POST', '/api/nodes', { name: 'b' })).body.id;
    tick(60_000);
    await api('POST', `/api/services/${a}/http`, { name: 'web', domain: 'a.example.test', backendPort: 80 });
    tick(60_000);
    await api('POST', `/api/services/${b}/http`, { name: 'web', domain: 'b.example.test', backendPort: 80 });
    const times = (await audit('?limit=100')).data.map((entry) => entry.at);
    return { a, b, times };
  }

  it('filters by node, domain, actor, action (exact or family) and time range', async () => {
    const { a, b } = await seed();
    expect(actions(await audit(`?node=${a}`))).toEqual(['service.create', 'node.create']);
    expect((await audit('?domain=b.example.test')).data.map((entry) => entry.nodeId)).toEqual([b]);
    expect(actions(await audit('?actor=anonymous'))).toEqual([]);
    expect(actions(await audit('?actor=admin&action=node'))).toEqual(['node.create', 'node.create']);
    expect(actions(await audit('?action=service.create'))).toEqual(['service.create', 'service.create']);
    expect(actions(await audit('?action=auth'))).toEqual(['auth.sign-in']);
    const from = new Date(Date.parse('2030-01-01T00:00:00.000Z') + 60_000).toISOString();
    const to = new Date(Date.parse('2030-01-01T00:00:00.000Z') + 120_000).toISOString();
    const ranged = await audit(`?from=${from}&to=${to}`);
    expect(ranged.data.map((entry) => entry.at)).toEqual([to, from]);
    expect((await api('GET', '/api/audit?actor=root')).status).toBe(422);
    expect((await api('GET', '/api/audit?from=yesterday')).status).toBe(422);
  });

  it('pages newest first with the list shape', async () => {
    await seed();
    const all = await audit('?limit=100');
    const page2 = await audit('?limit=2&page=2');
    expect(page2).toMatchObject({ page: 2, limit: 2, total: all.total });
    expect(page2.data.map((entry) => entry.id)).toEqual(all.data.slice(2, 4).map((entry) => entry.id));
    expect(all.data.map((entry) => entry.id)).toEqual([...all.data.map((entry) => entry.id)].sort((x, y) => y - x));
  });

  it('streams new entries matching the filters as they are recorded', async () => {
    const a = await insertNode(t.deps);
    const b = await insertNode(t.deps);
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const stream = await connectSse(`${base}/api/audit/stream?node=${a.id}&token=${token}`);
    expect(stream.status).toBe(200);
    await api('PATCH', `/api/nodes/${b.id}`, { name: 'not-this-one' });
    await api('PATCH', `/api/nodes/${a.id}`, { name: 'this-one' });
    const [event] = await stream.waitForEvents(1);
    expect(event).toMatchObject({ action: 'node.update', nodeId: a.id, after: { name: 'this-one' } });
    stream.close();
  });

  it('has no call that edits or deletes an entry', async () => {
    const auditCalls = Object.values(operations).filter((operation) => operation.path.startsWith('/api/audit'));
    expect(new Set(auditCalls.map((operation) => operation.method))).toEqual(new Set(['GET']));
    const [entry] = (await audit()).data;
    for (const method of ['DELETE', 'PATCH', 'PUT', 'POST'] as const) {
      expect((await api(method, `/api/audit/${entry?.id}`)).status).toBe(404);
    }
  });
});

describe('audit log: retention', () => {
  it('prunes entries older than POSTERN_AUDIT_RETENTION_DAYS in batches and keeps the rest', async () => {
    await t.cleanup();
    t = await buildTestApp({ now: () => clock, env: { POSTERN_AUDIT_RETENTION_DAYS: '7' } });
    for (let i = 0; i < 5; i++) await t.deps.audit.record({ actor: { kind: 'system' }, action: 'test.old' });
    tick(6 * 86_400_000);
    await t.deps.audit.record({ actor: { kind: 'system' }, action: 'test.recent' });
    tick(1 * 86_400_000 + 1);
    expect(await pruneAuditLog(t.deps, 2)).toBe(5);
    const left = await t.db.select({ action: auditEvents.action }).from(auditEvents).all();
    expect(left.map((row) => row.action)).toEqual(['test.recent']);
  });
});
