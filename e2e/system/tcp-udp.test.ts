import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdTcpConnection, tcpExchange, udpExchange, type ExchangeAnswer } from '../harness/clients.js';
import { openLogStream } from '../harness/log-stream.js';
import { elapsedSince, waitFor } from '../../apps/server/src/test/wait-for.js';
import { connectNode, startSystem, stopSystem, type ConnectedNode, type System } from './fixture.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// TCP and UDP services on public ports of the gateway, and what disabling one does to open connections.

const TCP_BACKEND = 7000;
const UDP_BACKEND = 7001;
const APPLY_DEADLINE_MS = 15_000;
/**
 * The documented bound for an open connection of a disabled service: nginx's worker_shutdown_timeout, 10 s
 * (DEFAULT_WORKER_SHUTDOWN_TIMEOUT_SECONDS in apps/server/src/dataplane/nginx/options.ts), plus 2 s for the
 * apply and reload that start that clock.
 */
const DISABLED_CONNECTION_CLOSE_MS = 12_000;

describe.skipIf(!canRun('netns', 'server-build'))('TCP and UDP services through the gateway', () => {
  let system: System;
  let node: ConnectedNode;
  let gatewayIp = '';
  let client = '';

  const waitForTcp = (port: number, sourceIp?: string): Promise<ExchangeAnswer> =>
    waitFor(
      async () => {
        const answer = await tcpExchange(client, gatewayIp, port, 'hello', {
          timeoutMs: 2000,
          ...(sourceIp ? { sourceIp } : {}),
        });
        return answer.reply === 'node1:hello' && answer;
      },
      { timeoutMs: APPLY_DEADLINE_MS, what: `TCP port ${port} to reach node1` },
    );

  beforeAll(async () => {
    system = await startSystem();
    gatewayIp = system.topology.gatewayPublicIp;
    client = system.topology.clientNs;
    node = await connectNode(system, 'node1', 11);
    await node.serve('tcp', TCP_BACKEND);
    await node.serve('udp', UDP_BACKEND);
  });

  afterAll(async () => {
    expect(await stopSystem(system)).toEqual([]);
  });

  let echoTcpId = 0;

  it('carries a TCP service to the node', async () => {
    const service = await system.api.createTcpService(node.node.id, {
      name: 'echo-tcp',
      proto: 'tcp',
      port: 30010,
      backendHost: node.tunnelIp,
      backendPort: TCP_BACKEND,
    });
    expect(service.port).toBe(30010);
    echoTcpId = service.id;
    await waitForTcp(30010);
  });

  it("shows the client's connection in the TCP service's log stream", async () => {
    const stream = await openLogStream(system.gateway.baseUrl, system.api.token ?? '', { type: 'tcp', id: echoTcpId });
    try {
      // An address no earlier connection to this service came from, so a replayed old line cannot match.
      const [, source] = system.topology.clientIps;
      expect((await tcpExchange(client, gatewayIp, 30010, 'logged', { sourceIp: source })).reply).toBe('node1:logged');
      // A stream session is logged when it ends; the line names the client.
      await stream.waitForLine((text) => text.includes(source), 15_000);
    } finally {
      stream.close();
    }
  });

  it('carries a UDP service on the same public port to the node', async () => {
    await system.api.createTcpService(node.node.id, {
      name: 'echo-udp',
      proto: 'udp',
      port: 30010,
      backendHost: node.tunnelIp,
      backendPort: UDP_BACKEND,
    });
    const answer = await waitFor(
      async () => {
        const reply = await udpExchange(client, gatewayIp, 30010, 'ping', { timeoutMs: 1000 });
        return reply.ok && reply;
      },
      { timeoutMs: APPLY_DEADLINE_MS, what: 'UDP port 30010 to reach node1' },
    );
    expect(answer.reply).toBe('node1:ping');
    // TCP on the same number still works.
    expect((await tcpExchange(client, gatewayIp, 30010, 'hello')).reply).toBe('node1:hello');
  });

  it('refuses a TCP client outside allowedIps', async () => {
    const [allowed, outsider] = system.topology.clientIps;
    await system.api.createTcpService(node.node.id, {
      name: 'tcp-allow',
      proto: 'tcp',
      port: 30011,
      backendHost: node.tunnelIp,
      backendPort: TCP_BACKEND,
      allowedIps: [allowed],
    });
    await waitForTcp(30011, allowed);
    expect((await tcpExchange(client, gatewayIp, 30011, 'hello', { sourceIp: outsider })).ok).toBe(false);
  });

  it('refuses a TCP client in blockedIps', async () => {
    const [allowed, , blocked] = system.topology.clientIps;
    await system.api.createTcpService(node.node.id, {
      name: 'tcp-block',
      proto: 'tcp',
      port: 30012,
      backendHost: node.tunnelIp,
      backendPort: TCP_BACKEND,
      blockedIps: [blocked],
    });
    await waitForTcp(30012, allowed);
    expect((await tcpExchange(client, gatewayIp, 30012, 'hello', { sourceIp: blocked })).ok).toBe(false);
  });

  it('stops a disabled TCP service and closes its open connection within the documented bound', async () => {
    const service = await system.api.createTcpService(node.node.id, {
      name: 'tcp-held',
      proto: 'tcp',
      port: 30013,
      backendHost: node.tunnelIp,
      backendPort: TCP_BACKEND,
    });
    await waitForTcp(30013);
    const held = await holdTcpConnection(system.lab, client, gatewayIp, 30013);
    held.send('before');
    await held.process.waitForOutput(/^reply:node1:before$/m, 5000);

    const start = performance.now();
    await system.api.disableService(node.node.id, 'tcp', service.id);
    await waitFor(async () => !(await tcpExchange(client, gatewayIp, 30013, 'hello', { timeoutMs: 1000 })).ok, {
      timeoutMs: DISABLED_CONNECTION_CLOSE_MS,
      what: 'new connections to the disabled service to fail',
    });
    await held.waitForClose(DISABLED_CONNECTION_CLOSE_MS);
    expect(elapsedSince(start)).toBeLessThanOrEqual(DISABLED_CONNECTION_CLOSE_MS);

    await system.api.enableService(node.node.id, 'tcp', service.id);
    await waitForTcp(30013);
  });

  it("moves a TCP service to another port alone: its old port closes, another service's open connection goes on", async () => {
    const held = await holdTcpConnection(system.lab, client, gatewayIp, 30010);
    held.send('before');
    await held.process.waitForOutput(/^reply:node1:before$/m, 5000);
    const service = await system.api.createTcpService(node.node.id, {
      name: 'tcp-moved',
      proto: 'tcp',
      port: 30014,
      backendHost: node.tunnelIp,
      backendPort: TCP_BACKEND,
    });
    await waitForTcp(30014);
    // The API answers once the change is applied (a scoped run: the instances of 30014 and 30015 alone).
    await system.api.updateService(node.node.id, 'tcp', service.id, { port: 30015 });
    expect((await tcpExchange(client, gatewayIp, 30015, 'moved')).reply).toBe('node1:moved');
    expect((await tcpExchange(client, gatewayIp, 30014, 'hello', { timeoutMs: 1000 })).ok).toBe(false);
    held.send('after');
    await held.process.waitForOutput(/^reply:node1:after$/m, 5000);
  });
});
