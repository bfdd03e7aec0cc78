import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type ApiClient } from '../harness/api.js';
import { httpGet, tcpExchange } from '../harness/clients.js';
import { runInAllowingFailure } from '../harness/exec.js';
import { listNamespaceProcesses } from '../harness/netns-processes.js';
import { Lab } from '../harness/lab.js';
import { startLabPostgres, type LabPostgres } from '../harness/postgres.js';
import { elapsedSince, waitFor } from '../../apps/server/src/test/wait-for.js';
import { GATEWAY_REDIAL_BOUND_MS } from '../harness/wireguard.js';
import { connectNode, startSystem, type ConnectedNode, type System } from './fixture.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// The built gateway with its store on PostgreSQL (POSTERN_DATABASE_URL), under the real data plane: a private
// PostgreSQL runs in the gateway's namespace. After SIGKILL and a restart the gateway serves from that database
// alone; with the database stopped, traffic goes on, writes answer 503 database_unavailable, and resume once it is
// back.

const HTTP_BACKEND = 8080;
const TCP_BACKEND = 7000;
const TCP_PORT = 30020;
/** As restart.test.ts: boot + the node's new session with the rebuilt interface. */
const RECOVERY_DEADLINE_MS = 20_000 + GATEWAY_REDIAL_BOUND_MS;
const RESTART_TEST_TIMEOUT_MS = RECOVERY_DEADLINE_MS + 60_000;
/** The store's connect timeout is 5 s; a refused connection is told at once. */
const WRITE_ANSWER_DEADLINE_MS = 15_000;
/** PostgreSQL's start + the pool replacing the connections the stop ended. */
const WRITE_RESUME_DEADLINE_MS = 30_000;
const OUTAGE_TEST_TIMEOUT_MS = WRITE_ANSWER_DEADLINE_MS + WRITE_RESUME_DEADLINE_MS + 60_000;

/** The API's error answer, or a test failure naming what came instead. */
function errorAnswer(error: unknown): { status: number; code: unknown } {
  if (!(error instanceof ApiError)) throw error instanceof Error ? error : new Error(String(error));
  const body = JSON.parse(error.body) as { code?: unknown };
  return { status: error.status, code: body.code };
}

