import { X509Certificate } from 'node:crypto';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGet, tcpExchange } from '../harness/clients.js';
import { httpsRequest } from '../harness/https.js';
import { runAllowingFailure } from '../harness/exec.js';
import { killNamespaceProcesses, listNamespaceProcesses } from '../harness/netns-processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { GATEWAY_REDIAL_BOUND_MS } from '../harness/wireguard.js';
import { connectNode, startSystem, stopSystem, type ConnectedNode, type System } from './fixture.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// Crash recovery: after SIGKILL and a restart, the gateway serves the same services from its database alone,
// without any API call, and stays in control of the data plane. A restart takes the certificate records' word for
// the PEMs on disk and checks each file as it hands it to nginx (dataplane/certs/recorded.ts): one deleted, one
// corrupted, and one empty and one cut short as a power cut can leave a self-signed PEM (written without fsync:
// dataplane/README.md "A new domain's certificate") are replaced and served, the others left as they are.

const HTTP_BACKEND = 8080;
const TCP_BACKEND = 7000;
/**
 * Rebuild + the node's new session with the rebuilt interface: the gateway remembers each node's endpoint in its
 * data dir and dials it at once (GATEWAY_REDIAL_BOUND_MS); boot itself takes a few seconds.
 */
const RECOVERY_DEADLINE_MS = 20_000 + GATEWAY_REDIAL_BOUND_MS;
/** Boot (up to 30 s) + recovery + the checks after it: above the config's default so a timeout names its wait. */
const RESTART_TEST_TIMEOUT_MS = RECOVERY_DEADLINE_MS + 60_000;
/** Domains whose PEM the power cut test deletes, corrupts, empties and cuts short while the gateway is down. */
const DAMAGED = ['gone.e2e.test', 'garbled.e2e.test', 'empty.e2e.test', 'truncated.e2e.test'];

