import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpService, TcpService } from '@postern/contract';
import { readChildPids } from '../../apps/server/src/dataplane/nginx/process-info.js';
import { ApiError } from '../harness/api.js';
import { runInAllowingFailure } from '../harness/exec.js';
import { httpGet } from '../harness/clients.js';
import { listNamespaceProcesses } from '../harness/netns-processes.js';
import { holdHttp, holdTcp, startProbes, type HeldConnection } from '../harness/probes.js';
import { elapsedSince, waitFor } from '../../apps/server/src/test/wait-for.js';
import { connectNode, startSystem, stopSystem, type ConnectedNode, type System } from './fixture.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// The data plane in the field: a change to one service never disturbs another, a disabled service is cut
// precisely, a restart of the control plane loses nothing, dead parts come back by themselves, and a row the data
// plane cannot apply is set aside while everything else keeps applying. A system of its own.

const HTTP_PORT = 8080;
const TCP_PORT = 9000;
const UDP_PORT = 9001;
/** A disabled or deleted service's (node's) open connections close within 2 s. */
const CUT_OFF_MS = 2000;
/** What died is restored within 5 s, with no API call. */
const HEAL_MS = 5000;

describe.skipIf(!canRun('netns', 'server-build'))('the data plane in the field', () => {
  let system: System;
  let node1: ConnectedNode;
  let untouchedTcp: TcpService;
  let nextPort = 30020;

  const gatewayIp = () => system.topology.gatewayPublicIp;
  const port = () => nextPort++;
  const createHttp = (node: ConnectedNode, name: string, domain: string, pathLocation = '/') =>
    system.api.createHttpService(node.node.id, {
      name,
      domain,
      pathLocation,
      backendHost: node.tunnelIp,
      backendPort: HTTP_PORT,
    });
  const createTcp = (node: ConnectedNode, name: string, publicPort: number, proto: 'tcp' | 'udp' = 'tcp') =>
    system.api.createTcpService(node.node.id, {
      name,
      port: publicPort,
      proto,
      backendHost: node.tunnelIp,
      backendPort: proto === 'tcp' ? TCP_PORT : UDP_PORT,
    });
  const holdHttpOn = (domain: string): Promise<HeldConnection> =>
    holdHttp(system.lab, system.topology.clientNs, gatewayIp(), 443, domain);
  const holdTcpOn = (publicPort: number): Promise<HeldConnection> =>
    holdTcp(system.lab, system.topology.clientNs, gatewayIp(), publicPort);
  const status = async (domain: string, path = '/', timeoutMs = 3000): Promise<number> =>
    (await httpGet(system.topology.clientNs, `https://${domain}${path}`, { connectTo: gatewayIp(), timeoutMs })).status;

  /** The HTTP instance's workers: a reload would replace them, and old ones would pile up behind open connections. */
  async function httpWorkers(): Promise<number[]> {
    const master = Number((await readFile(join(system.gateway.dataDir, 'nginx', 'nginx.pid'), 'utf8')).trim());
    return ((await readChildPids(master)) ?? []).sort();
  }

  beforeAll(async () => {
    system = await startSystem();
    node1 = await connectNode(system, 'node1', 11);
    await node1.serve('http', HTTP_PORT);
    await node1.serve('tcp', TCP_PORT);
    await node1.serve('udp', UDP_PORT);
    await createHttp(node1, 'untouched-web', 'y.e2e.test');
    untouchedTcp = await createTcp(node1, 'untouched-tcp', 30010);
  });

  afterAll(async () => {
    expect(await stopSystem(system)).toEqual([]);
  });

  it('keeps other services’ open connections flowing through 20 changes and 60 s after, with no reload and no worker left behind', async () => {
    const web = await holdHttpOn('y.e2e.test');
    const session = await holdTcpOn(30010);
    const workers = await httpWorkers();
    expect(workers.length).toBeGreaterThan(0);
    const flowing = Promise.all([web.keepsFlowingFor(75_000), session.keepsFlowingFor(75_000)]);
    const changesStarted = performance.now();
    const http: HttpService[] = [];
    const tcp: TcpService[] = [];
    for (let i = 0; i < 6; i++) http.push(await createHttp(node1, `c${i}`, `c${i}.e2e.test`));
    http.push(await createHttp(node1, 'neighbour', 'y.e2e.test', '/neighbour'));
    for (let i = 0; i < 4; i++) tcp.push(await createTcp(node1, `t${i}`, port()));
    tcp.push(await createTcp(node1, 'u0', port(), 'udp'));
    for (const service of http.slice(0, 3))
      await system.api.updateService(node1.node.id, 'http', service.id, { backendPort: HTTP_PORT + 1 });
    for (const service of tcp.slice(0, 2))
      await system.api.updateService(node1.node.id, 'tcp', service.id, { allowedIps: ['203.0.113.0/24'] });
    for (const service of http.slice(3, 5)) await system.api.disableService(node1.node.id, 'http', service.id);
    await system.api.disableService(node1.node.id, 'tcp', tcp[2]?.id ?? 0);
    for (const service of http.slice(0, 4)) await system.api.deleteService(node1.node.id, 'http', service.id);
    for (const service of tcp.slice(0, 3)) await system.api.deleteService(node1.node.id, 'tcp', service.id);
    expect(elapsedSince(changesStarted)).toBeLessThan(15_000);
    // Both kept flowing during the changes and for at least 60 s after them.
    await flowing;
    expect(web.isClosed() || session.isClosed()).toBe(false);
    expect(await httpWorkers()).toEqual(workers);
    // The changes themselves took effect.
    expect(await status('c5.e2e.test')).toBe(200);
    expect(await status('c0.e2e.test')).toBe(404);
    expect(await status('y.e2e.test', '/neighbour/x')).toBe(200);
  }, 150_000);

  it('cuts a disabled or deleted service’s open connections within 2 s, and only those', async () => {
    const a = await createHttp(node1, 'a', 'a.e2e.test');
    await createHttp(node1, 'b', 'b.e2e.test');
    const [c, d] = [await createTcp(node1, 'c', port()), await createTcp(node1, 'd', port())];
    const held = {
      a: await holdHttpOn('a.e2e.test'),
      b: await holdHttpOn('b.e2e.test'),
      c: await holdTcpOn(c.port),
      d: await holdTcpOn(d.port),
    };
    let start = performance.now();
    await system.api.disableService(node1.node.id, 'http', a.id);
    // New requests are refused at once: the domain has no service left.
    expect(await status('a.e2e.test')).toBe(404);
    await waitFor(() => held.a.isClosed(), {
      timeoutMs: CUT_OFF_MS * 2,
      intervalMs: 20,
      what: 'the disabled HTTP service’s stream to be cut',
    });
    expect(elapsedSince(start)).toBeLessThanOrEqual(CUT_OFF_MS);

    start = performance.now();
    await system.api.deleteService(node1.node.id, 'tcp', c.id);
    await waitFor(() => held.c.isClosed(), {
      timeoutMs: CUT_OFF_MS * 2,
      intervalMs: 20,
      what: 'the deleted TCP service’s session to be cut',
    });
    expect(elapsedSince(start)).toBeLessThanOrEqual(CUT_OFF_MS);
    expect(
      (
        await runInAllowingFailure(system.topology.clientNs, process.execPath, [
          '-e',
          `require('net').connect(${c.port}, '${gatewayIp()}').on('error', (e) => { console.log(e.code); process.exit(0); }).on('connect', () => process.exit(1))`,
        ])
      ).stdout.trim(),
    ).toBe('ECONNREFUSED');

    // A disabled node: all of its services' connections go, nobody else's.
    const node2 = await connectNode(system, 'node2', 12);
    await node2.serve('http', HTTP_PORT);
    await node2.serve('tcp', TCP_PORT);
    await createHttp(node2, 'e', 'e.e2e.test');
    const f = await createTcp(node2, 'f', port());
    const e2 = { e: await holdHttpOn('e.e2e.test'), f: await holdTcpOn(f.port) };
    start = performance.now();
    await system.api.disableNode(node2.node.id);
    await waitFor(() => e2.e.isClosed() && e2.f.isClosed(), {
      timeoutMs: CUT_OFF_MS * 2,
      intervalMs: 20,
      what: 'the disabled node’s connections to be cut',
    });
    expect(elapsedSince(start)).toBeLessThanOrEqual(CUT_OFF_MS);

    await Promise.all([held.b.keepsFlowingFor(3000), held.d.keepsFlowingFor(3000)]);
    await system.api.deleteNode(node2.node.id);
  }, 90_000);

  it('loses nothing across 20 kills and restarts of the control plane in the middle of change bursts', async () => {
    const probes = await startProbes(system.lab, system.topology.clientNs, 100, [
      `http:${gatewayIp()}:443:y.e2e.test:/probe`,
      `tcp:${gatewayIp()}:${untouchedTcp.port}`,
    ]);
    const web = await holdHttpOn('y.e2e.test');
    const session = await holdTcpOn(untouchedTcp.port);
    const nginxBefore = (await listNamespaceProcesses(system.topology.gatewayNs)).filter((p) =>
      p.command.startsWith('nginx: master'),
    );
    for (let cycle = 0; cycle < 20; cycle++) {
      const burst = (async () => {
        for (let i = 0; i < 4; i++) {
          const service = await createHttp(node1, `burst-${cycle}-${i}`, `burst${cycle}x${i}.e2e.test`);
          if (i % 2 === 0) await system.api.deleteService(node1.node.id, 'http', service.id);
        }
      })().catch((error: unknown) => {
        // The control plane died under the burst: that is the point. Anything else is a failure.
        if (error instanceof ApiError) throw error;
      });
      // A random moment of the burst (not a wait for a condition: the moment itself is what varies).
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 150)));
      if (cycle % 5 === 4) await system.gateway.stop();
      else await system.gateway.kill();
      await burst;
      await system.gateway.restart();
      system.api = await system.gateway.login();
    }
    const report = await probes.report();
    expect(probes.failures()).toEqual([]);
    expect(report.ok).toBeGreaterThan(100);
    expect(web.isClosed() || session.isClosed()).toBe(false);
    await Promise.all([web.keepsFlowingFor(2000), session.keepsFlowingFor(2000)]);
    // The same nginx masters, adopted 20 times over.
    const nginxAfter = (await listNamespaceProcesses(system.topology.gatewayNs)).filter((p) =>
      p.command.startsWith('nginx: master'),
    );
    expect(nginxAfter.map((p) => p.pid).sort()).toEqual(nginxBefore.map((p) => p.pid).sort());
    // What the bursts committed is what is served.
    const services = (await system.api.listNodeServices(node1.node.id, 'http')).filter((s) =>
      s.name.startsWith('burst-'),
    );
    for (const service of services.slice(-3)) expect(await status(service.domain ?? '')).toBe(200);
    await probes.stop();
  }, 240_000);

  it('restores nginx, a TCP service’s instance and the tunnel within 5 s when they die, with no API call', async () => {
    const kill = async (pattern: RegExp, group: boolean): Promise<void> => {
      const found = (await listNamespaceProcesses(system.topology.gatewayNs)).filter((p) => pattern.test(p.command));
      expect(found.length).toBeGreaterThan(0);
      for (const { pid } of found) process.kill(group ? -pid : pid, 'SIGKILL');
    };
    const webIsBack = async () => (await status('y.e2e.test')) === 200;
    const tcpIsBack = async () =>
      (
        await runInAllowingFailure(system.topology.clientNs, process.execPath, [
          '-e',
          `const s = require('net').connect(${untouchedTcp.port}, '${gatewayIp()}', () => s.write('x')); s.on('data', () => process.exit(0)); s.on('error', () => process.exit(2)); setTimeout(() => process.exit(3), 1000);`,
        ])
      ).code === 0;

    // The HTTP master alone (the OOM killer's choice, say): its workers carry on with what they serve, the new master
    // binds beside them, and a held stream of an untouched service never notices.
    const httpMasters = async () =>
      (await listNamespaceProcesses(system.topology.gatewayNs))
        .filter((p) => /^nginx: master .*\/current\/nginx\.conf/.test(p.command))
        .map((p) => p.pid);
    const [killed] = await httpMasters();
    const held = await holdHttpOn('y.e2e.test');
    const flowing = held.keepsFlowingFor(HEAL_MS + 2000);
    const start = performance.now();
    await kill(/^nginx: master .*\/current\/nginx\.conf/, false);
    await waitFor(async () => (await httpMasters()).some((pid) => pid !== killed) && (await webIsBack()), {
      timeoutMs: HEAL_MS * 2,
      intervalMs: 100,
      what: 'a new HTTP master after killing the old one alone',
    });
    expect(elapsedSince(start)).toBeLessThanOrEqual(HEAL_MS);
    await flowing;
    expect(held.isClosed()).toBe(false);
    held.process.kill('SIGKILL');

    for (const [what, act, isBack] of [
      ['nginx (master and workers)', () => kill(/^nginx: master .*\/current\/nginx\.conf/, true), webIsBack],
      [
        'a TCP service’s nginx',
        () => kill(new RegExp(`^nginx: master .*/stream/tcp-${untouchedTcp.port}/`), true),
        tcpIsBack,
      ],
      ['wireguard-go', () => kill(/^wireguard-go /, false), webIsBack],
      [
        'the WireGuard interface',
        () => runInAllowingFailure(system.topology.gatewayNs, 'ip', ['link', 'del', system.lab.ifName('gw')]),
        webIsBack,
      ],
    ] as const) {
      const start = performance.now();
      await act();
      await waitFor(isBack, {
        timeoutMs: HEAL_MS * 2,
        intervalMs: 100,
        what: `the service to answer again after killing ${what}`,
      });
      expect(elapsedSince(start), what).toBeLessThanOrEqual(HEAL_MS);
    }
  }, 90_000);

  it('sets aside a row it cannot apply: the caller hears why, later changes succeed, a restart serves the rest', async () => {
    const held = 30090;
    // Another program on the gateway holds the port the new service wants.
    const squatter = system.lab.spawn(system.topology.gatewayNs, 'port squatter', process.execPath, [
      '-e',
      `require('net').createServer().listen(${held}, '0.0.0.0', () => console.log('listening'))`,
    ]);
    await squatter.waitForOutput(/^listening$/m, 5000);
    const refused = await system.api
      .createTcpService(node1.node.id, {
        name: 'squatted',
        port: held,
        backendHost: node1.tunnelIp,
        backendPort: TCP_PORT,
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(400);
    expect((refused as ApiError).body).toContain(`port ${held}/tcp is in use by another program on the gateway`);
    const [stored] = (await system.api.listNodeServices(node1.node.id, 'tcp')).filter((s) => s.port === held);
    expect(stored?.applyError).toContain('in use by another program');
    // A backend name that does not resolve is fine to store: it fails that service's requests only (resolved per
    // request).
    const unresolvable = await system.api.createHttpService(1, {
      name: 'nowhere',
      domain: 'nowhere.e2e.test',
      backendHost: 'no-such-host.invalid',
      backendPort: 80,
    });
    expect(unresolvable.applyError ?? null).toBeNull();
    // nginx's resolver gives up within its resolver_timeout (5 s): a 502 for that service alone.
    expect(await status('nowhere.e2e.test', '/', 10_000)).toBe(502);
    // Later, unrelated changes succeed; a restart serves everything else.
    await createHttp(node1, 'after-poison', 'after.e2e.test');
    await system.gateway.kill();
    await system.gateway.restart();
    system.api = await system.gateway.login();
    expect(await status('after.e2e.test')).toBe(200);
    expect(await status('y.e2e.test')).toBe(200);
    // Once the port is free, the next apply serves the set-aside service and clears its reason.
    squatter.kill('SIGKILL');
    await squatter.exited;
    await system.api.updateService(node1.node.id, 'tcp', stored?.id ?? 0, { name: 'squatted-no-more' });
    const [served] = (await system.api.listNodeServices(node1.node.id, 'tcp')).filter((s) => s.port === held);
    expect(served?.applyError ?? null).toBeNull();
  }, 60_000);
});
