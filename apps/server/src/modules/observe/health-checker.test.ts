import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import FlatQueue from 'flatqueue';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createHealthChecker,
  loadHealthTargets,
  MAX_CHECKS_IN_FLIGHT,
  MAX_CHECKS_IN_FLIGHT_PER_NODE,
  probeBackend,
  type HealthTarget,
} from './health-checker.js';
import { buildTestApp } from '../../test/build-test-app.js';
import { insertTcpServices } from '../notifications/test-support.js';
import { insertNode } from '../services/test-support.js';
import { eq, inArray } from 'drizzle-orm';
import { tcpServices } from '../../db/schema.js';

// The real probe against loopback backends: what counts as up (any answer below 500, a TCP connect) and how a
// failure reads in the console.

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}
const target = (probe: HealthTarget['probe'], port: number, path = '/'): HealthTarget => ({
  type: probe === 'tcp' ? 'tcp' : 'http',
  id: 1,
  nodeId: 1,
  probe,
  host: '127.0.0.1',
  port,
  path,
  intervalSeconds: 5,
  timeoutSeconds: 1,
});

describe('probeBackend', () => {
  it('calls an HTTP backend up when it answers below 500 (on the service path) and down with the status from 500', async () => {
    const paths: string[] = [];
    const port = await listen(
      createHttpServer((req, res) => {
        paths.push(req.url ?? '');
        res.writeHead(req.url === '/broken' ? 503 : 404).end();
      }),
    );
    expect(await probeBackend(target('http', port, '/app'), 1000)).toMatchObject({ error: null });
    expect(paths).toEqual(['/app']);
    expect(await probeBackend(target('http', port, '/broken'), 1000)).toMatchObject({ error: 'HTTP 503' });
  });

  it('says "connection refused" for a stopped backend and gives up after the timeout on a silent one', async () => {
    const closed = createTcpServer();
    const port = await listen(closed);
    closed.close();
    expect(await probeBackend(target('http', port), 1000)).toMatchObject({ error: 'connection refused' });
    expect(await probeBackend(target('tcp', port), 1000)).toMatchObject({ error: 'connection refused' });

    // Accepts the connection and never answers.
    const silent = await listen(createTcpServer((socket) => servers.push({ close: () => socket.destroy() })));
    expect(await probeBackend(target('http', silent), 300)).toMatchObject({ error: 'no answer within 0.3 s' });
  });

  it('calls a TCP backend up once it accepts a connection', async () => {
    const port = await listen(createTcpServer((socket) => socket.end()));
    expect(await probeBackend(target('tcp', port), 1000)).toMatchObject({ error: null });
  });
});