describe.skipIf(!canRun('netns', 'server-build'))('gateway crash recovery', () => {
  let system: System;
  let node: ConnectedNode;
  let gatewayIp = '';
  let client = '';

  const servedBy = async (domain: string): Promise<boolean> => {
    const answer = await httpGet(client, `https://${domain}/`, { connectTo: gatewayIp, timeoutMs: 2000 });
    return answer.status === 200 && answer.body.includes('"node1"');
  };
  const tcpServed = async (): Promise<boolean> =>
    (await tcpExchange(client, gatewayIp, 30020, 'hello', { timeoutMs: 2000 })).reply === 'node1:hello';
  /** The certificate the gateway presents for `domain` (SHA-256), over its management link. */
  const servedFingerprint = async (domain: string): Promise<string> =>
    (await httpsRequest({ address: system.topology.gatewayMgmtIp, host: domain }, '/')).fingerprint;
  const pemFile = (domain: string): string => join(system.gateway.dataDir, 'certs', `${domain}.pem`);
  const bothServed = async (): Promise<boolean> => (await servedBy('crash.e2e.test')) && (await tcpServed());
  const countRunning = async (pattern: RegExp): Promise<number> =>
    (await listNamespaceProcesses(system.topology.gatewayNs)).filter((entry) => pattern.test(entry.command)).length;

  beforeAll(async () => {
    system = await startSystem();
    gatewayIp = system.topology.gatewayPublicIp;
    client = system.topology.clientNs;
    node = await connectNode(system, 'node1', 11);
    await node.serve('http', HTTP_BACKEND);
    await node.serve('tcp', TCP_BACKEND);
    await system.api.createHttpService(node.node.id, {
      name: 'crash-http',
      domain: 'crash.e2e.test',
      backendHost: node.tunnelIp,
      backendPort: HTTP_BACKEND,
    });
    await system.api.createTcpService(node.node.id, {
      name: 'crash-tcp',
      proto: 'tcp',
      port: 30020,
      backendHost: node.tunnelIp,
      backendPort: TCP_BACKEND,
    });
    for (const domain of DAMAGED)
      await system.api.createHttpService(node.node.id, {
        name: domain.split('.')[0] ?? domain,
        domain,
        backendHost: node.tunnelIp,
        backendPort: HTTP_BACKEND,
      });
    await waitFor(bothServed, { timeoutMs: 15_000, what: 'both services to be served' });
    await waitFor(async () => (await Promise.all(DAMAGED.map(servedBy))).every(Boolean), {
      timeoutMs: 15_000,
      what: 'the services whose certificates the power cut test damages to be served',
    });
    // The power cut takes wireguard-go with it: the rebuilt interface reaches the node first only from the endpoint
    // the gateway's 2 s status poll saved in its data dir (the node's session with the dead interface lingers until
    // it expires). That poll also gives the node its handshake time, so once the API shows one the file holds the
    // endpoint (as backup.test.ts waits before its backup).
    await waitFor(async () => (await system.api.getNode(node.node.id)).latestHandshakeTimestamp !== null, {
      timeoutMs: 10_000,
      what: 'the gateway to report the node’s handshake',
    });
  });

  afterAll(async () => {
    expect(await stopSystem(system)).toEqual([]);
  });

  it(
    'serves the same services after SIGKILL of the server and a restart, without any API call',
    async () => {
      await system.gateway.kill();
      await system.gateway.restart();
      await waitFor(bothServed, {
        timeoutMs: RECOVERY_DEADLINE_MS,
        intervalMs: 500,
        what: 'the HTTP and TCP services to be served again after the restart',
      });
      // Converged to one data plane, not a second one beside what the killed server left running: the HTTP instance
      // and the TCP service's own nginx, and one wireguard-go.
      expect(await countRunning(/^nginx: master .*\/current\/nginx\.conf/)).toBe(1);
      expect(await countRunning(/^nginx: master .*\/stream\/tcp-30020\//)).toBe(1);
      expect(await countRunning(/^nginx: master/)).toBe(2);
      expect(await countRunning(/^wireguard-go /)).toBe(1);
      // The restarted server drives that data plane: a change made now is served.
      const api = await system.gateway.login();
      await api.createHttpService(node.node.id, {
        name: 'after-crash',
        domain: 'after.e2e.test',
        backendHost: node.tunnelIp,
        backendPort: HTTP_BACKEND,
      });
      await waitFor(() => servedBy('after.e2e.test'), {
        timeoutMs: 15_000,
        what: 'a service created after the restart to be served',
      });
    },
    RESTART_TEST_TIMEOUT_MS,
  );

  it(
    'rebuilds WireGuard and nginx from the database when the whole gateway host went down',
    async () => {
      await system.gateway.kill();
      // A power cut: nginx and wireguard-go die with the server.
      await killNamespaceProcesses(system.topology.gatewayNs);
      expect(await bothServed()).toBe(false);
      // Meanwhile one domain's PEM is deleted and another's corrupted; two more are what a power cut leaves of a PEM
      // written without fsync: an empty file, and one cut in the middle of its certificate. The fresh nginx cannot
      // load them from disk.
      const kept = {
        pem: await readFile(pemFile('crash.e2e.test'), 'utf8'),
        at: (await stat(pemFile('crash.e2e.test'))).mtimeMs,
      };
      await rm(pemFile('gone.e2e.test'));
      await writeFile(pemFile('garbled.e2e.test'), 'not a certificate\n', { mode: 0o600 });
      await writeFile(pemFile('empty.e2e.test'), '', { mode: 0o600 });
      const whole = await readFile(pemFile('truncated.e2e.test'), 'utf8');
      await writeFile(pemFile('truncated.e2e.test'), whole.slice(0, whole.length - 200), { mode: 0o600 });
      await system.gateway.restart();
      await waitFor(bothServed, {
        timeoutMs: RECOVERY_DEADLINE_MS,
        intervalMs: 500,
        what: 'the HTTP and TCP services to be served again after the rebuild',
      }).catch(async (error: unknown) => {
        // Say what the gateway was doing: a timeout alone does not tell a slow boot from a tunnel that never came back.
        const [http, tcp] = [await servedBy('crash.e2e.test'), await tcpServed()];
        // Whether the gateway knows where the node is (a peer without an endpoint waits for the node to dial).
        const wg = await runAllowingFailure('ip', [
          'netns',
          'exec',
          system.topology.gatewayNs,
          'wg',
          'show',
          'all',
          'dump',
        ]);
        throw new Error(
          `${error instanceof Error ? error.message : String(error)}\nHTTP served: ${String(http)}, TCP served: ${String(tcp)}\nwg dump:\n${wg.stdout}${wg.stderr}\ngateway output:\n${system.gateway.process.text.slice(-3000)}`,
        );
      });
      // The damaged ones have a certificate for their name again, and it is the one served; the others untouched.
      for (const domain of DAMAGED) {
        const pem = await readFile(pemFile(domain), 'utf8').catch(() => '');
        const certificate = pem.includes('BEGIN CERTIFICATE') ? new X509Certificate(pem) : null;
        expect(certificate?.checkHost(domain), `${domain}'s PEM on disk`).toBe(domain);
        await waitFor(async () => (await servedFingerprint(domain)) === certificate?.fingerprint256, {
          timeoutMs: 10_000,
          what: `${domain} to be served with its new certificate`,
        }).catch(async (error: unknown) => {
          // Which certificate nginx serves instead, and what the gateway said of the domain.
          const said = system.gateway.process.text.split('\n').filter((line) => line.includes(domain));
          throw new Error(
            `${error instanceof Error ? error.message : String(error)}\nserved ${await servedFingerprint(domain)}, ` +
              `on disk ${String(certificate?.fingerprint256)}\ngateway output on ${domain}:\n${said.join('\n')}`,
          );
        });
        expect(await servedBy(domain)).toBe(true);
      }
      expect(await readFile(pemFile('crash.e2e.test'), 'utf8')).toBe(kept.pem);
      expect((await stat(pemFile('crash.e2e.test'))).mtimeMs).toBe(kept.at);
    },
    RESTART_TEST_TIMEOUT_MS,
  );
});
