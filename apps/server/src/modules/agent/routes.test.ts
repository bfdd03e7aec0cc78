import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatPat, ruleMessages, type Domain, type ListResponse, describeMessage } from '@postern/contract';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { NODE_DISABLED_MESSAGE } from './authenticate-agent.js';
import { NODE_NETWORK_UNAVAILABLE } from '../../lib/network-guard.js';
import { TOKEN_NETWORKS_NOT_ALLOWED } from '../nodes/service.js';
import { NODE_APPLY_FAILED_MESSAGE, NODE_APPLY_LATER_MESSAGE } from './routes.js';

let t: TestApp;
let adminToken: string;
let node: { id: number; token: string; address: string };
let other: { id: number; token: string };

beforeEach(async () => {
  t = await buildTestApp();
  adminToken = await t.login();
  const headers = { authorization: `Bearer ${adminToken}` };
  node = (await t.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: 'laptop' } })).json();
  other = (await t.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: 'other' } })).json();
});
afterEach(() => t.cleanup());

const agent = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, token = node.token, payload?: object) =>
  t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  agent(method, url, adminToken, payload);
const web = (domain: string | undefined, pathLocation = '/') => ({
  name: 'web',
  backendPort: 80,
  pathLocation,
  ...(domain ? { domain } : {}),
});

async function ownerOf(domain: string): Promise<number | null | undefined> {
  const list = (await admin('GET', `/api/domains?search=${domain}`)).json<ListResponse<Domain>>();
  return list.data.find((d) => d.domain === domain)?.ownerNodeId;
}

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

  it("sets the subnets of a gateway node whose operator allowed it: private, narrow, no other tenant's facts in refusals", async () => {
    const url = '/api/agent/node/gateway-networks';
    const notGateway = await agent('PATCH', url, node.token, { gatewayNetworks: ['192.168.1.0/24'] });
    expect(notGateway.statusCode).toBe(400);
    expect(notGateway.json().message).toMatch(/not a gateway/);
    await admin('PATCH', `/api/nodes/${other.id}`, { isGateway: true, gatewayNetwork: '192.168.60.0/24' });
    await admin('PATCH', `/api/nodes/${node.id}`, { isGateway: true, gatewayNetwork: '192.168.1.0/24' });
    const notAllowed = await agent('PATCH', url, node.token, { gatewayNetworks: ['192.168.1.0/24', '10.20.0.0/24'] });
    expect(notAllowed.statusCode).toBe(403);
    expect(notAllowed.json()).toEqual({
      code: 'forbidden',
      message: TOKEN_NETWORKS_NOT_ALLOWED,
      messageCode: 'token_networks_not_allowed',
    });
    await admin('PATCH', `/api/nodes/${node.id}`, { allowTokenNetworks: true });
    const set = await agent('PATCH', url, node.token, { gatewayNetworks: ['192.168.1.0/24', '10.20.0.0/24'] });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({
      id: node.id,
      gatewayNetwork: '192.168.1.0/24',
      gatewayNetworks: ['192.168.1.0/24', '10.20.0.0/24'],
      allowTokenNetworks: true,
      applyError: null,
    });
    expect(t.fakeDataPlane.lastState?.peers.find((p) => p.nodeId === node.id)).toMatchObject({
      allowedIps: [`${node.address}/32`, '192.168.1.0/24', '10.20.0.0/24'],
      networksByToken: true,
    });
    const policy =
      "A node may route private networks only (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10), each /16 or narrower; ask the gateway's operator for others";
    // Each refusal names the subnet (params.entry) before a coded reason: the console says both in its language.
    const private_ = { networks: '10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10', prefix: 16 };
    const cases: [string, string, string, Record<string, string | number>][] = [
      ['8.8.8.0/24', `8.8.8.0/24: ${policy}`, 'network_not_private', private_],
      ['172.0.0.0/8', `172.0.0.0/8: ${policy}`, 'network_not_private', private_],
      ['10.0.0.0/12', `10.0.0.0/12: ${policy}`, 'network_not_private', private_],
      ['192.168.60.0/25', `192.168.60.0/25: ${NODE_NETWORK_UNAVAILABLE}`, 'network_unavailable', {}],
    ];
    for (const [network, message, code, params] of cases) {
      const refused = await agent('PATCH', url, node.token, { gatewayNetworks: ['192.168.1.0/24', network] });
      expect(refused.statusCode, network).toBe(422);
      expect(refused.json().errors.body, network).toEqual([
        { field: 'gatewayNetworks', message, code, params: { ...params, entry: network } },
      ]);
      expect(JSON.stringify(refused.json())).not.toMatch(/\\"other\\"|192\.168\.60\.0\/24/);
    }
    expect((await admin('GET', `/api/nodes/${node.id}`)).json().gatewayNetworks).toEqual([
      '192.168.1.0/24',
      '10.20.0.0/24',
    ]);
  });

  it('points the tunnel health URL at the configured subnet and HTTP port', async () => {
    await t.cleanup();
    t = await buildTestApp({ env: { POSTERN_VPN_SUBNET: '10.9.8.0/24', POSTERN_HTTP_PORT: '8080' } });
    const headers = { authorization: `Bearer ${await t.login()}` };
    const created = (await t.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: 'n' } })).json<{
      token: string;
    }>();
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
      const response = await t.app.inject({
        url: '/api/agent/node',
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ message, code: 'unauthorized', messageCode: describeMessage(message)?.code });
    }
  });

  it('exposes, lists, disables, enables and deletes my services, scoped to my node', async () => {
    const http = await agent('POST', '/api/agent/services/http', node.token, {
      name: 'web',
      domain: 'laptop.example.test',
      pathLocation: '/app',
      backendPort: 8080,
    });
    expect(http.statusCode).toBe(201);
    expect(http.json()).toMatchObject({
      nodeId: node.id,
      name: 'web',
      pathLocation: '/app',
      publicAccess: 'https://laptop.example.test/app',
    });
    const tcp = await agent('POST', '/api/agent/services/tcp', node.token, { name: 'mqtt', backendPort: 1883 });
    expect(tcp.statusCode).toBe(201);
    expect(tcp.json()).toMatchObject({ nodeId: node.id, proto: 'tcp' });

    const list = (await agent('GET', '/api/agent/services/http')).json();
    expect(list).toMatchObject({ total: 1, page: 1 });
    expect((await agent('GET', '/api/agent/services/http', other.token)).json().total).toBe(0);

    const id = http.json().id as number;
    expect((await agent('PATCH', `/api/agent/services/http/${id}/disable`)).json()).toMatchObject({
      id,
      enabled: false,
    });
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
      { field: 'name', message: 'This field is required', code: 'required' },
      { field: 'backendPort', message: 'This field is required', code: 'required' },
    ]);
  });

  it("refuses every call of a disabled node's token with a clear 403, and works again once it is connected", async () => {
    await admin('PATCH', `/api/nodes/${node.id}/disable`);
    const calls: ['GET' | 'POST' | 'PATCH' | 'DELETE', string, object?][] = [
      ['GET', '/api/agent/node'],
      ['GET', '/api/agent/config'],
      ['GET', '/api/agent/services/http'],
      ['POST', '/api/agent/services/http', web('laptop.example.test')],
      ['POST', '/api/agent/services/tcp', { name: 'mqtt', backendPort: 1883 }],
      ['PATCH', '/api/agent/services/http/1/enable'],
      ['PATCH', '/api/agent/services/http/1/disable'],
      ['DELETE', '/api/agent/services/http/1'],
    ];
    for (const [method, url, payload] of calls) {
      const response = await agent(method, url, node.token, payload);
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json(), `${method} ${url}`).toEqual({
        message: NODE_DISABLED_MESSAGE,
        code: 'forbidden',
        messageCode: 'node_disabled',
      });
    }
    expect((await admin('GET', '/api/services/http')).json().total).toBe(0);
    await admin('PATCH', `/api/nodes/${node.id}/enable`);
    expect((await agent('GET', '/api/agent/config')).statusCode).toBe(200);
  });
});