describe('createHealthChecker pacing', () => {
  const many = (count: number, nodeId: (i: number) => number): HealthTarget[] =>
    Array.from({ length: count }, (_, i) => ({
      type: 'http',
      id: i + 1,
      nodeId: nodeId(i),
      probe: 'http',
      host: '10.44.0.2',
      port: 80,
      path: '/',
      intervalSeconds: 30,
      timeoutSeconds: 5,
    }));

  afterEach(() => {
    vi.useRealTimers();
  });

  it('checks 10,000 slow backends without ever having more than the cap of checks in flight', async () => {
    vi.useFakeTimers();
    let inFlight = 0;
    let peak = 0;
    const startedAt: number[] = [];
    const probe = async (): Promise<{ error: null; latencyMs: number }> => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      startedAt.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, 2000)); // a slow backend
      inFlight--;
      return { error: null, latencyMs: 2000 };
    };
    const start = Date.now();
    const checker = createHealthChecker({ db: null as never, probe, loadTargets: () => many(10_000, (i) => i % 50) });
    checker.start();
    await vi.advanceTimersByTimeAsync(90_000);
    checker.stop();
    expect(peak).toBeLessThanOrEqual(MAX_CHECKS_IN_FLIGHT);
    // ...and yet every service was checked within three intervals, although each check takes 2 s.
    expect((await checker.list()).filter((h) => h.state === 'up')).toHaveLength(10_000);
    expect(Math.max(...startedAt.slice(0, 10_000)) - start).toBeLessThanOrEqual(90_000);
  }, 60_000);

  it("checks every service of a node past its cap, the node's cap at a time", async () => {
    vi.useFakeTimers();
    let inFlight = 0;
    let peak = 0;
    const probe = async (): Promise<{ error: null; latencyMs: number }> => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      inFlight--;
      return { error: null, latencyMs: 1000 };
    };
    const checker = createHealthChecker({ db: null as never, probe, loadTargets: () => many(200, () => 7) });
    checker.start();
    // 200 services due within 3 s, 32 started per tick once the last ones answered (1 s each): all within 20 s.
    await vi.advanceTimersByTimeAsync(20_000);
    checker.stop();
    expect(peak).toBe(MAX_CHECKS_IN_FLIGHT_PER_NODE);
    expect((await checker.list()).filter((h) => h.state === 'up')).toHaveLength(200);
  });

  // One queue for every node: a tick took each due check of a node at its cap out and put it back, at 100,000 services
  // on one node 250-600 ms of the event loop every second (bench/README.md).
  it('sets a node at its cap aside in one step, however many of its checks are due', async () => {
    vi.useFakeTimers();
    let started = 0;
    const probe = (): Promise<never> => {
      started++;
      return new Promise<never>(() => undefined); // a backend that never answers: the node stays at its cap
    };
    const checker = createHealthChecker({ db: null as never, probe, loadTargets: () => many(20_000, () => 7) });
    checker.start();
    await vi.advanceTimersByTimeAsync(40_000); // every service due by now
    const taken = vi.spyOn(FlatQueue.prototype, 'pop');
    await vi.advanceTimersByTimeAsync(1_000); // a tick
    checker.stop();
    expect(started).toBe(MAX_CHECKS_IN_FLIGHT_PER_NODE);
    expect(taken.mock.calls.length).toBeLessThan(10);
  });

  it("keeps checking a live node's services on time while a dead node's checks wait for their timeouts", async () => {
    vi.useFakeTimers();
    const checkedLive = new Map<number, number[]>();
    const probe = async (
      target: HealthTarget,
      timeoutMs: number,
    ): Promise<{ error: string | null; latencyMs: number }> => {
      if (target.nodeId === 1) {
        await new Promise((resolve) => setTimeout(resolve, timeoutMs)); // the dead node: every check times out
        return { error: 'no answer', latencyMs: timeoutMs };
      }
      checkedLive.set(target.id, [...(checkedLive.get(target.id) ?? []), Date.now()]);
      return { error: null, latencyMs: 1 };
    };
    // 2,000 services on the dead node listed first, 20 on a live one.
    const targets = [...many(2000, () => 1), ...many(20, () => 2).map((t, i) => ({ ...t, id: 5000 + i }))];
    const checker = createHealthChecker({ db: null as never, probe, loadTargets: () => targets });
    checker.start();
    await vi.advanceTimersByTimeAsync(95_000);
    checker.stop();
    // Every live service checked every 30 s (within a tick), never held up by the dead node's timeouts.
    expect(checkedLive.size).toBe(20);
    for (const times of checkedLive.values()) {
      expect(times.length).toBeGreaterThanOrEqual(3);
      const gaps = times.slice(1).map((at, i) => at - (times[i] ?? 0));
      expect(Math.max(...gaps)).toBeLessThanOrEqual(31_000);
    }
    expect((await checker.list()).filter((h) => h.nodeId === 2).every((h) => h.state === 'up')).toBe(true);
  });
});

describe('createHealthChecker schedule', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const one = (over: Partial<HealthTarget> = {}): HealthTarget => ({
    type: 'http',
    id: 1,
    nodeId: 1,
    probe: 'http',
    host: '10.44.0.2',
    port: 80,
    path: '/',
    intervalSeconds: 60,
    timeoutSeconds: 5,
    ...over,
  });

  it('checks at a shortened interval from the next read on, and a backend pointed elsewhere at once, never the old one', async () => {
    vi.useFakeTimers();
    const checks: { port: number; at: number }[] = [];
    let target = one();
    const probe = async (checked: HealthTarget): Promise<{ error: null; latencyMs: number }> => {
      checks.push({ port: checked.port, at: Date.now() });
      return Promise.resolve({ error: null, latencyMs: 1 });
    };
    const checker = createHealthChecker({ db: null as never, probe, loadTargets: () => [target] });
    const start = Date.now();
    checker.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(checks).toHaveLength(1);
    // Every 60 s, then every 5 s once the services are read again.
    target = one({ intervalSeconds: 5 });
    await checker.refresh();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(checks.length).toBeGreaterThanOrEqual(4);
    const gaps = checks.slice(2).map((c, i) => c.at - (checks[i + 1]?.at ?? 0));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(6_000);
    // Pointed at another port: checked within the next few seconds, and only there from then on.
    const before = checks.length;
    target = one({ intervalSeconds: 5, port: 8080 });
    await checker.refresh();
    await vi.advanceTimersByTimeAsync(10_000);
    checker.stop();
    expect(checks.slice(before).map((c) => c.port)).toEqual(checks.slice(before).map(() => 8080));
    expect(checks.length - before).toBeGreaterThanOrEqual(2);
    expect(checks.at(-1)?.at ?? 0).toBeGreaterThan(start);
  });
});

