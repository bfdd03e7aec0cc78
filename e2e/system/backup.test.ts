import { join } from 'node:path';
import { operations, type AnyService } from '@postern/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../harness/api.js';
import { httpGet, tcpExchange } from '../harness/clients.js';
import { runAllowingFailure } from '../harness/exec.js';
import { ADMIN, startGateway, type Gateway } from '../harness/gateway.js';
import { httpsRequest } from '../harness/https.js';
import { killNamespaceProcesses } from '../harness/netns-processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { GATEWAY_REDIAL_BOUND_MS } from '../harness/wireguard.js';
import { connectNode, startSystem, stopSystem, type ConnectedNode, type System } from './fixture.js';
import { canRun, SERVER_ENTRY } from '../../apps/server/src/test/requirements.js';

// Backup and restore: a backup taken from a running gateway under a steady stream of API writes, restored
// into a new data directory, boots a gateway that serves the same services with the same certificates and accepts
// the same node token and admin password.

const HTTP_BACKEND = 8080;
const TCP_BACKEND = 7000;
const DOMAIN = 'backup.e2e.test';
const TCP_PORT = 30030;
/** Writes made while the backup runs (bounded: the test stops by itself). */
const MAX_WRITES = 400;
const TEST_TIMEOUT_MS = 180_000;

