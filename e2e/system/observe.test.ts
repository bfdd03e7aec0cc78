import { join } from 'node:path';
import { operations, type ServiceHealth, type ServiceType } from '@postern/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../harness/backends.js';
import { httpGet, type HttpAnswer } from '../harness/clients.js';
import { runAllowingFailure, runInAllowingFailure } from '../harness/exec.js';
import type { ManagedProcess } from '../harness/processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { connectNode, startSystem, stopSystem, type ConnectedNode, type System } from './fixture.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// What the gateway observes of itself, with real nginx and WireGuard (docs/api.md "Observability"): traffic counted per
// service and status class, backend health through the tunnel, and drift introduced by hand reported and repaired.

const BACKEND_PORT = 8080;
/** The backend the health checks watch: a process of its own, so stopping it leaves the traffic services alone. */
const CHECKED_PORT = 8081;
const APPLY_DEADLINE_MS = 15_000;
/** The shortest health interval the API accepts; the state must change within two of them. */
const HEALTH_INTERVAL_SECONDS = 5;
/** POSTERN_DRIFT_CHECK_INTERVAL for this gateway, so a test sees a scheduled check without waiting a minute. */
const DRIFT_INTERVAL_SECONDS = 2;

describe.skipIf(!canRun('netns', 'server-build'))('observing the gateway', () => {
  let system: System;
  let node: ConnectedNode;
  let checked: ManagedProcess;
  let gatewayIp = '';

  const get = (url: string): Promise<HttpAnswer> => httpGet(system.topology.clientNs, url, { connectTo: gatewayIp });
  const label = (answer: HttpAnswer): string | undefined => {
    try {
      return answer.status === 200 ? (JSON.parse(answer.body) as { label?: string }).label : undefined;
    } catch {
      return undefined;
    }
  };
  /** Waits for the service's first 200 from the node: exactly one request the service counts. */
  const waitUntilServed = (url: string) =>
    waitFor(async () => label(await get(url)) === 'node1', {
      timeoutMs: APPLY_DEADLINE_MS,
      what: `${url} to be served`,
    });
  const traffic = (type: ServiceType, id: number) =>
    system.api.call(operations.serviceTraffic, { params: { nodeId: node.node.id, type, id }, query: { minutes: 60 } });
  const healthOf = async (id: number): Promise<ServiceHealth | null> => {
    const { data } = await system.api.call(operations.serviceFigures, {
      query: { nodeId: node.node.id, type: 'http' },
    });
    return data.find((row) => row.id === id)?.health ?? null;
  };
  const gatewayPeers = async (): Promise<string[]> => {
    const result = await runInAllowingFailure(system.topology.gatewayNs, 'wg', [
      'show',
      system.lab.ifName('gw'),
      'peers',
    ]);
    return result.stdout.split('\n').filter(Boolean);
  };

  beforeAll(async () => {
    system = await startSystem(undefined, { POSTERN_DRIFT_CHECK_INTERVAL: String(DRIFT_INTERVAL_SECONDS) });
    gatewayIp = system.topology.gatewayPublicIp;
    node = await connectNode(system, 'node1', 11);
    await node.serve('http', BACKEND_PORT);
    checked = await startBackend(system.lab, node.ns, 'http', node.tunnelIp, CHECKED_PORT, 'node1');
  });

  afterAll(async () => {
    expect(await stopSystem(system)).toEqual([]);
  });

  it('counts the requests of two services exactly, by status class', async () => {
    const one = await system.api.createHttpService(node.node.id, {
      name: 'count-one',
      domain: 'one.obs.e2e.test',
      backendHost: node.tunnelIp,
      backendPort: BACKEND_PORT,
    });
    const two = await system.api.createHttpService(node.node.id, {
      name: 'count-two',
      domain: 'two.obs.e2e.test',
      backendHost: node.tunnelIp,
      backendPort: BACKEND_PORT,
    });
    await waitUntilServed('https://one.obs.e2e.test/ready');
    await waitUntilServed('https://two.obs.e2e.test/ready');

    const send = async (host: string, path: string, times: number, status: number) => {
      for (let i = 0; i < times; i++) expect((await get(`https://${host}${path}`)).status).toBe(status);
    };
    await send('one.obs.e2e.test', '/', 4, 200);
    await send('one.obs.e2e.test', '/status/404', 3, 404);
    await send('one.obs.e2e.test', '/status/500', 2, 500);
    await send('two.obs.e2e.test', '/', 6, 200);
    await send('two.obs.e2e.test', '/status/503', 1, 503);

    // Each count includes the one request that found the service served.
    const expected = {
      [one.id]: { requests: 10, status: { '1xx': 0, '2xx': 5, '3xx': 0, '4xx': 3, '5xx': 2 } },
      [two.id]: { requests: 8, status: { '1xx': 0, '2xx': 7, '3xx': 0, '4xx': 0, '5xx': 1 } },
    };
    for (const service of [one, two]) {
      const want = expected[service.id];
      const { summary, points } = await waitFor(
        async () => {
          const answer = await traffic('http', service.id);
          return answer.summary.type === 'http' && answer.summary.requests === want?.requests && answer;
        },
        { timeoutMs: 10_000, what: `service ${service.name} to count ${want?.requests} requests` },
      );
      expect(summary).toMatchObject({ type: 'http', ...want });
      expect(points.reduce((sum, point) => sum + point.requests, 0)).toBe(want?.requests);
      expect(points.reduce((sum, point) => sum + point.errors, 0)).toBe(want?.status['5xx']);
    }
  });

  it('sees a stopped backend go down within two intervals and come up again after it is restarted', async () => {
    const service = await system.api.createHttpService(node.node.id, {
      name: 'checked',
      domain: 'checked.obs.e2e.test',
      backendHost: node.tunnelIp,
      backendPort: CHECKED_PORT,
    });
    const set = await system.api.call(operations.updateHealthCheck, {
      params: { nodeId: node.node.id, type: 'http', id: service.id },
      body: { intervalSeconds: HEALTH_INTERVAL_SECONDS, timeoutSeconds: 2 },
    });
    expect(set).toMatchObject({ intervalSeconds: HEALTH_INTERVAL_SECONDS, timeoutSeconds: 2 });
    await waitFor(async () => (await healthOf(service.id))?.state === 'up', {
      timeoutMs: APPLY_DEADLINE_MS,
      what: 'the backend to be up',
    });

    await checked.stop();
    const down = await waitFor(
      async () => {
        const health = await healthOf(service.id);
        return health?.state === 'down' && health;
      },
      { timeoutMs: 2 * HEALTH_INTERVAL_SECONDS * 1000, what: 'the stopped backend to be down within two intervals' },
    );
    expect(down.lastError).toBe('connection refused');

    checked = await startBackend(system.lab, node.ns, 'http', node.tunnelIp, CHECKED_PORT, 'node1');
    const up = await waitFor(
      async () => {
        const health = await healthOf(service.id);
        return health?.state === 'up' && health;
      },
      { timeoutMs: 2 * HEALTH_INTERVAL_SECONDS * 1000, what: 'the restarted backend to be up within two intervals' },
    );
    expect(up.lastError).toBeNull();
    const status = await system.api.call(operations.systemStatus);
    expect(status.health.down).toBe(0);
    // How full nginx's shared dictionaries are, read from the running nginx.
    const routes = status.dictionaries?.find((dict) => dict.name === 'gw_routes');
    expect(routes?.capacityBytes).toBe(16 * 1024 * 1024);
    expect(routes?.freeBytes).toBeGreaterThan(0);
    expect(status.dictionaries?.map((dict) => dict.name)).toEqual([
      'gw_routes',
      'gw_certs',
      'gw_acme',
      'gw_live',
      'gw_stats',
      'gw_access',
    ]);
  });

  /** Waits for a drift check that began after `since` and found something, then for the next one to find nothing. */
  async function expectDriftReportedAndRepaired(since: number, what: RegExp): Promise<void> {
    const report = await waitFor(
      async () => {
        const { drift } = await system.api.call(operations.systemStatus);
        return drift !== null && Date.parse(drift.checkedAt) > since && drift.differences.length > 0 && drift;
      },
      { timeoutMs: 4 * DRIFT_INTERVAL_SECONDS * 1000 + 5000, what: 'the drift check to report the difference' },
    );
    expect(report.differences.some((difference) => what.test(difference))).toBe(true);
    expect(report.repaired).toBe(true);
    const repairedAt = Date.parse(report.checkedAt);
    await waitFor(
      async () => {
        const { drift } = await system.api.call(operations.systemStatus);
        return drift !== null && Date.parse(drift.checkedAt) > repairedAt && drift.differences.length === 0;
      },
      { timeoutMs: 4 * DRIFT_INTERVAL_SECONDS * 1000 + 5000, what: 'the next drift check to find nothing' },
    );
  }

  it('reports a WireGuard peer removed by hand and puts it back', async () => {
    const [peer] = await gatewayPeers();
    expect(peer).toBeDefined();
    const since = Date.now();
    expect(
      (
        await runInAllowingFailure(system.topology.gatewayNs, 'wg', [
          'set',
          system.lab.ifName('gw'),
          'peer',
          peer ?? '',
          'remove',
        ])
      ).code,
    ).toBe(0);
    expect(await gatewayPeers()).not.toContain(peer);
    await expectDriftReportedAndRepaired(since, /peer/i);
    expect(await gatewayPeers()).toContain(peer);
    await waitUntilServed('https://one.obs.e2e.test/after-peer-drift');
  });

  it('reports a route pushed into nginx by hand and takes it out again', async () => {
    const socket = join(system.gateway.dataDir, 'nginx', 'control', 'control.sock');
    const control = (args: string[]) => runAllowingFailure('curl', ['-sS', '--unix-socket', socket, ...args]);
    const state = JSON.parse((await control(['http://localhost/state'])).stdout) as { version: string };
    const since = Date.now();
    const pushed = await control([
      '-X',
      'POST',
      '-H',
      'content-type: application/json',
      'http://localhost/routes',
      '--data',
      JSON.stringify({ base: state.version, version: `${state.version}-by-hand`, set: { 'bogus.obs.e2e.test': '[]' } }),
    ]);
    expect(pushed.stdout).toContain('by-hand');
    await expectDriftReportedAndRepaired(since, /bogus\.obs\.e2e\.test/);
    const digest = JSON.parse((await control(['http://localhost/digest'])).stdout) as { hosts: Record<string, string> };
    expect(Object.keys(digest.hosts)).not.toContain('bogus.obs.e2e.test');
    await waitUntilServed('https://two.obs.e2e.test/after-route-drift');
  });
});