describe('agent API: domains', () => {
  it("publishes on a new domain, which becomes the node's own", async () => {
    const created = await agent('POST', '/api/agent/services/http', node.token, web('Fresh.Example.test'));
    expect(created.statusCode).toBe(201);
    expect(await ownerOf('fresh.example.test')).toBe(node.id);
    // And keeps publishing there: another path, a TCP service naming it.
    expect(
      (await agent('POST', '/api/agent/services/http', node.token, web('fresh.example.test', '/two'))).statusCode,
    ).toBe(201);
    expect(
      (
        await agent('POST', '/api/agent/services/tcp', node.token, {
          name: 'ssh',
          domain: 'fresh.example.test',
          backendPort: 22,
        })
      ).statusCode,
    ).toBe(201);
  });

  it("refuses the admin's and other nodes' domains with one message that names no owner", async () => {
    await admin('POST', '/api/domains', { domain: 'admin.example.test' });
    await agent('POST', '/api/agent/services/http', other.token, web('other.example.test'));
    for (const domain of ['admin.example.test', 'other.example.test']) {
      for (const [url, payload] of [
        ['/api/agent/services/http', web(domain, '/mine')],
        ['/api/agent/services/tcp', { name: 't', domain, backendPort: 22 }],
      ] as const) {
        const refused = await agent('POST', url, node.token, payload);
        expect(refused.statusCode, `${url} ${domain}`).toBe(422);
        expect(refused.json(), `${url} ${domain}`).toEqual({
          message: 'Validation failed',
          code: 'validation',
          messageCode: 'validation_failed',
          errors: { body: [{ field: 'domain', message: ruleMessages.domainNotYours, code: 'domain_not_yours' }] },
        });
      }
    }
    // A taken path on someone else's domain is still "not yours", not "taken": nothing is learnt about its routes.
    expect(
      (await agent('POST', '/api/agent/services/http', node.token, web('other.example.test', '/'))).json().errors
        .body[0].field,
    ).toBe('domain');
    expect(await ownerOf('other.example.test')).toBe(other.id);
  });

  it('publishes on a domain the admin assigned to the node, and no longer once it is taken back', async () => {
    const domain = (
      await admin('POST', '/api/domains', { domain: 'assigned.example.test', ownerNodeId: node.id })
    ).json<Domain>();
    expect(domain).toMatchObject({ ownerNodeId: node.id, ownerNodeName: 'laptop' });
    expect((await agent('POST', '/api/agent/services/http', node.token, web('assigned.example.test'))).statusCode).toBe(
      201,
    );
    await admin('PATCH', `/api/domains/${domain.id}`, { ownerNodeId: null });
    expect(
      (await agent('POST', '/api/agent/services/http', node.token, web('assigned.example.test', '/more'))).statusCode,
    ).toBe(422);
  });

  it('refuses a web service without a domain, telling the CLI user to pass --domain', async () => {
    const refused = await agent('POST', '/api/agent/services/http', node.token, web(undefined, '/shop'));
    expect(refused.statusCode).toBe(422);
    expect(refused.json().errors.body).toEqual([
      { field: 'domain', message: ruleMessages.domainRequiredForNode, code: 'domain_required_for_node' },
    ]);
    expect(ruleMessages.domainRequiredForNode).toContain('--domain');
    // TCP services need no domain: their port is theirs alone.
    expect(
      (await agent('POST', '/api/agent/services/tcp', node.token, { name: 'mqtt', backendPort: 1883 })).statusCode,
    ).toBe(201);
  });

  it("refuses the console's host name and reserved paths", async () => {
    const consoleHost = await agent('POST', '/api/agent/services/http', node.token, web('gateway.test'));
    expect(consoleHost.json().errors.body).toEqual([
      { field: 'domain', message: ruleMessages.consoleHost, code: 'console_host' },
    ]);
    const acme = await agent(
      'POST',
      '/api/agent/services/http',
      node.token,
      web('laptop.example.test', '/.well-known/acme-challenge'),
    );
    expect(acme.json().errors.body[0]).toMatchObject({ field: 'pathLocation' });
  });

  it('has no way to create or change a domain except by publishing on a new one', async () => {
    expect((await agent('POST', '/api/domains', node.token, { domain: 'direct.example.test' })).statusCode).toBe(401);
    expect((await agent('PATCH', '/api/domains/1', node.token, { ownerNodeId: node.id })).statusCode).toBe(401);
    expect(
      (await agent('PATCH', `/api/nodes/${node.id}`, node.token, { isGateway: true, gatewayNetwork: '192.168.9.0/24' }))
        .statusCode,
    ).toBe(401);
    expect((await agent('POST', `/api/services/${other.id}/http`, node.token, web('x.example.test'))).statusCode).toBe(
      401,
    );
  });
});