describe.skipIf(!canRun('netns', 'server-build'))('backup and restore of a running gateway', () => {
  let system: System;
  let node: ConnectedNode;
  let gatewayIp = '';

  const servedHttp = async (): Promise<boolean> => {
    const answer = await httpGet(system.topology.clientNs, `https://${DOMAIN}/`, {
      connectTo: gatewayIp,
      timeoutMs: 2000,
    });
    return answer.status === 200 && answer.body.includes('"node1"');
  };
  const servedTcp = async (): Promise<boolean> =>
    (await tcpExchange(system.topology.clientNs, gatewayIp, TCP_PORT, 'hello', { timeoutMs: 2000 })).reply ===
    'node1:hello';
  const fingerprintOf = async (host: string): Promise<string> =>
    (await httpsRequest({ address: system.topology.gatewayMgmtIp, host }, '/')).fingerprint;
  const allServices = async (api: ApiClient): Promise<AnyService[]> => {
    const found: AnyService[] = [];
    for (const operation of [operations.listHttpServices, operations.listTcpServices]) {
      for (let page = 1; ; page += 1) {
        const { data } = await api.call(operation, { query: { page, limit: 100 } });
        found.push(...data);
        if (data.length < 100) break;
      }
    }
    return found;
  };

  beforeAll(async () => {
    system = await startSystem();
    gatewayIp = system.topology.gatewayPublicIp;
    node = await connectNode(system, 'node1', 11);
    await node.serve('http', HTTP_BACKEND);
    await node.serve('tcp', TCP_BACKEND);
    await system.api.createHttpService(node.node.id, {
      name: 'kept-http',
      domain: DOMAIN,
      backendHost: node.tunnelIp,
      backendPort: HTTP_BACKEND,
    });
    await system.api.createTcpService(node.node.id, {
      name: 'kept-tcp',
      proto: 'tcp',
      port: TCP_PORT,
      backendHost: node.tunnelIp,
      backendPort: TCP_BACKEND,
    });
    await waitFor(async () => (await servedHttp()) && (await servedTcp()), {
      timeoutMs: 15_000,
      what: 'both services to be served',
    });
    // A restored gateway reaches a node first (the node's session with the lost gateway lingers until it expires):
    // it needs the node's endpoint, which the backup carries from the file the gateway's 2 s status poll saves. That
    // poll also gives the node its handshake time, so once the API shows one the file holds the endpoint. Without
    // this wait a backup taken within 2 s of the node's first handshake left the restored gateway with no endpoint
    // for it (seen once in CI: "no known endpoint for peer").
    await waitFor(async () => (await system.api.getNode(node.node.id)).latestHandshakeTimestamp !== null, {
      timeoutMs: 10_000,
      what: 'the gateway to report the node’s handshake',
    });
  }, TEST_TIMEOUT_MS);

  afterAll(async () => {
    expect(await stopSystem(system)).toEqual([]);
  });

  it(
    'restores a backup taken under load into a gateway that serves the same services, certificates, token and password',
    async () => {
      const before = {
        services: await allServices(system.api),
        domainCert: await fingerprintOf(DOMAIN),
        consoleCert: await fingerprintOf(system.topology.gatewayPublicIp),
      };

      // A steady stream of writes through the API while the backup command runs beside the gateway.
      let writes = 0;
      let isWriting = true;
      const writer = (async () => {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- cleared by the test once it has seen enough
        while (isWriting && writes < MAX_WRITES) {
          await system.api.createHttpService(node.node.id, {
            name: `w${writes}`,
            pathLocation: `/w${writes}`,
            backendHost: node.tunnelIp,
            backendPort: HTTP_BACKEND,
          });
          writes += 1;
        }
      })();
      await waitFor(() => writes >= 5, { timeoutMs: 15_000, what: 'the first writes' });
      const writesAtStart = writes;
      const archive = join(system.lab.makeTempDir('backup'), 'gateway.tar.gz');
      const backup = await runAllowingFailure(process.execPath, [SERVER_ENTRY, 'backup', archive], {
        env: { PATH: process.env.PATH, POSTERN_DATA_DIR: system.gateway.dataDir },
      });
      const writesAtEnd = writes;
      isWriting = false;
      await writer;
      expect(backup).toMatchObject({ code: 0 });
      expect(writesAtEnd).toBeGreaterThan(writesAtStart);

      // The old gateway goes away entirely (a lost host); the node keeps its WireGuard config.
      await system.gateway.kill();
      await killNamespaceProcesses(system.topology.gatewayNs);
      expect(await servedHttp()).toBe(false);

      const restoredDir = system.lab.makeTempDir('restored');
      const restore = await runAllowingFailure(
        process.execPath,
        [SERVER_ENTRY, 'restore', '--data-dir', restoredDir, archive],
        { env: { PATH: process.env.PATH } },
      );
      expect(restore).toMatchObject({ code: 0 });
      // A second restore into the now filled directory is refused.
      const again = await runAllowingFailure(
        process.execPath,
        [SERVER_ENTRY, 'restore', '--data-dir', restoredDir, archive],
        { env: { PATH: process.env.PATH } },
      );
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('not empty');

      const restored: Gateway = await startGateway(system.lab, {
        ns: system.topology.gatewayNs,
        apiIp: system.topology.gatewayMgmtIp,
        publicHost: gatewayIp,
        wgInterface: system.lab.ifName('gw'),
        dataDir: restoredDir,
        // Ignored once an admin exists: signing in with ADMIN's password below proves it came from the backup.
        env: { POSTERN_ADMIN_PASSWORD: 'not-the-restored-password' },
      });
      const api = await restored.login();
      expect(ADMIN.password).not.toBe('not-the-restored-password');

      const after = await allServices(api);
      const names = new Set(after.map((service) => service.name));
      for (const service of before.services)
        expect(after).toContainEqual(expect.objectContaining({ id: service.id, name: service.name }));
      // Every write the API had answered before the backup started is in it; none beyond what was answered by its end.
      for (let index = 0; index < writesAtStart; index += 1) expect(names).toContain(`w${index}`);
      expect(after.length).toBeLessThanOrEqual(before.services.length + writesAtEnd + 1);

      await waitFor(async () => (await servedHttp()) && (await servedTcp()), {
        timeoutMs: 30_000 + GATEWAY_REDIAL_BOUND_MS,
        intervalMs: 500,
        what: 'the restored gateway to serve the HTTP and TCP services through the node',
      });
      expect(await fingerprintOf(DOMAIN)).toBe(before.domainCert);
      expect(await fingerprintOf(gatewayIp)).toBe(before.consoleCert);

      // The node's access token from before the backup still works on the restored gateway.
      const agent = new ApiClient(restored.baseUrl, node.node.token);
      expect(await agent.call(operations.agentNode)).toMatchObject({ id: node.node.id });
    },
    TEST_TIMEOUT_MS,
  );
});