describe.skipIf(!canRun('netns', 'server-build', 'postgres-binaries'))('gateway on PostgreSQL', () => {
  const lab = new Lab();
  let system: System | undefined;
  let postgres: LabPostgres | undefined;
  let node: ConnectedNode;
  let gatewayIp = '';
  let client = '';
  let gatewayNs = '';

  const servedBy = async (domain: string): Promise<boolean> => {
    const answer = await httpGet(client, `https://${domain}/`, { connectTo: gatewayIp, timeoutMs: 2000 });
    return answer.status === 200 && answer.body.includes('"node1"');
  };
  const tcpServed = async (): Promise<boolean> =>
    (await tcpExchange(client, gatewayIp, TCP_PORT, 'hello', { timeoutMs: 2000 })).reply === 'node1:hello';
  const bothServed = async (): Promise<boolean> => (await servedBy('pg.e2e.test')) && (await tcpServed());
  const gateway = () => {
    if (system === undefined) throw new Error('the system did not start');
    return system.gateway;
  };
  const database = (): LabPostgres => {
    if (postgres === undefined) throw new Error('PostgreSQL did not start');
    return postgres;
  };

  beforeAll(async () => {
    system = await startSystem(lab, async (topology) => {
      postgres = await startLabPostgres(lab, topology.gatewayNs);
      return { POSTERN_DATABASE_URL: postgres.url };
    });
    gatewayIp = system.topology.gatewayPublicIp;
    client = system.topology.clientNs;
    gatewayNs = system.topology.gatewayNs;
    node = await connectNode(system, 'node1', 11);
    await node.serve('http', HTTP_BACKEND);
    await node.serve('tcp', TCP_BACKEND);
    await system.api.createHttpService(node.node.id, {
      name: 'pg-http',
      domain: 'pg.e2e.test',
      backendHost: node.tunnelIp,
      backendPort: HTTP_BACKEND,
    });
    await system.api.createTcpService(node.node.id, {
      name: 'pg-tcp',
      proto: 'tcp',
      port: TCP_PORT,
      backendHost: node.tunnelIp,
      backendPort: TCP_BACKEND,
    });
    await waitFor(bothServed, { timeoutMs: 15_000, what: 'both services to be served' });
    // The gateway's status poll has seen the node's handshake: it saved the endpoint it redials when its WireGuard is
    // rebuilt (without it the node's stale session takes minutes to time out).
    const api = system.api;
    await waitFor(async () => (await api.getNode(node.node.id)).status === 'online', {
      timeoutMs: 15_000,
      what: 'the node to be shown online',
    });
  }, 120_000);

  afterAll(async () => {
    await postgres?.stop();
    await lab.destroy();
    expect(lab.leftovers()).toEqual([]);
  });

  it(
    'serves the same services after SIGKILL of the server and a restart, from the PostgreSQL database alone',
    async () => {
      // The state is in PostgreSQL: the data dir holds no embedded database.
      expect(existsSync(join(gateway().dataDir, 'postern.db'))).toBe(false);
      await gateway().kill();
      // The gateway host's data plane goes too (nginx and wireguard-go would otherwise serve on unchanged): what is
      // served after the restart was rebuilt from what the database holds. PostgreSQL itself lives on.
      const dataPlane = (await listNamespaceProcesses(gatewayNs)).filter(({ command }) =>
        /^(nginx|wireguard-go)\b/.test(command),
      );
      expect(dataPlane.length).toBeGreaterThan(0);
      for (const { pid } of dataPlane) process.kill(pid, 'SIGKILL');
      await waitFor(async () => !(await servedBy('pg.e2e.test')), { timeoutMs: 5000, what: 'the HTTP service to go' });
      await gateway().restart();
      await waitFor(bothServed, {
        timeoutMs: RECOVERY_DEADLINE_MS,
        intervalMs: 500,
        what: 'the HTTP and TCP services to be served again after the restart',
      }).catch(async (error: unknown) => {
        // As restart.test.ts: tell a slow boot from a tunnel that never came back.
        const [http, tcp] = [await servedBy('pg.e2e.test'), await tcpServed()];
        const wg = await runInAllowingFailure(gatewayNs, 'wg', ['show', 'all', 'dump']);
        throw new Error(
          `${error instanceof Error ? error.message : String(error)}\nHTTP served: ${String(http)}, TCP served: ${String(tcp)}\nwg dump:\n${wg.stdout}${wg.stderr}\ngateway output:\n${gateway().process.text.slice(-3000)}`,
        );
      });
      expect(existsSync(join(gateway().dataDir, 'postern.db'))).toBe(false);
    },
    RESTART_TEST_TIMEOUT_MS,
  );

  it(
    'keeps serving while PostgreSQL is down, answers writes 503 database_unavailable, and takes them once it is back',
    async () => {
      const api: ApiClient = await gateway().login();
      // A client fetching the HTTP service one request after another for the whole outage.
      const outcomes = { ok: 0, failed: [] as string[] };
      const stopFetching = new AbortController();
      const fetcher = (async () => {
        while (!stopFetching.signal.aborted) {
          const answer = await httpGet(client, 'https://pg.e2e.test/', { connectTo: gatewayIp, timeoutMs: 2000 });
          if (answer.status === 200 && answer.body.includes('"node1"')) outcomes.ok += 1;
          else outcomes.failed.push(`${answer.status} ${answer.error}`);
        }
      })();
      const figures = { servedDuringOutage: 0, toUnavailableMs: 0, toRecoverMs: 0 };
      try {
        await waitFor(() => outcomes.ok >= 3, { timeoutMs: 10_000, what: 'the client to be served before the outage' });

        const write = () =>
          api.createHttpService(node.node.id, {
            name: 'pg-outage',
            domain: 'outage.e2e.test',
            backendHost: node.tunnelIp,
            backendPort: HTTP_BACKEND,
          });

        await database().stop();
        const downAt = performance.now();
        const servedBeforeOutage = outcomes.ok;
        const refused = await write().then(
          () => ({ status: 201, code: 'created while the database was down' }),
          (error: unknown) => {
            if (error instanceof ApiError) return errorAnswer(error);
            const server = gateway().process;
            throw new Error(
              `the write got no answer (${String(error)}); server running: ${String(server.isRunning)}\n${server.text.slice(-3000)}`,
            );
          },
        );
        figures.toUnavailableMs = elapsedSince(downAt);
        expect(refused).toEqual({ status: 503, code: 'database_unavailable' });
        // Traffic goes on while the database stays down.
        await waitFor(() => outcomes.ok >= servedBeforeOutage + 20, {
          timeoutMs: 20_000,
          what: '20 requests served during the outage',
        });
        figures.servedDuringOutage = outcomes.ok - servedBeforeOutage;

        await database().start();
        const upAt = performance.now();
        // Until the store has a live connection again the write is refused the same way; any other answer is a bug.
        await waitFor(
          () =>
            write().then(
              () => true,
              (error: unknown) => {
                const answer = errorAnswer(error);
                if (answer.status === 503 && answer.code === 'database_unavailable') return false;
                throw new Error(
                  `the write answered ${answer.status} ${String(answer.code)} after the database came back`,
                );
              },
            ),
          {
            timeoutMs: WRITE_RESUME_DEADLINE_MS,
            intervalMs: 250,
            what: 'the write to succeed after PostgreSQL started',
          },
        );
        figures.toRecoverMs = elapsedSince(upAt);
        await waitFor(() => servedBy('outage.e2e.test'), {
          timeoutMs: 15_000,
          what: 'the service written after the outage to be served',
        });
      } finally {
        stopFetching.abort();
        await fetcher;
      }
      expect(outcomes.failed).toEqual([]);
      console.info(
        `PostgreSQL outage: ${figures.servedDuringOutage} requests served while down, 0 failed of ${outcomes.ok}; ` +
          `503 after ${figures.toUnavailableMs} ms; the write succeeded ${figures.toRecoverMs} ms after the start`,
      );
    },
    OUTAGE_TEST_TIMEOUT_MS,
  );
});
