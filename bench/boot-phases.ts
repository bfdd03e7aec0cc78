// The CPU of a boot's full run at 100,000 HTTPS services, phase by phase, in-process (bench/README.md
// "boot-phases.ts"): the database seeded like apply.ts (one domain and one HTTP service per name; lib/api-seed.ts),
// then the desired state's read, the plan, a whole full run through the offline data plane (the real reader, planner,
// reconciler and supervisor; nginx, WireGuard and the certificates recorded) and the drift check after it. Per phase:
// CPU seconds of this process, wall seconds, and the GC's share. No root, no network. BENCH_SERVICES (100000),
// BENCH_ROUNDS (3); `node --cpu-prof` (or `BENCH_CPU_PROF=1`: tsx passes NODE_OPTIONS on) writes the V8 profile.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planDataPlaneSliced } from '@postern/server/src/dataplane/plan.js';
import { fullRunInputs, openBenchDeps } from './lib/api-app.js';
import { seedDomainServices } from './lib/api-seed.js';
import { loadAverage, measurePhases, watchGc, type Phase } from './lib/phases.js';
import { median, printTable } from './lib/stats.js';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const dir = await mkdtemp(join(tmpdir(), 'postern-bench-boot-phases-'));
const bench = await openBenchDeps(dir, 1, 0);
const { deps, dataPlane } = bench;
const { seconds } = seedDomainServices(deps, SERVICES, { certificateRows: false });
console.log(`seeded ${SERVICES} domains and HTTP services in ${seconds.toFixed(2)} s`);

const { read, render, staticHosts } = fullRunInputs(bench);
const state = await read();

interface Measured {
  cpuS: number;
  wallS: number;
  gcS: number;
}

async function measure(work: () => Promise<unknown>): Promise<Measured> {
  const gc = watchGc();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const wallS = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { cpuS: (used.user + used.system) / 1e6, wallS, gcS: (await gc.stop()).totalMs / 1000 };
}

const phases: Phase[] = [
  ['read the desired state (loadDesiredState)', read],
  ['plan (planDataPlaneSliced)', () => planDataPlaneSliced(state, render, staticHosts)],
  ['full run (offline data plane: read, plan, pushes recorded)', () => dataPlane.apply()],
  ['drift check after it (read, plan, compare)', () => dataPlane.checkDrift()],
];

const results = await measurePhases(phases, ROUNDS, measure);

printTable(
  ['phase', 'CPU s (each round)', 'CPU s median', 'wall s median', 'GC s median'],
  [...results].map(([label, runs]) => [
    label,
    runs.map((r) => r.cpuS.toFixed(2)).join(' / '),
    median(runs.map((r) => r.cpuS)).toFixed(2),
    median(runs.map((r) => r.wallS)).toFixed(2),
    median(runs.map((r) => r.gcS)).toFixed(2),
  ]),
);
console.log(`load average ${loadAverage()}; ${SERVICES} services, ${ROUNDS} rounds`);
await dataPlane.stop({ keepServing: false });
await deps.db.close();
await rm(dir, { recursive: true, force: true });
