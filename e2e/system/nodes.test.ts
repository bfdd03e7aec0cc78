import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '@postern/contract';
import { startBackend } from '../harness/backends.js';
import { httpGet, tcpExchange } from '../harness/clients.js';
import { runIn, runInAllowingFailure } from '../harness/exec.js';
import { VPN_SUBNET } from '../harness/gateway.js';
import { addLan } from '../harness/topology.js';
import { GATEWAY_REDIAL_BOUND_MS } from '../harness/wireguard.js';
import { elapsedSince, waitFor } from '../../apps/server/src/test/wait-for.js';
import { connectNode, joinNode, startSystem, stopSystem, type ConnectedNode, type System } from './fixture.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// What an operator sees and controls per node: status and counters, disconnect/connect, isolation between
// nodes, and a gateway node publishing a host of its LAN.

const BACKEND_PORT = 8080;
const APPLY_DEADLINE_MS = 15_000;
/** A disabled node's traffic stops within 1 s. */
const DISCONNECT_BOUND_MS = 1_000;
/** After connect the gateway dials the node at its last endpoint: see GATEWAY_REDIAL_BOUND_MS. */
const RECONNECT_DEADLINE_MS = GATEWAY_REDIAL_BOUND_MS;
const gatewayTunnelIp = VPN_SUBNET.replace(/0\/16$/, '1');

const labelOf = (body: string): string | undefined => {
  try {
    return (JSON.parse(body) as { label?: string }).label;
  } catch {
    return undefined;
  }
};

