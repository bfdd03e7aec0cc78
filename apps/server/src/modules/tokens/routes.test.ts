import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isWellFormedPat } from '@postern/contract';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';

let t: TestApp;
let auth: { authorization: string };
let clock: Date;
let nodeId: number;

beforeEach(async () => {
  clock = new Date('2026-06-01T12:00:00.000Z');
  t = await buildTestApp({ now: () => clock });
  auth = { authorization: `Bearer ${await t.login()}` };
  nodeId = (await api('POST', '/api/nodes', { name: 'laptop' })).json().id;
});
afterEach(() => t.cleanup());

function api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) {
  return t.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });
}

const agentCall = (token: string) =>
  t.app.inject({ url: '/api/agent/node', headers: { authorization: `Bearer ${token}` } });

describe('personal access tokens', () => {
  it('creates a token shown once, lists it without the secret, newest first, paged', async () => {
    const created = await api('POST', `/api/nodes/${nodeId}/pats`, {
      name: 'ci',
      expireAt: '2026-07-01T00:00:00.000Z',
    });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(Object.keys(body).sort()).toEqual(['expireAt', 'id', 'name', 'token']);
    expect(body).toMatchObject({ name: 'ci', expireAt: '2026-07-01T00:00:00.000Z' });
    expect(isWellFormedPat(body.token)).toBe(true);
    for (let i = 0; i < 5; i++) await api('POST', `/api/nodes/${nodeId}/pats`, { name: `t${i}` });
    const page = (await api('GET', `/api/nodes/${nodeId}/pats?page=1&limit=5`)).json();
    expect(page).toMatchObject({ page: 1, limit: 5, total: 7 }); // + the node's first token 'default'
    expect(page.data.map((p: { name: string }) => p.name)).toEqual(['t4', 't3', 't2', 't1', 't0']);
    expect(JSON.stringify(page)).not.toContain('pstn_');
    const second = (await api('GET', `/api/nodes/${nodeId}/pats?page=2&limit=5`)).json();
    expect(second.data.map((p: { name: string }) => p.name)).toEqual(['ci', 'default']);
    expect(second.data[0]).toEqual({
      id: body.id,
      name: 'ci',
      expireAt: '2026-07-01T00:00:00.000Z',
      revoked: false,
      lastUsedAt: null,
      created_at: clock.toISOString(),
    });
  });

  it('answers 422 for a missing name and an expiry in the past', async () => {
    const response = await api('POST', `/api/nodes/${nodeId}/pats`, { expireAt: '2026-05-01T00:00:00.000Z' });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors.body).toEqual([
      { field: 'name', message: 'This field is required', code: 'required' },
      { field: 'expireAt', message: 'This field must not be earlier than now', code: 'date_in_past' },
    ]);
  });

  it('refuses a revoked token at once with a clear message', async () => {
    const { id, token } = (await api('POST', `/api/nodes/${nodeId}/pats`, { name: 'cli' })).json();
    expect((await agentCall(token)).statusCode).toBe(200);
    const revoked = await api('PATCH', `/api/nodes/${nodeId}/pats/${id}/revoke`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ id, revoked: true });
    const refused = await agentCall(token);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ message: 'Token revoked', code: 'unauthorized', messageCode: 'token_revoked' });
  });

  it('refuses an expired token once its expiry has passed', async () => {
    const { token } = (
      await api('POST', `/api/nodes/${nodeId}/pats`, { name: 'short', expireAt: '2026-06-01T13:00:00.000Z' })
    ).json();
    expect((await agentCall(token)).statusCode).toBe(200);
    clock = new Date('2026-06-01T13:00:00.001Z');
    const refused = await agentCall(token);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ message: 'Token expired', code: 'unauthorized', messageCode: 'token_expired' });
  });

  it('deletes a token: it no longer authenticates', async () => {
    const { id, token } = (await api('POST', `/api/nodes/${nodeId}/pats`, { name: 'gone' })).json();
    expect((await api('DELETE', `/api/nodes/${nodeId}/pats/${id}`)).statusCode).toBe(204);
    expect((await agentCall(token)).json()).toEqual({
      message: 'Invalid token',
      code: 'unauthorized',
      messageCode: 'invalid_token',
    });
    expect((await api('DELETE', `/api/nodes/${nodeId}/pats/${id}`)).statusCode).toBe(404);
  });

  it("answers 404 for another node's token and for unknown nodes", async () => {
    const other = (await api('POST', '/api/nodes', { name: 'other' })).json();
    const { id } = (await api('POST', `/api/nodes/${other.id}/pats`, { name: 'theirs' })).json();
    expect((await api('PATCH', `/api/nodes/${nodeId}/pats/${id}/revoke`)).statusCode).toBe(404);
    expect((await api('DELETE', `/api/nodes/${nodeId}/pats/${id}`)).json()).toEqual({
      message: 'Access token not found',
      code: 'not_found',
      messageCode: 'access_token_not_found',
    });
    expect((await api('GET', '/api/nodes/999/pats')).statusCode).toBe(404);
  });

  it('needs a session', async () => {
    expect((await t.app.inject({ url: `/api/nodes/${nodeId}/pats` })).statusCode).toBe(401);
  });
});
