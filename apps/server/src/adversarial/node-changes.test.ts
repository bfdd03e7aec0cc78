import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callAs } from '../test/accounts.js';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';

// A node's change is applied alone (dataplane/README.md "Scoped applies": its own WireGuard peer, its own services'
// hosts and instances). The attacker's view: whatever a node's token does, and whatever the operator does to that
// node, another node's peer, routes, TCP/UDP instance and stored reason stay exactly as they were.

let t: TestApp;
let admin: string;
type Node = { id: number; token: string };
let nodeA: Node;
let nodeB: Node;
let portB = 0;

/** The answers' fields this file reads (each cast where it is used). */
type Loose = Record<'id' | 'port' | 'errors' | 'data' | 'applyError' | 'token', unknown>;
const call = (token: string, method: string, url: string, payload?: object) =>
  callAs<Loose>(t, method, url, token, payload);
const asAdmin = (method: string, url: string, payload?: object) => call(admin, method, url, payload);

/** Everything of node B the data plane holds, and what each run since `from` touched that is B's. */
function nodeBView() {
  const { wireguard, proxy } = t.fakeDataPlane;
  return {
    peer: wireguard.peers.find((peer) => peer.nodeId === nodeB.id),
    route: proxy.routes.get('b.nodes.test'),
    instance: proxy.streams.get(`tcp-${String(portB)}`)?.conf,
  };
}
function touchedOfB(from: { peerPatches: number; patches: number; streamPatches: number; cuts: number }) {
  const { wireguard, proxy } = t.fakeDataPlane;
  return {
    peers: wireguard.peerPatches.slice(from.peerPatches).filter((ids) => ids.includes(nodeB.id)),
    hosts: proxy.patches.slice(from.patches).filter((p) => [...p.set, ...p.del].includes('b.nodes.test')),
    instances: proxy.streamPatches
      .slice(from.streamPatches)
      .filter((p) => [...p.started, ...p.stopped].includes(`tcp-${String(portB)}`)),
    cuts: proxy.cutScopes.slice(from.cuts).filter((ids) => ids !== null),
  };
}
const marks = () => ({
  peerPatches: t.fakeDataPlane.wireguard.peerPatches.length,
  patches: t.fakeDataPlane.proxy.patches.length,
  streamPatches: t.fakeDataPlane.proxy.streamPatches.length,
  cuts: t.fakeDataPlane.proxy.cutScopes.length,
});

describe("a node's change touches that node alone", () => {
  let serviceB = 0;

  beforeEach(async () => {
    t = await buildTestApp();
    admin = await t.login();
    const gateway = async (name: string, network: string): Promise<Node> =>
      (await asAdmin('POST', '/api/nodes', { name, isGateway: true, gatewayNetwork: network })).body as Node;
    nodeA = await gateway('node-a', '192.168.20.0/24');
    nodeB = await gateway('node-b', '192.168.30.0/24');
    for (const [node, name] of [
      [nodeA, 'a'],
      [nodeB, 'b'],
    ] as const) {
      const http = await call(node.token, 'POST', '/api/agent/services/http', {
        name: `site-${name}`,
        domain: `${name}.nodes.test`,
        backendHost: `192.168.${name === 'a' ? '20' : '30'}.7`,
        backendPort: 80,
      });
      expect(http.status, JSON.stringify(http.body)).toBe(201);
      const tcp = await call(node.token, 'POST', '/api/agent/services/tcp', {
        name: `db-${name}`,
        backendHost: `192.168.${name === 'a' ? '20' : '30'}.8`,
        backendPort: 5432,
      });
      expect(tcp.status, JSON.stringify(tcp.body)).toBe(201);
      if (node === nodeB) {
        portB = tcp.body.port as number;
        serviceB = http.body.id as number;
      }
    }
  });
  afterEach(() => t.cleanup());

  it("node A's token, whatever it changes of its own, never changes node B's peer, routes or instance", async () => {
    await asAdmin('PATCH', `/api/nodes/${String(nodeA.id)}`, { allowTokenNetworks: true });
    const before = nodeBView();
    expect(before.peer?.allowedIps).toContain('192.168.30.0/24');
    expect(before.route).toBeDefined();
    expect(before.instance).toBeDefined();
    const from = marks();
    const networks = (gatewayNetworks: string[]) =>
      call(nodeA.token, 'PATCH', '/api/agent/node/gateway-networks', { gatewayNetworks });
    // B's subnet, or one overlapping it, is never A's to take.
    expect((await networks(['192.168.30.0/25'])).body.errors).toMatchObject({
      body: [{ field: 'gatewayNetworks', code: 'network_unavailable' }],
    });
    expect((await networks(['192.168.30.0/23'])).body.errors).toMatchObject({
      body: [{ field: 'gatewayNetworks', code: 'network_unavailable' }],
    });
    expect((await networks(['192.168.21.0/24'])).status).toBe(200);
    // A's own services, off and on again.
    const own = (await call(nodeA.token, 'GET', '/api/agent/services/tcp')).body.data as { id: number }[];
    for (const action of ['disable', 'enable'])
      expect((await call(nodeA.token, 'PATCH', `/api/agent/services/tcp/${String(own[0]?.id)}/${action}`)).status).toBe(
        200,
      );
    expect(nodeBView()).toEqual(before);
    expect(touchedOfB(from)).toMatchObject({ peers: [], hosts: [], instances: [] });
    expect((await asAdmin('GET', `/api/nodes/${String(nodeB.id)}`)).body.applyError).toBeNull();
  });

  it("the operator's edit, disable, enable and delete of node A are applied alone: nothing of node B is touched", async () => {
    const before = nodeBView();
    const syncs = t.fakeDataPlane.wireguard.peerSyncs;
    const from = marks();
    const a = `/api/nodes/${String(nodeA.id)}`;
    expect((await asAdmin('PATCH', a, { name: 'node-a2', gatewayNetworks: ['192.168.22.0/24'] })).status).toBe(200);
    expect(t.fakeDataPlane.wireguard.peers.find((p) => p.nodeId === nodeA.id)?.allowedIps).toContain('192.168.22.0/24');
    expect((await asAdmin('PATCH', `${a}/disable`)).status).toBe(200);
    expect(t.fakeDataPlane.proxy.routes.has('a.nodes.test')).toBe(false);
    expect(t.fakeDataPlane.wireguard.peers.some((p) => p.nodeId === nodeA.id)).toBe(false);
    expect((await asAdmin('PATCH', `${a}/enable`)).status).toBe(200);
    expect(t.fakeDataPlane.proxy.routes.has('a.nodes.test')).toBe(true);
    expect((await asAdmin('DELETE', a)).status).toBe(204);
    expect(t.fakeDataPlane.proxy.routes.has('a.nodes.test')).toBe(false);
    // Each change was a scoped run of A's peer alone; B's peer, host, instance and connections were never looked at.
    expect(t.fakeDataPlane.wireguard.peerSyncs).toBe(syncs);
    expect(t.fakeDataPlane.wireguard.peerPatches.slice(from.peerPatches)).toEqual([
      [nodeA.id],
      [nodeA.id],
      [nodeA.id],
      [nodeA.id],
    ]);
    const touched = touchedOfB(from);
    expect(touched).toMatchObject({ peers: [], hosts: [], instances: [] });
    expect(touched.cuts.flat()).not.toContain(serviceB);
    expect(nodeBView()).toEqual(before);
  });
});
