// The create path at N rows, in-process (bench/README.md "create-path.ts"): N HTTPS services (one per domain, with
// their certificate records) seeded straight into SQLite, the app over the offline data plane with scoped reads (the
// real reconciler and planner, no nginx), then BENCH_CHANGES services created on new domains through app.inject, one
// after another as bench/apply.ts does. Prints the API answer (p50, max), CPU per change, and the CPU of the whole
// series with the background work it caused (the health checker started with a probe that answers at once:
// BENCH_HEALTH=0 leaves it stopped, the baseline). Note: the offline data plane merges each scoped read into its
// copy of the whole state (O(n) a change, ~28 ms at 100,000): compare sizes and builds, not absolute figures.
// No root, no network. Usage: tsx create-path.ts 1000,100000
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '@postern/server/src/app.js';
import { openBenchDeps, signIn } from './lib/api-app.js';
import { seedDomainServices } from './lib/api-seed.js';
import { loadAverage } from './lib/phases.js';
import { median } from './lib/stats.js';

const SIZES = (process.argv[2] ?? '1000,100000').split(',').map(Number);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 30);

async function measure(size: number): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'postern-probe-create-'));
  const { deps, dataPlane, config } = await openBenchDeps(dataDir, 1, 0);
  const { nodeId } = seedDomainServices(deps, size, { certificateRows: true });
  const app = await buildApp(deps, {
    consoleDir: null,
    observe: { healthProbe: () => Promise.resolve({ error: null, latencyMs: 1 }) },
  });
  if (process.env.BENCH_HEALTH !== '0') {
    app.observer.health.start();
    await app.observer.health.refresh();
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await app.observer.health.refresh();
    const c = process.cpuUsage(c0);
    console.log(
      `${size}: one read of every health target ${(performance.now() - t0).toFixed(0)} ms, CPU ${((c.user + c.system) / 1000).toFixed(0)} ms`,
    );
  }
  const headers = { authorization: `Bearer ${await signIn(app, config)}` };
  await dataPlane.start();
  await dataPlane.booted();
  const ms: number[] = [];
  const cpu: number[] = [];
  const loopCpu = process.cpuUsage();
  const loopStart = performance.now();
  for (let r = -3; r < CHANGES; r++) {
    const start = performance.now();
    const c0 = process.cpuUsage();
    const res = await app.inject({
      method: 'POST',
      url: `/api/services/${nodeId}/http`,
      headers,
      payload: { name: `new-${r + 3}`, domain: `new${r + 3}.bench.test`, backendHost: '10.44.0.2', backendPort: 8080 },
    });
    if (res.statusCode >= 300) throw new Error(res.body);
    const used = process.cpuUsage(c0);
    if (r >= 0) {
      ms.push(performance.now() - start);
      cpu.push((used.user + used.system) / 1000);
    }
  }
  await app.observer.health.list();
  const loopUsed = process.cpuUsage(loopCpu);
  console.log(
    `${size}: ${CHANGES} changes and the health reads they caused: ${(performance.now() - loopStart).toFixed(0)} ms, CPU ${((loopUsed.user + loopUsed.system) / 1000).toFixed(0)} ms`,
  );
  console.log(
    `${size}: API p50 ${median(ms).toFixed(1)} ms, CPU p50 ${median(cpu).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms; load ${loadAverage()}`,
  );
  await app.close();
  await dataPlane.stop({ keepServing: false });
  await deps.db.close();
  await rm(dataDir, { recursive: true, force: true });
}

for (const size of SIZES) await measure(size);
