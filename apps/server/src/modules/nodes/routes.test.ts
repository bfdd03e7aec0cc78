import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { isWellFormedPat, NodeSchema, ruleMessages, describeMessage } from '@postern/contract';
import { nodes } from '../../db/schema.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { listNodeRows, searchNodeRows } from './repository.js';

let t: TestApp;
let auth: { authorization: string };

beforeEach(async () => {
  t = await buildTestApp();
  auth = { authorization: `Bearer ${await t.login()}` };
});
afterEach(() => t.cleanup());

const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });

async function createNode(payload: object = { name: 'laptop' }) {
  const response = await api('POST', '/api/nodes', payload);
  expect(response.statusCode).toBe(201);
  return response.json<{ id: number; address: string; token: string; name: string }>();
}

const LOCAL_ID = 1;

describe('POST /api/nodes', () => {
  it('allocates the next free address, returns a first access token once, and never key material', async () => {
    const node = await createNode({ name: 'laptop', allowInternet: true });
    expect(node).toMatchObject({
      name: 'laptop',
      address: '10.44.0.2',
      allowInternet: true,
      isGateway: false,
      isLocal: false,
      enabled: true,
      status: 'offline',
    });
    expect(isWellFormedPat(node.token)).toBe(true);
    expect(JSON.stringify(node)).not.toMatch(/privateKey|publicKey|preshared/i);
    expect((await createNode({ name: 'second' })).address).toBe('10.44.0.3');
    const fetched = await api('GET', `/api/nodes/${node.id}`);
    expect(fetched.json()).not.toHaveProperty('token');
    expect(t.fakeDataPlane.lastState?.peers.map((p) => p.address)).toEqual(['10.44.0.2', '10.44.0.3']);
  });

  it('takes a free requested address and refuses a taken, reserved or outside one on the address field', async () => {
    expect((await createNode({ name: 'fixed', address: '10.44.3.7' })).address).toBe('10.44.3.7');
    const cases = [
      ['10.44.3.7', 'This address is already in use'],
      ['10.44.0.1', 'This address is already in use'],
      ['10.44.255.255', 'This address is reserved (network or broadcast address)'],
      ['192.168.1.5', 'This address must lie inside the VPN subnet 10.44.0.0/16'],
      ['10.44.0', 'This field must be a valid IPv4 address'],
    ];
    for (const [address, message] of cases) {
      const response = await api('POST', '/api/nodes', { name: 'x', address });
      expect(response.statusCode, address).toBe(422);
      expect(response.json().errors.body, address).toEqual([
        { field: 'address', message, ...describeMessage(message ?? '') },
      ]);
    }
  });

  it('answers 422 with the spec messages', async () => {
    const missing = await api('POST', '/api/nodes', {});
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toEqual({
      message: 'Validation failed',
      code: 'validation',
      messageCode: 'validation_failed',
      errors: { body: [{ field: 'name', message: 'This field is required', code: 'required' }] },
    });
    const gateway = await api('POST', '/api/nodes', { name: 'gw', isGateway: true });
    expect(gateway.json().errors.body).toEqual([
      { field: 'gatewayNetwork', message: 'This field is required', code: 'required' },
    ]);
    const overlap = await api('POST', '/api/nodes', { name: 'gw', isGateway: true, gatewayNetwork: '10.44.8.0/24' });
    expect(overlap.json().errors.body).toEqual([
      {
        field: 'gatewayNetwork',
        message: 'This network must not overlap the VPN subnet 10.44.0.0/16',
        code: 'network_vpn_subnet',
        params: { subnet: '10.44.0.0/16' },
      },
    ]);
    const notGateway = await api('POST', '/api/nodes', {
      name: 'n',
      isGateway: false,
      gatewayNetwork: '192.168.0.0/24',
    });
    expect(notGateway.json().errors.body).toEqual([
      {
        field: 'gatewayNetwork',
        message: 'This field must be empty unless the node is a gateway',
        code: 'gateway_network_not_allowed',
      },
    ]);
  });

  it("refuses a gateway network that overlaps another gateway's", async () => {
    await createNode({ name: 'office', isGateway: true, gatewayNetwork: '192.168.0.0/16' });
    const response = await api('POST', '/api/nodes', {
      name: 'lab',
      isGateway: true,
      gatewayNetwork: '192.168.4.0/24',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors.body).toEqual([
      {
        field: 'gatewayNetwork',
        message: 'This network overlaps 192.168.0.0/16 of the gateway "office"',
        code: 'network_of_gateway_node',
        params: { other: '192.168.0.0/16', name: 'office' },
      },
    ]);
    expect((await createNode({ name: 'lab', isGateway: true, gatewayNetwork: '172.16.0.0/24' })).name).toBe('lab');
  });

  it('still hands out the new node and its one-time token when the data plane is down', async () => {
    t.fakeDataPlane.failNextApply('WireGuard: wireguard-go did not create postern0');
    const response = await api('POST', '/api/nodes', { name: 'kept' });
    expect(response.statusCode).toBe(201);
    expect(response.json().token).toMatch(/^\S{20,}$/);
  });

  it('answers an edit the data plane cannot apply with 400 naming the problem, and 503 when it is down', async () => {
    const node = await createNode({ name: 'office', isGateway: true, gatewayNetwork: '192.168.77.0/24' });
    t.fakeDataPlane.wireguard.routeFailures.set(
      node.id,
      'cannot route 192.168.77.0/24 into the tunnel: the gateway host already routes this network',
    );
    const rejected = await api('PATCH', `/api/nodes/${node.id}`, { name: 'office-2' });
    expect(rejected.statusCode).toBe(400);
    expect(rejected.json()).toEqual({
      message: 'cannot route 192.168.77.0/24 into the tunnel: the gateway host already routes this network',
      code: 'dataplane_rejected',
    });
    t.fakeDataPlane.wireguard.routeFailures.clear();
    t.fakeDataPlane.failNextApply('nginx: the master is not running');
    const down = await api('PATCH', `/api/nodes/${node.id}`, { name: 'office-3' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toEqual({
      message: 'Saved, but the gateway could not apply it yet: nginx: the master is not running',
      code: 'dataplane_unavailable',
      messageCode: 'saved_not_applied',
      params: { reason: 'nginx: the master is not running' },
    });
  });

  it('refuses networks the gateway host needs: special ranges, its own routes, the internet address of any node', async () => {
    t.fakeDataPlane.setHostNetworks(['192.0.2.0/24', '172.17.0.0/16']);
    const laptop = await createNode({ name: 'laptop' });
    const publicKey =
      (await t.db.select({ key: nodes.publicKey }).from(nodes).where(eq(nodes.id, laptop.id)).get())?.key ?? '';
    t.fakeDataPlane.status.setStatus(publicKey, {
      status: 'online',
      clientIp: '198.51.100.7',
      latestHandshakeTimestamp: null,
      transferRx: 0,
      transferTx: 0,
    });
    const cases = [
      ['127.0.0.0/8', 'This network must not overlap loopback (127.0.0.0/8)'],
      ['127.5.0.0/16', 'This network must not overlap loopback (127.0.0.0/8)'],
      ['169.254.0.0/16', 'This network must not overlap link-local addresses (169.254.0.0/16)'],
      ['224.0.0.0/8', 'This network must not overlap multicast (224.0.0.0/4)'],
      ['0.0.0.0/8', 'This network must not overlap "this host" addresses (0.0.0.0/8)'],
      ['0.0.0.0/0', 'This network must not overlap "this host" addresses (0.0.0.0/8)'],
      ['255.255.255.255/32', 'This network must not overlap reserved and broadcast addresses (240.0.0.0/4)'],
      [
        '192.0.2.0/25',
        'This network overlaps 192.0.2.0/24, a network the gateway host reaches directly (its own route)',
      ],
      [
        '172.16.0.0/12',
        'This network overlaps 172.17.0.0/16, a network the gateway host reaches directly (its own route)',
      ],
      ['198.51.100.0/24', 'This network contains 198.51.100.7, the address the node "laptop" connects from'],
    ];
    for (const [gatewayNetwork, message] of cases) {
      const response = await api('POST', '/api/nodes', { name: 'gw', isGateway: true, gatewayNetwork });
      expect(response.statusCode, gatewayNetwork).toBe(422);
      expect(response.json().errors.body, gatewayNetwork).toEqual([
        { field: 'gatewayNetwork', message, ...describeMessage(message ?? '') },
      ]);
    }
    expect((await createNode({ name: 'gw', isGateway: true, gatewayNetwork: '192.168.10.0/24' })).name).toBe('gw');
  });

  it('checks a network set or changed by an edit, not one that stays', async () => {
    const gw = await createNode({ name: 'gw', isGateway: true, gatewayNetwork: '192.168.10.0/24' });
    const laptop = await createNode({ name: 'laptop' });
    t.fakeDataPlane.setHostNetworks(['192.168.10.0/24', '10.1.0.0/16']);
    expect((await api('PATCH', `/api/nodes/${gw.id}`, { name: 'renamed' })).statusCode).toBe(200);
    const moved = await api('PATCH', `/api/nodes/${gw.id}`, { gatewayNetwork: '10.1.2.0/24' });
    expect(moved.json().errors.body).toEqual([
      {
        field: 'gatewayNetwork',
        message: 'This network overlaps 10.1.0.0/16, a network the gateway host reaches directly (its own route)',
        code: 'network_host_route',
        params: { route: '10.1.0.0/16' },
      },
    ]);
    const promoted = await api('PATCH', `/api/nodes/${laptop.id}`, { isGateway: true, gatewayNetwork: '127.0.0.0/8' });
    expect(promoted.statusCode).toBe(422);
    expect((await api('GET', `/api/nodes/${laptop.id}`)).json()).toMatchObject({
      isGateway: false,
      gatewayNetwork: null,
    });
  });

  it('routes several subnets of one gateway, the first being the spec field', async () => {
    const gw = await createNode({
      name: 'home',
      isGateway: true,
      gatewayNetworks: ['192.168.1.0/24', '192.168.50.0/24'],
    });
    expect(gw).toMatchObject({
      gatewayNetwork: '192.168.1.0/24',
      gatewayNetworks: ['192.168.1.0/24', '192.168.50.0/24'],
    });
    const peer = t.fakeDataPlane.lastState?.peers.find((p) => p.nodeId === gw.id);
    expect(peer?.allowedIps).toEqual([`${gw.address}/32`, '192.168.1.0/24', '192.168.50.0/24']);
    // A spec client knows one field: creating sets one subnet, and an edit of it keeps the others.
    const single = await createNode({ name: 'office', isGateway: true, gatewayNetwork: '172.16.0.0/24' });
    expect(single).toMatchObject({ gatewayNetwork: '172.16.0.0/24', gatewayNetworks: ['172.16.0.0/24'] });
    const specEdit = await api('PATCH', `/api/nodes/${gw.id}`, {
      name: 'home',
      address: gw.address,
      allowInternet: false,
      isGateway: true,
      gatewayNetwork: '192.168.2.0/24',
    });
    expect(specEdit.statusCode).toBe(200);
    expect(specEdit.json()).toMatchObject({
      gatewayNetwork: '192.168.2.0/24',
      gatewayNetworks: ['192.168.2.0/24', '192.168.50.0/24'],
    });
    const replaced = await api('PATCH', `/api/nodes/${gw.id}`, { gatewayNetworks: ['192.168.3.0/24'] });
    expect(replaced.json()).toMatchObject({ gatewayNetwork: '192.168.3.0/24', gatewayNetworks: ['192.168.3.0/24'] });
    const plain = await api('PATCH', `/api/nodes/${gw.id}`, { isGateway: false });
    expect(plain.json()).toMatchObject({ gatewayNetwork: null, gatewayNetworks: [] });
    expect(t.fakeDataPlane.lastState?.peers.find((p) => p.nodeId === gw.id)?.allowedIps).toEqual([`${gw.address}/32`]);
  });

  it('checks every subnet of the list like the single one and names the one refused', async () => {
    await createNode({ name: 'office', isGateway: true, gatewayNetworks: ['172.16.0.0/24', '172.16.9.0/24'] });
    t.fakeDataPlane.setHostNetworks(['10.1.0.0/16']);
    const cases: [string[], string, string][] = [
      [
        ['192.168.1.0/24', '10.44.3.0/24'],
        'gatewayNetworks',
        '10.44.3.0/24: This network must not overlap the VPN subnet 10.44.0.0/16',
      ],
      [
        ['192.168.1.0/24', '172.16.9.128/25'],
        'gatewayNetworks',
        '172.16.9.128/25: This network overlaps 172.16.9.0/24 of the gateway "office"',
      ],
      [
        ['192.168.1.0/24', '127.0.0.0/8'],
        'gatewayNetworks',
        '127.0.0.0/8: This network must not overlap loopback (127.0.0.0/8)',
      ],
      [
        ['192.168.1.0/24', '10.1.4.0/24'],
        'gatewayNetworks',
        '10.1.4.0/24: This network overlaps 10.1.0.0/16, a network the gateway host reaches directly (its own route)',
      ],
      [
        ['192.168.0.0/16', '192.168.7.0/24'],
        'gatewayNetworks',
        '192.168.7.0/24 overlaps 192.168.0.0/16, another network of this node',
      ],
      [['192.168.1.0/24', 'nope'], 'gatewayNetworks', 'This field must be a valid IP address with a CIDR'],
    ];
    for (const [gatewayNetworks, field, message] of cases) {
      const response = await api('POST', '/api/nodes', { name: 'gw', isGateway: true, gatewayNetworks });
      expect(response.statusCode, gatewayNetworks.join()).toBe(422);
      expect(response.json().errors.body, gatewayNetworks.join()).toEqual([
        { field, message, ...describeMessage(message) },
      ]);
    }
    const disagree = await api('POST', '/api/nodes', {
      name: 'gw',
      isGateway: true,
      gatewayNetwork: '192.168.9.0/24',
      gatewayNetworks: ['192.168.1.0/24'],
    });
    expect(disagree.json().errors.body).toEqual([
      {
        field: 'gatewayNetwork',
        message: 'This field must be the first of gatewayNetworks',
        code: 'gateway_network_not_first',
      },
    ]);
    const notGateway = await api('POST', '/api/nodes', {
      name: 'n',
      gatewayNetworks: ['192.168.1.0/24'],
      isGateway: false,
    });
    expect(notGateway.json().errors.body).toEqual([
      {
        field: 'gatewayNetworks',
        message: 'This field must be empty unless the node is a gateway',
        code: 'gateway_network_not_allowed',
      },
    ]);
    // A spec client's edit of the first subnet is checked against the node's other subnets too.
    const gw = await createNode({
      name: 'home',
      isGateway: true,
      gatewayNetworks: ['192.168.1.0/24', '192.168.50.0/24'],
    });
    const clash = await api('PATCH', `/api/nodes/${gw.id}`, { gatewayNetwork: '192.168.0.0/16' });
    expect(clash.json().errors.body).toEqual([
      {
        field: 'gatewayNetwork',
        message: '192.168.50.0/24 overlaps 192.168.0.0/16, another network of this node',
        code: 'networks_overlap',
        params: { network: '192.168.50.0/24', other: '192.168.0.0/16' },
      },
    ]);
    expect((await api('GET', `/api/nodes/${gw.id}`)).json()).toMatchObject({
      gatewayNetworks: ['192.168.1.0/24', '192.168.50.0/24'],
    });
  });
});

describe('GET /api/nodes', () => {
  it('pages by id with the local node first, filters by type and reports the total', async () => {
    await createNode({ name: 'gw', isGateway: true, gatewayNetwork: '192.168.10.0/24' });
    for (let i = 0; i < 11; i++) await createNode({ name: `node-${i}` });
    const first = (await api('GET', '/api/nodes')).json();
    expect(first).toMatchObject({ page: 1, limit: 10, total: 13 });
    expect(first.data).toHaveLength(10);
    expect(first.data[0]).toMatchObject({ id: LOCAL_ID, isLocal: true, name: 'Gateway (local)', address: '10.44.0.1' });
    for (const node of first.data) expect(() => NodeSchema.strict().parse(node)).not.toThrow();
    const third = (await api('GET', '/api/nodes?page=3&limit=5')).json();
    expect(third).toMatchObject({ page: 3, limit: 5, total: 13 });
    expect(third.data.map((n: { name: string }) => n.name)).toEqual(['node-8', 'node-9', 'node-10']);
    const gateways = (await api('GET', '/api/nodes?type=gateways')).json();
    expect(gateways.total).toBe(1);
    expect(gateways.data[0].gatewayNetwork).toBe('192.168.10.0/24');
    expect((await api('GET', '/api/nodes?type=nodes')).json().total).toBe(12);
  });

  it('reads no key material for a page or a search (the answer never shows it)', async () => {
    await createNode({ name: 'laptop' });
    const page = await listNodeRows(t.deps, { page: 1, limit: 10, type: undefined });
    const found = await searchNodeRows(t.deps, { type: undefined, q: 'lap' });
    expect(page.rows).toHaveLength(2);
    expect(found.map((row) => row.name)).toEqual(['laptop']);
    for (const row of [...page.rows, ...found]) {
      expect(row).not.toHaveProperty('privateKeyEnc');
      expect(row).not.toHaveProperty('presharedKeyEnc');
      expect(row.publicKey).toMatch(/=$/);
    }
  });

  it('answers 422 for bad paging values', async () => {
    const response = await api('GET', '/api/nodes?page=0&limit=1000&type=all');
    expect(response.statusCode).toBe(422);
    expect(response.json().errors.body).toEqual([
      {
        field: 'page',
        message: 'This field must be greater than or equal to 1',
        code: 'too_small',
        params: { min: 1 },
      },
      {
        field: 'limit',
        message: 'This field must be less than or equal to 100',
        code: 'too_big',
        params: { max: 100 },
      },
      {
        field: 'type',
        message: 'This field must be one of nodes, gateways',
        code: 'not_one_of',
        params: { values: 'nodes, gateways' },
      },
    ]);
  });

  it('shows live status from the data plane', async () => {
    const node = await createNode();
    const peer = t.fakeDataPlane.lastState?.peers.find((p) => p.nodeId === node.id);
    t.fakeDataPlane.status.setStatus(peer?.publicKey ?? '', {
      status: 'online',
      clientIp: '203.0.113.9',
      latestHandshakeTimestamp: '2026-06-01T12:00:00.000Z',
      transferRx: 2048,
      transferTx: 4096,
    });
    expect((await api('GET', `/api/nodes/${node.id}`)).json()).toMatchObject({
      status: 'online',
      clientIp: '203.0.113.9',
      transferRx: 2048,
      transferTx: 4096,
    });
  });

  it('searches name and address (q) and sorts by name, status, last handshake or traffic; no q or sort is the spec list', async () => {
    const names = ['Web-b', 'db', 'web-a'];
    const created = [];
    for (const name of names) created.push(await createNode({ name }));
    const setStatus = (id: number, status: 'online' | 'idle', at: string | null, bytes: number) =>
      t.fakeDataPlane.status.setStatus(t.fakeDataPlane.lastState?.peers.find((p) => p.nodeId === id)?.publicKey ?? '', {
        status,
        clientIp: null,
        latestHandshakeTimestamp: at,
        transferRx: bytes,
        transferTx: 0,
      });
    setStatus(created[1]!.id, 'online', '2026-06-01T12:00:00.000Z', 10);
    setStatus(created[2]!.id, 'idle', '2026-06-01T11:00:00.000Z', 500);
    const namesOf = async (query: string) => {
      const response = await api('GET', `/api/nodes?${query}`);
      expect(response.statusCode, query).toBe(200);
      return (response.json().data as { name: string }[]).map((n) => n.name);
    };
    expect(await namesOf('q=WEB')).toEqual(['Web-b', 'web-a']);
    expect(await namesOf(`q=${created[1]!.address}`)).toEqual(['db']);
    expect((await api('GET', '/api/nodes?q=web&limit=1&page=2')).json()).toMatchObject({
      total: 2,
      page: 2,
      data: [{ name: 'web-a' }],
    });
    expect(await namesOf('sort=name')).toEqual(['db', 'Gateway (local)', 'web-a', 'Web-b']);
    expect(await namesOf('sort=name&order=desc')).toEqual(['Web-b', 'web-a', 'Gateway (local)', 'db']);
    // Status: online (the local node first, it is older), idle, offline; equal keys keep creation order.
    expect(await namesOf('sort=status')).toEqual(['Gateway (local)', 'db', 'web-a', 'Web-b']);
    expect(await namesOf('sort=handshake&order=desc')).toEqual(['db', 'web-a', 'Gateway (local)', 'Web-b']);
    expect(await namesOf('sort=traffic&order=desc&q=-')).toEqual(['web-a', 'Web-b']);
    expect(await namesOf('')).toEqual(['Gateway (local)', 'Web-b', 'db', 'web-a']);
    const bad = await api('GET', '/api/nodes?sort=address&order=up');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors.body).toEqual([
      {
        field: 'sort',
        message: 'This field must be one of name, status, handshake, traffic',
        code: 'not_one_of',
        params: { values: 'name, status, handshake, traffic' },
      },
      {
        field: 'order',
        message: 'This field must be one of asc, desc',
        code: 'not_one_of',
        params: { values: 'asc, desc' },
      },
    ]);
  });
});

describe('node changes', () => {
  it('edits fields, clears gatewayNetwork when the gateway option is turned off, and re-applies', async () => {
    const node = await createNode({ name: 'gw', isGateway: true, gatewayNetwork: '192.168.10.0/24' });
    const renamed = await api('PATCH', `/api/nodes/${node.id}`, { name: 'renamed', address: '10.44.1.1' });
    expect(renamed.json()).toMatchObject({ name: 'renamed', address: '10.44.1.1', gatewayNetwork: '192.168.10.0/24' });
    const plain = await api('PATCH', `/api/nodes/${node.id}`, { isGateway: false });
    expect(plain.json()).toMatchObject({ isGateway: false, gatewayNetwork: null });
    expect(t.fakeDataPlane.lastState?.peers[0]?.allowedIps).toEqual(['10.44.1.1/32']);
  });

  it("lets a gateway's tokens set its networks only when the operator says so, and takes it back with the gateway option", async () => {
    const created = await createNode({ name: 'gw', isGateway: true, gatewayNetwork: '192.168.10.0/24' });
    expect((await api('GET', `/api/nodes/${created.id}`)).json()).toMatchObject({
      allowTokenNetworks: false,
      applyError: null,
    });
    const refused = await api('POST', '/api/nodes', { name: 'plain', allowTokenNetworks: true });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().errors.body).toEqual([
      {
        field: 'allowTokenNetworks',
        message: ruleMessages.tokenNetworksNotGateway,
        code: 'token_networks_not_gateway',
      },
    ]);
    expect((await api('PATCH', `/api/nodes/${created.id}`, { allowTokenNetworks: true })).json()).toMatchObject({
      allowTokenNetworks: true,
    });
    // The token's subnets are the token's (checked again on every apply) until the operator sets others.
    const agent = (gatewayNetworks: string[]) =>
      t.app.inject({
        method: 'PATCH',
        url: '/api/agent/node/gateway-networks',
        headers: { authorization: `Bearer ${created.token}` },
        payload: { gatewayNetworks },
      });
    expect((await agent(['192.168.11.0/24'])).statusCode).toBe(200);
    const peer = () => t.fakeDataPlane.lastState?.peers.find((p) => p.nodeId === created.id);
    expect(peer()?.networksByToken).toBe(true);
    await api('PATCH', `/api/nodes/${created.id}`, { name: 'renamed' });
    expect(peer()?.networksByToken).toBe(true);
    await api('PATCH', `/api/nodes/${created.id}`, { gatewayNetworks: ['192.168.12.0/24'] });
    expect(peer()?.networksByToken).toBeUndefined();
    const plain = await api('PATCH', `/api/nodes/${created.id}`, { isGateway: false });
    expect(plain.json()).toMatchObject({ isGateway: false, allowTokenNetworks: false });
    expect((await api('PATCH', `/api/nodes/${created.id}`, { allowTokenNetworks: true })).statusCode).toBe(422);
  });

  it("lets the operator route a network that holds a backend of the operator's own (the operator decides where it is reached)", async () => {
    const local = await api('POST', `/api/services/${LOCAL_ID}/tcp`, {
      name: 'db',
      backendHost: '10.20.0.5',
      backendPort: 5432,
    });
    expect(local.statusCode).toBe(201);
    await createNode({ name: 'gw', isGateway: true, gatewayNetwork: '10.20.0.0/24' });
  });

  it('disconnects and connects: a disabled node has no peer', async () => {
    const node = await createNode();
    expect((await api('PATCH', `/api/nodes/${node.id}/disable`)).json()).toMatchObject({ enabled: false });
    expect(t.fakeDataPlane.lastState?.peers).toEqual([]);
    expect((await api('PATCH', `/api/nodes/${node.id}/enable`)).json()).toMatchObject({ enabled: true });
    expect(t.fakeDataPlane.lastState?.peers).toHaveLength(1);
  });

  it('deletes a node with its tokens', async () => {
    const node = await createNode();
    expect((await api('DELETE', `/api/nodes/${node.id}`)).statusCode).toBe(204);
    expect((await api('GET', `/api/nodes/${node.id}`)).statusCode).toBe(404);
    const agent = await t.app.inject({ url: '/api/agent/node', headers: { authorization: `Bearer ${node.token}` } });
    expect(agent.statusCode).toBe(401);
  });

  it('answers 404 for unknown and malformed ids', async () => {
    for (const [method, url] of [
      ['GET', '/api/nodes/999'],
      ['PATCH', '/api/nodes/999'],
      ['DELETE', '/api/nodes/999'],
      ['PATCH', '/api/nodes/999/enable'],
      ['GET', '/api/nodes/999/download'],
      ['GET', '/api/nodes/abc'],
    ] as const) {
      const response = await api(method, url, method === 'PATCH' ? {} : undefined);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json()).toHaveProperty('message');
    }
    expect((await api('GET', '/api/nodes/999')).json()).toEqual({
      message: 'Node not found',
      code: 'not_found',
      messageCode: 'node_not_found',
    });
  });

  it('refuses every forbidden action on the local node with 400 and a message', async () => {
    const cases = [
      ['PATCH', `/api/nodes/${LOCAL_ID}`, 'The local node cannot be edited'],
      ['DELETE', `/api/nodes/${LOCAL_ID}`, 'The local node cannot be deleted'],
      ['PATCH', `/api/nodes/${LOCAL_ID}/enable`, 'The local node cannot be connected'],
      ['PATCH', `/api/nodes/${LOCAL_ID}/disable`, 'The local node cannot be disconnected'],
      ['GET', `/api/nodes/${LOCAL_ID}/download`, 'The local node has no config to download'],
      ['POST', `/api/nodes/${LOCAL_ID}/pats`, 'The local node cannot have access tokens'],
      ['GET', `/api/nodes/${LOCAL_ID}/pats`, 'The local node cannot have access tokens'],
    ] as const;
    for (const [method, url, message] of cases) {
      const response = await api(method, url, method === 'PATCH' || method === 'POST' ? { name: 'x' } : undefined);
      expect(response.statusCode, `${method} ${url}`).toBe(400);
      expect(response.json()).toEqual({ message, code: 'bad_request', messageCode: describeMessage(message)?.code });
    }
  });
});

describe('GET /api/nodes/:id/download', () => {
  it('returns a wg-quick file named after the node', async () => {
    const node = await createNode({ name: 'My Laptop #1' });
    const response = await api('GET', `/api/nodes/${node.id}/download`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-disposition']).toBe('attachment; filename="postern-my-laptop-1.conf"');
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.body).toMatch(/^\[Interface\]\nAddress = 10\.44\.0\.2\/32\nPrivateKey = [A-Za-z0-9+/]{43}=\n/);
    expect(response.body).toContain('Endpoint = gateway.test:51820');
    expect(response.body).toContain('PresharedKey = ');
  });
});

describe('auth', () => {
  it('needs a session for every node route', async () => {
    for (const [method, url] of [
      ['GET', '/api/nodes'],
      ['POST', '/api/nodes'],
      ['GET', '/api/nodes/1'],
      ['GET', '/api/nodes/1/download'],
    ] as const) {
      expect((await t.app.inject({ method, url })).statusCode, url).toBe(401);
    }
  });
});