describe('loadHealthTargets', () => {
  it('reads every served service, a slice of rows per statement (the event loop free in between)', async () => {
    const t = await buildTestApp();
    try {
      const node = await insertNode(t.deps, { name: 'targets' });
      const rows = await insertTcpServices(
        t,
        Array.from({ length: 5 }, (_, i) => ({
          nodeId: node.id,
          name: `t${String(i)}`,
          port: 31600 + i,
          backendHost: '10.0.0.8',
          backendPort: 9000 + i,
        })),
      );
      const all = await loadHealthTargets(t.deps.db);
      // Two per statement: three statements for five services, the same targets.
      expect(await loadHealthTargets(t.deps.db, 2)).toEqual(all);
      expect(all.filter((target) => target.type === 'tcp').map((target) => target.id)).toEqual(rows.map((r) => r.id));
      expect(all.find((target) => target.id === rows[4]?.id)).toMatchObject({ host: node.address, port: 9004 });
    } finally {
      await t.cleanup();
    }
  });
});

describe('createHealthChecker after a change', () => {
  it("reads a change's own services again (added, edited, deleted), not every service; a full apply reads all", async () => {
    const t = await buildTestApp();
    try {
      const node = await insertNode(t.deps, { name: 'changes' });
      const row = (name: string, port: number) => ({
        nodeId: node.id,
        name,
        port,
        backendHost: '10.0.0.8',
        backendPort: 9000,
      });
      const [edited, kept, deleted] = await insertTcpServices(t, [row('a', 31700), row('b', 31701), row('c', 31702)]);
      if (!edited || !kept || !deleted) throw new Error('no services');
      const checker = createHealthChecker({ db: t.deps.db, probe: () => new Promise(() => undefined) });
      await checker.refresh();
      const shown = async () =>
        new Map((await checker.list()).map((health) => [health.id, health.intervalSeconds] as const));
      expect([...(await shown()).keys()]).toEqual([edited.id, kept.id, deleted.id]);

      // The change: one service edited, one deleted, one added; beside it, rows no change announced yet.
      const [added, unannounced] = await insertTcpServices(t, [row('d', 31703), row('e', 31704)]);
      if (!added || !unannounced) throw new Error('no services');
      await t.db.write(async (tx) => {
        await tx.update(tcpServices).set({ healthIntervalSeconds: 60 }).where(eq(tcpServices.id, edited.id)).run();
        await tx.update(tcpServices).set({ healthIntervalSeconds: 90 }).where(eq(tcpServices.id, kept.id)).run();
        await tx
          .delete(tcpServices)
          .where(inArray(tcpServices.id, [deleted.id]))
          .run();
      });
      checker.invalidate({ http: [], tcp: [edited.id, deleted.id, added.id] });
      const afterChange = await shown();
      expect([...afterChange.keys()].sort((a, b) => a - b)).toEqual([edited.id, kept.id, added.id]);
      expect(afterChange.get(edited.id)).toBe(60);
      expect(afterChange.get(kept.id)).not.toBe(90); // not read: no change of it was announced

      checker.invalidate();
      const afterFull = await shown();
      expect([...afterFull.keys()].sort((a, b) => a - b)).toEqual([edited.id, kept.id, added.id, unannounced.id]);
      expect(afterFull.get(kept.id)).toBe(90);
    } finally {
      await t.cleanup();
    }
  });
});
