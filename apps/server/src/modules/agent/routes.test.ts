import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatPat } from '@postern/contract';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';

let t: TestApp;
let node: { id: number; token: string; address: string };
let other: { id: number; token: string };

beforeEach(async () => {
  t = await buildTestApp();
  const headers = { authorization: `Bearer ${await t.login()}` };
  node = (await t.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: 'laptop' } })).json();
  other = (await t.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: 'other' } })).json();
});
afterEach(() => t.cleanup());

const agent = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, token = node.token, payload?: object) =>
  t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });

describe('agent API', () => {
  it('reads my node and my WireGuard config', async () => {
    const me = await agent('GET', '/api/agent/node');
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ id: node.id, name: 'laptop', address: node.address });
    const config = await agent('GET', '/api/agent/config');
    expect(config.statusCode).toBe(200);
    expect(config.json().node.id).toBe(node.id);
    expect(config.json().config).toContain(`Address = ${node.address}/32`);
    // The one thing a node may reach on the gateway's tunnel address: its first host, on nginx's HTTP port.
    expect(config.json().tunnelHealthUrl).toBe('http://10.44.0.1:80/_postern/tunnel-health');
  });

  it('points the tunnel health URL at the configured subnet and HTTP port', async () => {
    await t.cleanup();
    t = await buildTestApp({ env: { POSTERN_VPN_SUBNET: '10.9.8.0/24', POSTERN_HTTP_PORT: '8080' } });
    const headers = { authorization: `Bearer ${await t.login()}` };
    const created = (await t.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: 'n' } })).json<{ token: string }>();
    const config = await agent('GET', '/api/agent/config', created.token);
    expect(config.json().tunnelHealthUrl).toBe('http://10.9.8.1:8080/_postern/tunnel-health');
  });

  it('refuses missing, malformed, unknown and session tokens', async () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'Access token required'],
      ['pstn_garbage', 'Invalid token'],
      [formatPat(new Uint8Array(36)), 'Invalid token'],
      [await t.login(), 'Invalid token'],
    ];
    for (const [token, message] of cases) {
      const response = await t.app.inject({ url: '/api/agent/node', headers: token ? { authorization: `Bearer ${token}` } : {} });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ message });
    }
  });

  it('exposes, lists, disables, enables and deletes my services, scoped to my node', async () => {
    const http = await agent('POST', '/api/agent/services/http', node.token, { name: 'web', pathLocation: '/app', backendPort: 8080 });
    expect(http.statusCode).toBe(201);
    expect(http.json()).toMatchObject({ nodeId: node.id, name: 'web', pathLocation: '/app' });
    const tcp = await agent('POST', '/api/agent/services/tcp', node.token, { name: 'mqtt', backendPort: 1883 });
    expect(tcp.statusCode).toBe(201);
    expect(tcp.json()).toMatchObject({ nodeId: node.id, proto: 'tcp' });

    const list = (await agent('GET', '/api/agent/services/http')).json();
    expect(list).toMatchObject({ total: 1, page: 1 });
    expect((await agent('GET', '/api/agent/services/http', other.token)).json().total).toBe(0);

    const id = http.json().id as number;
    expect((await agent('PATCH', `/api/agent/services/http/${id}/disable`)).json()).toMatchObject({ id, enabled: false });
    expect((await agent('PATCH', `/api/agent/services/http/${id}/enable`)).json()).toMatchObject({ id, enabled: true });
    // Another node's token cannot touch it.
    expect((await agent('PATCH', `/api/agent/services/http/${id}/disable`, other.token)).statusCode).toBe(404);
    expect((await agent('DELETE', `/api/agent/services/http/${id}`, other.token)).statusCode).toBe(404);
    expect((await agent('DELETE', `/api/agent/services/http/${id}`)).statusCode).toBe(204);
    expect((await agent('GET', '/api/agent/services/http')).json().total).toBe(0);
  });

  it('answers 422 with the spec messages', async () => {
    const response = await agent('POST', '/api/agent/services/tcp', node.token, {});
    expect(response.statusCode).toBe(422);
    expect(response.json().errors.body).toEqual([
      { field: 'name', message: 'This field is required' },
      { field: 'backendPort', message: 'This field is required' },
    ]);
  });
});