describe('agent API: quotas', () => {
  beforeEach(async () => {
    await t.cleanup();
    t = await buildTestApp({
      env: { POSTERN_NODE_MAX_SERVICES: '3', POSTERN_NODE_MAX_PORTS: '2', POSTERN_NODE_MAX_DOMAINS: '1' },
    });
    adminToken = await t.login();
    node = (await admin('POST', '/api/nodes', { name: 'laptop' })).json();
  });

  it('caps public ports, services and domains per node; the admin is not bound', async () => {
    const tcp = (name: string) => agent('POST', '/api/agent/services/tcp', node.token, { name, backendPort: 22 });
    expect((await tcp('a')).statusCode).toBe(201);
    expect((await tcp('b')).statusCode).toBe(201);
    const ports = await tcp('c');
    expect(ports.statusCode).toBe(400);
    expect(ports.json()).toEqual({
      message:
        'This node has reached its limit of 2 public TCP/UDP ports (POSTERN_NODE_MAX_PORTS on the gateway): delete one of its TCP/UDP services first',
      code: 'bad_request',
      messageCode: 'quota_ports',
      params: { limit: 2 },
    });

    expect((await agent('POST', '/api/agent/services/http', node.token, web('one.example.test'))).statusCode).toBe(201);
    const domains = await agent('POST', '/api/agent/services/http', node.token, web('two.example.test'));
    // Services are checked first: 3 of 3 used.
    expect(domains.json().message).toMatch(/limit of 3 services \(POSTERN_NODE_MAX_SERVICES/);
    await agent(
      'DELETE',
      `/api/agent/services/tcp/${(await agent('GET', '/api/agent/services/tcp')).json().data[0].id}`,
    );
    const secondDomain = await agent('POST', '/api/agent/services/http', node.token, web('two.example.test'));
    expect(secondDomain.statusCode).toBe(400);
    expect(secondDomain.json().message).toMatch(/limit of 1 domains \(POSTERN_NODE_MAX_DOMAINS/);
    expect(
      (await agent('POST', '/api/agent/services/http', node.token, web('one.example.test', '/more'))).statusCode,
    ).toBe(201);

    // The admin adds what it likes to the node; the node's next creation is refused.
    expect(
      (await admin('POST', `/api/services/${node.id}/tcp`, { name: 'admin-made', backendPort: 23 })).statusCode,
    ).toBe(201);
    expect((await admin('POST', `/api/services/${node.id}/http`, web('admin.example.test'))).statusCode).toBe(201);
    expect((await tcp('d')).statusCode).toBe(400);
  });
});

describe('agent API: error texts', () => {
  it("never name another node's service", async () => {
    const domain = (
      await admin('POST', '/api/domains', { domain: 'shared.example.test', ownerNodeId: node.id })
    ).json<Domain>();
    expect(domain.ownerNodeId).toBe(node.id);
    // The admin may place another node's service on the node's domain, and a port for it.
    await admin('POST', `/api/services/${other.id}/http`, {
      name: 'secret-svc',
      domain: 'shared.example.test',
      pathLocation: '/x',
    });
    const port = (await admin('POST', `/api/services/${other.id}/tcp`, { name: 'secret-port', backendPort: 22 })).json()
      .port as number;

    const route = await agent('POST', '/api/agent/services/http', node.token, web('shared.example.test', '/x'));
    expect(route.json().errors.body).toEqual([
      {
        field: 'pathLocation',
        message: 'The path /x on shared.example.test is already used',
        code: 'path_in_use',
        params: { path: '/x', domain: 'shared.example.test' },
      },
    ]);
    // Nor the path it differs from only in letter case.
    const recased = await agent('POST', '/api/agent/services/http', node.token, web('shared.example.test', '/X/y'));
    expect(recased.json().errors.body).toEqual([
      {
        field: 'pathLocation',
        message:
          'The path /X/y on shared.example.test differs only in letter case from a path already used there: the gateway cannot tell such paths apart',
        code: 'path_case_clash',
        params: { path: '/X/y', domain: 'shared.example.test' },
      },
    ]);
    const taken = await agent('POST', '/api/agent/services/tcp', node.token, { name: 't', port, backendPort: 22 });
    expect(taken.json().errors.body).toEqual([
      {
        field: 'port',
        message: `Port ${port}/tcp is already used`,
        code: 'port_in_use',
        params: { port, proto: 'tcp' },
      },
    ]);
    // The admin is told who holds them.
    const adminRoute = await admin('POST', `/api/services/${node.id}/http`, web('shared.example.test', '/x'));
    expect(adminRoute.json().errors.body[0].message).toContain('secret-svc');
  });

  it("replace the data plane's reason by a fixed text, in errors and in applyError", async () => {
    t.fakeDataPlane.proxy.streamFailures.set(
      'tcp-30055',
      'port 30055/tcp is in use by another program (other-tenant-daemon) on the gateway',
    );
    const rejected = await agent('POST', '/api/agent/services/tcp', node.token, {
      name: 'db',
      port: 30055,
      backendPort: 5432,
    });
    expect(rejected.statusCode).toBe(400);
    expect(rejected.json()).toEqual({ message: NODE_APPLY_FAILED_MESSAGE, code: 'dataplane_rejected' });
    const listed = (await agent('GET', '/api/agent/services/tcp')).json<ListResponse<{ applyError: string | null }>>();
    expect(listed.data[0]?.applyError).toBe(NODE_APPLY_FAILED_MESSAGE);
    // The operator sees the reason.
    const asAdmin = (await admin('GET', `/api/services/${node.id}/tcp`)).json<
      ListResponse<{ applyError: string | null }>
    >();
    expect(asAdmin.data[0]?.applyError).toContain('other-tenant');
    // A gateway down as a whole: saved, and the node is not told why.
    t.fakeDataPlane.failNextApply('nginx: [emerg] bind() to 0.0.0.0:443 failed (other-tenant.example.conf)');
    const later = await agent('POST', '/api/agent/services/http', node.token, web('laptop.example.test'));
    expect(later.statusCode).toBe(503);
    expect(later.json()).toEqual({ message: NODE_APPLY_LATER_MESSAGE, code: 'dataplane_unavailable' });
  });
});
