import { createServer, connect, type Server, type Socket } from 'node:net';
import { ApiClient } from '../harness/api.js';
import { startGateway, API_PORT } from '../harness/gateway.js';
import { Lab } from '../harness/lab.js';
import { createSystemTopology } from '../harness/topology.js';
import type { System } from '../system/fixture.js';
import { ADMIN } from './server.js';

// The real gateway (nginx and WireGuard under it) in the system tests' network namespaces, for the browser tests
// that need real traffic: the log viewer and node status. The browser reaches it through a forwarder on
// 127.0.0.1: in production the server sets the session cookie Secure, which browsers accept on loopback only.

export interface RealGateway {
  /** Loopback address of the API and console. */
  baseUrl: string;
  /** The system tests' view of the same gateway, for joining nodes (`joinNode` in e2e/system/fixture.ts). */
  system: System;
  /** Namespace of a client on the gateway's internet, and the gateway's public address there. */
  clientNs: string;
  publicIp: string;
  /** Stops the gateway process and starts it again on the same data (sessions and services survive). */
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** Namespaces and links of this gateway still present: empty after stop(). */
  leftovers(): string[];
}

interface Forwarder {
  port: number;
  close: () => Promise<void>;
}

async function forwardLoopback(targetHost: string, targetPort: number): Promise<Forwarder> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = connect(targetPort, targetHost);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    }
    inbound.pipe(outbound).pipe(inbound);
    inbound.once('error', () => outbound.destroy());
    outbound.once('error', () => inbound.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('forwarder has no address');
  return {
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startRealGateway(): Promise<RealGateway> {
  const lab = new Lab();
  let forwarder: Forwarder | undefined;
  try {
    const topology = await createSystemTopology(lab);
    const gateway = await startGateway(lab, {
      ns: topology.gatewayNs,
      apiIp: topology.gatewayMgmtIp,
      publicHost: topology.gatewayPublicIp,
      wgInterface: lab.ifName('gw'),
      env: {
        POSTERN_ADMIN_USERNAME: ADMIN.username,
        POSTERN_ADMIN_PASSWORD: ADMIN.password,
        POSTERN_LOG_LEVEL: 'warn',
      },
    });
    const api = await new ApiClient(gateway.baseUrl).login(ADMIN.username, ADMIN.password);
    forwarder = await forwardLoopback(topology.gatewayMgmtIp, API_PORT);
    const { close, port } = forwarder;
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      system: { lab, topology, gateway, api },
      clientNs: topology.clientNs,
      publicIp: topology.gatewayPublicIp,
      restart: () => gateway.restart(),
      async stop() {
        await close();
        await lab.destroy();
      },
      leftovers: () => lab.leftovers(),
    };
  } catch (error) {
    await forwarder?.close();
    await lab.destroy();
    throw error;
  }
}