describe.skipIf(!canRun('netns', 'server-build'))('nodes', () => {
  let system: System;
  let node1: ConnectedNode;
  /** The node the first test joins; it serves s.e2e.test from then on (another node, beside node1's changes). */
  let other: ConnectedNode | undefined;
  let gatewayIp = '';
  let client = '';

  const servedBy = async (url: string): Promise<string | undefined> => {
    const answer = await httpGet(client, url, { connectTo: gatewayIp, timeoutMs: 2000 });
    return answer.status === 200 ? labelOf(answer.body) : undefined;
  };

  beforeAll(async () => {
    system = await startSystem();
    gatewayIp = system.topology.gatewayPublicIp;
    client = system.topology.clientNs;
    node1 = await connectNode(system, 'node1', 11);
    await node1.serve('http', BACKEND_PORT);
    await system.api.createHttpService(node1.node.id, {
      name: 'n1',
      domain: 'n1.e2e.test',
      backendHost: node1.tunnelIp,
      backendPort: BACKEND_PORT,
    });
    await waitFor(async () => (await servedBy('https://n1.e2e.test/')) === 'node1', {
      timeoutMs: APPLY_DEADLINE_MS,
      what: 'n1.e2e.test to be served',
    });
  });

  afterAll(async () => {
    expect(await stopSystem(system)).toEqual([]);
  });

  it('turns online after the handshake and counts the bytes that flow', async () => {
    const created = await system.api.createNode({ name: 'e2e-status' });
    expect((await system.api.getNode(created.id)).status).toBe('offline');
    const node = await joinNode(system, created, 'status', 14);
    other = node;
    const online = await waitFor(
      async () => {
        const found = await system.api.getNode(created.id);
        return found.status === 'online' && found;
      },
      { timeoutMs: 15_000, what: 'the new node to be shown online' },
    );
    expect(online.latestHandshakeTimestamp).not.toBeNull();
    const ping = await runInAllowingFailure(system.topology.gatewayNs, 'ping', [
      '-c',
      '5',
      '-i',
      '0.2',
      '-s',
      '1000',
      node.tunnelIp,
    ]);
    expect(ping.code, ping.stdout).toBe(0);
    await waitFor(
      async () => {
        const found = await system.api.getNode(created.id);
        return found.transferRx > online.transferRx && found.transferTx > online.transferTx;
      },
      { timeoutMs: 15_000, what: 'transferRx and transferTx of the node to grow' },
    );
  });

  it(
    'stops the traffic of a disconnected node within 1 s, and connect restores it',
    async () => {
      // Another node serving beside node1: node1's changes are its own (a scoped run: its peer, its services' hosts).
      if (other === undefined) throw new Error('the first test joins the other node');
      await other.serve('http', BACKEND_PORT);
      await system.api.createHttpService(other.node.id, {
        name: 's',
        domain: 's.e2e.test',
        backendHost: other.tunnelIp,
        backendPort: BACKEND_PORT,
      });
      await waitFor(async () => (await servedBy('https://s.e2e.test/')) === 'status', {
        timeoutMs: APPLY_DEADLINE_MS,
        what: 's.e2e.test to be served',
      });
      const handshakeOfOther = (await system.api.getNode(other.node.id)).latestHandshakeTimestamp;
      const start = performance.now();
      await system.api.disableNode(node1.node.id);
      // Straight through the tunnel from the gateway: no retry or cache in between.
      await waitFor(
        async () => {
          const answer = await httpGet(system.topology.gatewayNs, `http://${node1.tunnelIp}:${BACKEND_PORT}/`, {
            timeoutMs: 300,
          });
          return answer.status === 0;
        },
        { timeoutMs: DISCONNECT_BOUND_MS * 2, intervalMs: 20, what: 'the tunnel to node1 to stop carrying traffic' },
      );
      expect(elapsedSince(start)).toBeLessThanOrEqual(DISCONNECT_BOUND_MS);
      expect(await servedBy('https://n1.e2e.test/')).toBeUndefined();
      expect(await servedBy('https://s.e2e.test/')).toBe('status');

      await system.api.enableNode(node1.node.id);
      await waitFor(async () => (await servedBy('https://n1.e2e.test/')) === 'node1', {
        timeoutMs: RECONNECT_DEADLINE_MS,
        intervalMs: 500,
        what: 'n1.e2e.test to be served again after connect',
      });
      // The other node served throughout, on the session it had: no new handshake.
      expect(await servedBy('https://s.e2e.test/')).toBe('status');
      expect((await system.api.getNode(other.node.id)).latestHandshakeTimestamp).toBe(handshakeOfOther);
    },
    RECONNECT_DEADLINE_MS + 30_000,
  );

  it('does not let a second node reach the first, nor anything on the gateway but the tunnel health check', async () => {
    const node2 = await connectNode(system, 'node2', 12);
    // The tunnel itself works: node2 gets the gateway's tunnel health answer, and nothing else there.
    const health = await httpGet(node2.ns, `http://${gatewayTunnelIp}/_postern/tunnel-health`, { timeoutMs: 3000 });
    expect(health).toMatchObject({ status: 200, body: 'ok' });
    expect((await httpGet(node2.ns, `http://${gatewayTunnelIp}/api/health`, { timeoutMs: 3000 })).status).toBe(404);
    // The control plane listens on every address in these tests (POSTERN_HOST=0.0.0.0): still not over the tunnel.
    expect((await httpGet(node2.ns, `http://${gatewayTunnelIp}:3000/api/health`, { timeoutMs: 1500 })).status).toBe(0);
    expect((await httpGet(node2.ns, `https://${gatewayTunnelIp}/`, { timeoutMs: 1500 })).status).toBe(0);
    expect((await runInAllowingFailure(node2.ns, 'ping', ['-c', '1', '-W', '1', gatewayTunnelIp])).code).not.toBe(0);
    const ping = await runInAllowingFailure(node2.ns, 'ping', ['-c', '2', '-W', '1', node1.tunnelIp]);
    expect(ping.code).not.toBe(0);
    const answer = await httpGet(node2.ns, `http://${node1.tunnelIp}:${BACKEND_PORT}/`, { timeoutMs: 2000 });
    expect(answer.status).toBe(0);
    expect(
      (await tcpExchange(node2.ns, node1.tunnelIp, BACKEND_PORT, 'GET / HTTP/1.0\r\n\r\n', { timeoutMs: 1000 })).ok,
    ).toBe(false);
  });

  it("publishes a host of a gateway node's subnet through a service", async () => {
    const lanPrefix = system.topology.lanPrefix;
    const gatewayNetwork = `${lanPrefix}.0/24`;
    const router = await connectNode(system, 'gwnode', 13, { isGateway: true, gatewayNetwork });
    const lan = await addLan(system.lab, router.ns, lanPrefix);
    await startBackend(system.lab, lan.ns, 'http', lan.hostIp, BACKEND_PORT, 'lan-host');
    await system.api.createHttpService(router.node.id, {
      name: 'lan',
      domain: 'lan.e2e.test',
      backendHost: lan.hostIp,
      backendPort: BACKEND_PORT,
    });
    await waitFor(async () => (await servedBy('https://lan.e2e.test/')) === 'lan-host', {
      timeoutMs: APPLY_DEADLINE_MS,
      what: 'lan.e2e.test to be served by the LAN host behind the gateway node',
    });
  });

  it('reaches hosts in two subnets behind one gateway node, and stops routing the one removed', async () => {
    // Inside namespaces this run made only: no host outside them sees these subnets.
    const [first, second] = ['172.29.1', '172.29.2'];
    const router = await connectNode(system, 'twolans', 15, {
      isGateway: true,
      gatewayNetworks: [`${first}.0/24`, `${second}.0/24`],
    });
    expect(router.node.gatewayNetwork).toBe(`${first}.0/24`);
    const lanA = await addLan(system.lab, router.ns, first, 'lana');
    const lanB = await addLan(system.lab, router.ns, second, 'lanb');
    await startBackend(system.lab, lanA.ns, 'http', lanA.hostIp, BACKEND_PORT, 'lan-a');
    await startBackend(system.lab, lanB.ns, 'http', lanB.hostIp, BACKEND_PORT, 'lan-b');
    await system.api.createHttpService(router.node.id, {
      name: 'a',
      domain: 'lan-a.e2e.test',
      backendHost: lanA.hostIp,
      backendPort: BACKEND_PORT,
    });
    await system.api.createHttpService(router.node.id, {
      name: 'b',
      domain: 'lan-b.e2e.test',
      backendHost: lanB.hostIp,
      backendPort: BACKEND_PORT,
    });
    for (const [host, label] of [
      ['lan-a.e2e.test', 'lan-a'],
      ['lan-b.e2e.test', 'lan-b'],
    ]) {
      await waitFor(async () => (await servedBy(`https://${host}/`)) === label, {
        timeoutMs: APPLY_DEADLINE_MS,
        what: `${host} served by ${label}`,
      });
    }
    // Dropping the second subnet takes its route away; the first keeps being served.
    await system.api.call(operations.updateNode, {
      params: { id: router.node.id },
      body: { gatewayNetworks: [`${first}.0/24`] },
    });
    const routes = async () =>
      (await runInAllowingFailure(system.topology.gatewayNs, 'ip', ['-4', 'route', 'show', 'table', 'main'])).stdout;
    await waitFor(async () => !(await routes()).includes(`${second}.0/24`), {
      timeoutMs: APPLY_DEADLINE_MS,
      what: `the route of ${second}.0/24 to go`,
    });
    expect(await servedBy('https://lan-a.e2e.test/')).toBe('lan-a');
  });

  it("routes a gateway node's network while it exists and leaves the host's routes exactly as they were once it is deleted", async () => {
    const routes = async () =>
      (
        await runInAllowingFailure(system.topology.gatewayNs, 'ip', ['-4', 'route', 'show', 'table', 'main'])
      ).stdout.trim();
    const before = await routes();
    const network = '172.31.77.0/24';
    const node = await system.api.createNode({ name: 'e2e-routes', isGateway: true, gatewayNetwork: network });
    await waitFor(async () => (await routes()).includes(`${network} dev`), {
      timeoutMs: APPLY_DEADLINE_MS,
      what: `a route for ${network} into the tunnel`,
    });
    // The host's own network cannot be taken over: the API refuses it (the host route stays).
    const lan = before
      .split('\n')
      .map((line) => line.split(' ')[0] ?? '')
      .find((cidr) => /\/\d+$/.test(cidr) && !cidr.startsWith('10.44.'));
    if (lan !== undefined) {
      const refused = await system.api.createNode({ name: 'e2e-takeover', isGateway: true, gatewayNetwork: lan }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(String(refused)).toContain('422');
    }
    await system.api.deleteNode(node.id);
    await waitFor(async () => (await routes()) === before, {
      timeoutMs: APPLY_DEADLINE_MS,
      what: 'the routes to be what they were before the gateway node',
    });
  });

  it('refuses a network the host reaches through a table other than main: a policy route, an address of its own', async () => {
    const ns = system.topology.gatewayNs;
    // Neither shows in the main table: a policy-routing table (a VPN client's, a cloud agent's) and the local table.
    await runIn(ns, 'ip', ['route', 'add', 'blackhole', '172.31.90.0/24', 'table', '100']);
    await runIn(ns, 'ip', ['address', 'add', '172.31.91.9/32', 'dev', 'lo']);
    try {
      for (const [network, reached] of [
        ['172.31.90.0/24', '172.31.90.0/24'],
        ['172.31.91.0/24', '172.31.91.9/32'],
      ] as const) {
        const refused = await system.api
          .createNode({ name: 'e2e-policy', isGateway: true, gatewayNetwork: network })
          .then(
            () => null,
            (error: unknown) => error,
          );
        expect(String(refused), network).toContain('422');
        expect(String(refused), network).toContain(reached);
      }
    } finally {
      await runIn(ns, 'ip', ['address', 'del', '172.31.91.9/32', 'dev', 'lo']);
      await runIn(ns, 'ip', ['route', 'del', 'blackhole', '172.31.90.0/24', 'table', '100']);
    }
  });
});
