// How long the O(n) work of a full run and of a drift check holds the event loop at the supported size
// (bench/README.md "stall.ts"): 100,000 HTTP services seeded like api.ts into a real SQLite database, then each phase
// alone — the desired state read, the plan, the read-back comparison, a whole drift check, a whole full run (the
// offline data plane: the real reader, planner and supervisor, the data plane's I/O recorded) — while a probe sends
// GET /api/health through the app one request after another. Per phase: the longest event-loop block
// (monitorEventLoopDelay max, and the worst gap of a 1 ms interval timer), CPU seconds of this process, and the
// probe's p50/max. No root, no network. Knobs: BENCH_SERVICES (100000), BENCH_NODES (1000), BENCH_ROUNDS (3).
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReadDb, Store } from '@postern/server/src/db/client.js';
import { loadDesiredState } from '@postern/server/src/db/desired-state.js';
import { planDataPlane, planDataPlaneSliced } from '@postern/server/src/dataplane/plan.js';
import { routesAndCertificatesDrift } from '@postern/server/src/dataplane/proxy/drift.js';
import { PemDigests } from '@postern/server/src/dataplane/proxy/pem-digests.js';
import type { ControlClient } from '@postern/server/src/dataplane/nginx/control-client.js';
import { fullRunInputs, startBenchApp } from './lib/api-app.js';
import { loadAverage, measurePhases, watchEventLoop, watchGc, type Phase } from './lib/phases.js';
import { percentile, printTable } from './lib/stats.js';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 100_000);
const NODES = Number(process.env.BENCH_NODES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const dir = await mkdtemp(join(tmpdir(), 'postern-bench-stall-'));
const bench = await startBenchApp(dir, NODES, SERVICES);
console.log(`seeded ${NODES} nodes and ${SERVICES} HTTP services in ${bench.seedSeconds.toFixed(2)} s`);
const { deps } = bench;
const { gateway, read, render, staticHosts } = fullRunInputs(bench);
// The read as it was: every page in one turn, in the one snapshot on the writing connection.
const oneTurnDb = {
  ...deps.db,
  pagedSnapshot: <T>(work: (tx: ReadDb, pause: () => Promise<void>) => Promise<T>) =>
    deps.db.snapshot((tx) => work(tx, () => Promise.resolve())),
} as Store;
const readInOneTurn = () => loadDesiredState({ db: oneTurnDb, secrets: deps.secrets }, gateway);
const inOneTurn = () => Promise.resolve();

// nginx's digest as the control socket would give it for what the plan serves (nothing differs).
const md5 = (text: string): string => createHash('md5').update(text).digest('hex');
const state = await read();
const planned = planDataPlane(state, render, staticHosts);
const digest = { hosts: Object.fromEntries([...planned.routes.hosts].map(([h, json]) => [h, md5(json)])), certs: {} };
const control = { get: () => Promise.resolve(digest) } as unknown as ControlClient;

interface Measured {
  /** The longest garbage collection pause meanwhile: a gap no slicing removes. */
  gcMs: number;
  blockMs: number;
  gapMs: number;
  cpuS: number;
  wallS: number;
  probes: number[];
}

/** Runs `work` with the loop watched and GET /api/health sent one after another until it is done. */
async function measure(work: () => Promise<unknown>): Promise<Measured> {
  let last = performance.now();
  let gapMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    gapMs = Math.max(gapMs, now - last);
    last = now;
  }, 1);
  const probes: number[] = [];
  const gc = watchGc();
  let isDone = false;
  const probe = async (): Promise<void> => {
    while (!isDone) {
      const started = performance.now();
      await bench.app.inject({ url: '/api/health' });
      probes.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  await new Promise((resolve) => setTimeout(resolve, 20));
  const loop = watchEventLoop();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const probing = probe();
  await work();
  const wallS = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  isDone = true;
  // Until the last probe answered (a block at the work's end shows in it); the GC of what the work left is not its.
  await probing;
  const blockMs = loop.stop();
  clearInterval(ticker);
  const gcMs = (await gc.stop()).longestMs;
  return { gcMs, blockMs, gapMs, cpuS: (used.user + used.system) / 1e6, wallS, probes };
}

async function busyInSlices(): Promise<void> {
  const end = performance.now() + 1000;
  while (performance.now() < end) {
    const sliceEnd = Math.min(end, performance.now() + 1);
    while (performance.now() < sliceEnd);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const phases: Phase[] = [
  // What this machine's load and the GC alone do to the loop: the floor every other row is read against.
  ['nothing for 1 s (the noise floor)', () => new Promise((resolve) => setTimeout(resolve, 1000))],
  // As busy as a plan, yielding every millisecond: the floor of a perfectly sliced CPU-bound task on this machine (a
  // process that keeps the CPU busy waits longer for it than an idle one when the machine is loaded).
  ['busy for 1 s in 1 ms slices (the floor when busy)', busyInSlices],
  ['read, one turn (before)', readInOneTurn],
  ['read in pages (loadDesiredState)', read],
  ['plan, one turn (before: planDataPlane)', () => Promise.resolve(planDataPlane(state, render, staticHosts))],
  ['plan in slices (planDataPlaneSliced)', () => planDataPlaneSliced(state, render, staticHosts)],
  [
    'compare with the digest, one turn (before)',
    () => routesAndCertificatesDrift(control, planned.routes.hosts, [], dir, new PemDigests(), inOneTurn),
  ],
  [
    'compare with the digest in slices',
    () => routesAndCertificatesDrift(control, planned.routes.hosts, [], dir, new PemDigests()),
  ],
  ['drift check (supervisor checkDrift)', () => bench.dataPlane.checkDrift()],
  ['full run (supervisor apply)', () => bench.dataPlane.apply()],
];

const results = await measurePhases(phases, ROUNDS, measure);

const fmt = (n: number): string => n.toFixed(n < 10 ? 1 : 0);
printTable(
  [
    'phase',
    'longest block ms',
    '1 ms timer worst gap ms',
    'longest GC pause ms',
    'CPU s',
    'wall s',
    'health p50 ms',
    'health max ms',
  ],
  [...results].map(([label, runs]) => {
    const probes = runs.flatMap((r) => r.probes);
    return [
      label,
      runs.map((r) => fmt(r.blockMs)).join(' / '),
      runs.map((r) => fmt(r.gapMs)).join(' / '),
      runs.map((r) => fmt(r.gcMs)).join(' / '),
      runs.map((r) => r.cpuS.toFixed(2)).join(' / '),
      runs.map((r) => r.wallS.toFixed(2)).join(' / '),
      fmt(percentile(probes, 50)),
      fmt(Math.max(...probes)),
    ];
  }),
);
console.log(`load average ${loadAverage()}; ${SERVICES} services, ${ROUNDS} rounds`);
await bench.close();
await rm(dir, { recursive: true, force: true });
