// The CPU of a boot's full run at 100,000 HTTPS services, phase by phase, in-process (bench/README.md
// "boot-phases.ts"): the database seeded like apply.ts (one domain and one HTTP service per name, the certificate
// records a restarted gateway finds), then the desired state's read, the network guard, the plan, a whole full run
// through the offline data plane (the real reader, planner, reconciler and supervisor; nginx, WireGuard and the
// certificates recorded) and the drift check after it. Per phase: CPU seconds of this process, wall seconds, and
// the GC's share. No root, no network. BENCH_SERVICES (100000), BENCH_ROUNDS (3); `node --cpu-prof` (or
// `BENCH_CPU_PROF=1`: tsx passes NODE_OPTIONS on) writes the V8 profile of the whole.
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { sqliteClientOf } from '@postern/server/src/db/client.js';
import { loadDesiredState } from '@postern/server/src/db/desired-state.js';
import { dataPlaneConfigFor, gatewaySettingsFor } from '@postern/server/src/create-data-plane.js';
import { renderOptionsFor } from '@postern/server/src/dataplane/index.js';
import { planDataPlaneSliced } from '@postern/server/src/dataplane/plan.js';
import { openBenchDeps } from './lib/api-app.js';
import { median, printTable } from './lib/stats.js';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const dir = await mkdtemp(join(tmpdir(), 'postern-bench-boot-phases-'));
const { deps, dataPlane, config } = await openBenchDeps(dir, 1, 0);

// One domain and one service on `/` per name, as apply.ts seeds them (a node's tunnel address as the backend).
const seedStarted = performance.now();
const sqlite = sqliteClientOf(deps.db);
const nodeId = (sqlite.prepare('SELECT id FROM nodes WHERE is_local = 0 ORDER BY id LIMIT 1').get() as { id: number })
  .id;
const addDomain = sqlite.prepare(`INSERT INTO domains (domain, ssl) VALUES (?, 'self-signed')`);
const addService = sqlite.prepare(
  `INSERT INTO http_services (node_id, name, domain, path_location, backend_proto, backend_host, backend_port) VALUES (?, ?, ?, '/', 'http', '10.44.0.2', 8080)`,
);
sqlite.transaction(() => {
  for (let i = 0; i < SERVICES; i++) {
    addDomain.run(`d${i}.bench.test`);
    addService.run(nodeId, `bench-${i}`, `d${i}.bench.test`);
  }
})();
console.log(
  `seeded ${SERVICES} domains and HTTP services in ${((performance.now() - seedStarted) / 1000).toFixed(2)} s`,
);

const gateway = gatewaySettingsFor(config, deps.gateway);
const render = renderOptionsFor(dataPlaneConfigFor(config, deps.gateway));
const staticHosts = new Map([['localhost', '127.0.0.1']]);
const read = () => loadDesiredState({ db: deps.db, secrets: deps.secrets }, gateway);
const state = await read();

interface Measured {
  cpuS: number;
  wallS: number;
  gcS: number;
}

async function measure(work: () => Promise<unknown>): Promise<Measured> {
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration;
  });
  gc.observe({ entryTypes: ['gc'] });
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const wallS = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  // The entries of the last GC arrive on a later turn.
  await new Promise((resolve) => setImmediate(resolve));
  gc.disconnect();
  return { cpuS: (used.user + used.system) / 1e6, wallS, gcS: gcMs / 1000 };
}

const phases: [string, () => Promise<unknown>][] = [
  ['read the desired state (loadDesiredState)', read],
  ['plan (planDataPlaneSliced)', () => planDataPlaneSliced(state, render, staticHosts)],
  ['full run (offline data plane: read, plan, pushes recorded)', () => dataPlane.apply()],
  ['drift check after it (read, plan, compare)', () => dataPlane.checkDrift()],
];

const results = new Map<string, Measured[]>();
for (let round = 0; round < ROUNDS; round++)
  for (const [label, work] of phases) {
    global.gc?.();
    const list = results.get(label) ?? [];
    list.push(await measure(work));
    results.set(label, list);
  }

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
console.log(
  `load average ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}; ${SERVICES} services, ${ROUNDS} rounds`,
);
await deps.db.close();
await rm(dir, { recursive: true, force: true });
