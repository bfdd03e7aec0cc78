// The gateway's periodic jobs that read whole tables, at the supported size (bench/README.md "sweep-stall.ts"):
// seeds BENCH_SERVICES (100,000) HTTP services on BENCH_NODES (10,000) nodes like api.ts, then runs each job on its
// own while `perf_hooks.monitorEventLoopDelay` watches the event loop, and prints the largest stall (what a request
// arriving meanwhile waits at most) next to the job's wall time:
// - the notifier's sweep (`settle()`: every backend's health, every node, the gateways), with every backend's health
//   "up" as after its first checks;
// - the health checks' read of their targets (`refresh()`: every served service, every 30 s and after changes);
// - the health checks' 1-second tick over every target, with probes that answer after 1 ms;
// next to the same watch over 1 s with nothing running (the machine's own noise, same run).
// No root, no network. Knobs: BENCH_SERVICES, BENCH_NODES, BENCH_ROUNDS (3 per job), BENCH_TICK_SECONDS (5).
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceHealth } from '@postern/contract';
import {
  createHealthChecker,
  loadHealthTargets,
  type HealthChecker,
} from '@postern/server/src/modules/observe/health-checker.js';
import { createNotifier } from '@postern/server/src/modules/notifications/notifier.js';
import { openBenchDeps } from './lib/api-app.js';
import { loadAverage, watchEventLoop, watchGc } from './lib/phases.js';
import { printTable } from './lib/stats.js';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 100_000);
const NODES = Number(process.env.BENCH_NODES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TICK_SECONDS = Number(process.env.BENCH_TICK_SECONDS ?? 5);

interface Watched {
  stallMs: number;
  wallMs: number;
  /** The longest garbage collection meanwhile (part of a stall, not the job's own code). */
  gcMs: number;
}

/** The largest event-loop stall (ms), the longest GC pause (ms) and the wall time (ms) while `work` runs. */
async function watched(work: () => Promise<unknown>): Promise<Watched> {
  const gc = watchGc();
  const loop = watchEventLoop();
  // The monitor's timer runs from the next turn on: a job that blocked at once would go unseen.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const start = performance.now();
  await work();
  const wallMs = performance.now() - start;
  // One more turn, so a stall that ended the work is recorded.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const stallMs = loop.stop();
  return { stallMs, wallMs, gcMs: (await gc.stop()).longestMs };
}

const dir = await mkdtemp(join(tmpdir(), 'postern-bench-sweep-'));
const { deps, dataPlane, seedSeconds } = await openBenchDeps(dir, NODES, SERVICES);
console.log(`seeded ${NODES} nodes and ${SERVICES} HTTP services in ${seedSeconds.toFixed(2)} s`);
const rows: string[][] = [];
const record = (label: string, results: Watched[]) => {
  rows.push([
    label,
    results.map((r) => r.stallMs.toFixed(0)).join(' / '),
    results.map((r) => r.gcMs.toFixed(0)).join(' / '),
    results.map((r) => r.wallMs.toFixed(0)).join(' / '),
  ]);
};

// The machine's own noise: the same watch with nothing running (a stall here is the process waiting for a CPU).
const idle = [];
for (let i = 0; i < ROUNDS; i++) idle.push(await watched(() => new Promise((resolve) => setTimeout(resolve, 1000))));
record('nothing running, 1 s (the machine: baseline)', idle);

// The notifier's sweep over every backend "up" (a health checker's list, as after the first checks).
const targets = await loadHealthTargets(deps.db);
const at = new Date().toISOString();
const healthList: ServiceHealth[] = targets.map((target) => ({
  type: target.type,
  id: target.id,
  nodeId: target.nodeId,
  state: 'up',
  since: at,
  lastCheckedAt: at,
  lastError: null,
  latencyMs: 1,
  intervalSeconds: target.intervalSeconds,
  timeoutSeconds: target.timeoutSeconds,
}));
const fakeHealth: HealthChecker = {
  start: () => undefined,
  stop: () => undefined,
  refresh: () => Promise.resolve(),
  invalidate: () => undefined,
  list: () => Promise.resolve(healthList),
  get: () => Promise.resolve(undefined),
  onHealthChange: () => () => undefined,
};
const silent = { warn: () => undefined, info: () => undefined };
const notifier = createNotifier(deps, fakeHealth, silent);
const sweeps = [];
for (let i = 0; i < ROUNDS; i++) sweeps.push(await watched(() => notifier.settle()));
record(`notifier sweep (settle), ${healthList.length} backends up`, sweeps);

// The health checks' read of their targets.
const checker = createHealthChecker({
  db: deps.db,
  probe: () => new Promise((resolve) => setTimeout(() => resolve({ error: null, latencyMs: 1 }), 1)),
});
const refreshes = [];
for (let i = 0; i < ROUNDS; i++) refreshes.push(await watched(() => checker.refresh()));
record(`health checks: refresh (read ${targets.length} targets)`, refreshes);

// The health checks' tick, once the targets are read: a window without a refresh in it (every 30 s).
checker.start();
await new Promise((resolve) => setTimeout(resolve, 1500));
const ticks = await watched(() => new Promise((resolve) => setTimeout(resolve, TICK_SECONDS * 1000)));
checker.stop();
record(`health checks: 1 s tick over ${targets.length} targets, ${TICK_SECONDS} s window`, [ticks]);

console.log(`load average ${loadAverage()} on ${cpus().length} CPUs; ${ROUNDS} rounds per job`);
printTable(['job at this size', 'largest event-loop stall, ms (each round)', 'longest GC, ms', 'wall ms'], rows);
await notifier.stop();
await dataPlane.stop({ keepServing: false });
await deps.db.close();
await rm(dir, { recursive: true, force: true });
