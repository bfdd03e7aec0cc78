// One route of the API bench's app under a fixed open-loop load for a while, for a native profiler to attach to
// (bench/README.md "api-perf.ts"): the inspector's profile (api-profile.ts) shows a native call such as
// better-sqlite3's `all` as one frame, `perf` shows what runs inside it (SQLite's parser, malloc, the kernel).
// Writes the server's pid to BENCH_PERF_PIDFILE once warmed up, then offers the load for BENCH_SECONDS and prints
// the server's CPU per request. No root needed for the load; 127.0.0.1 only.
// Run: pnpm --filter @postern/bench exec tsx api-perf.ts [nodes|services|bare]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult } from './lib/api-client-protocol.js';
import { startBareRoute, startBenchApp, urlOf } from './lib/api-app.js';
import { startLoadChild } from './lib/api-load-child.js';
import { benchServiceDomain } from './lib/api-seed.js';

const which = process.argv[2] ?? 'nodes';
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 12);
const PIDFILE = process.env.BENCH_PERF_PIDFILE ?? join(tmpdir(), 'postern-api-perf.pid');

const dataDir = mkdtempSync(join(tmpdir(), 'postern-bench-perf-'));
const child = startLoadChild();
const bench = await startBenchApp(dataDir, 10_000);
const bare = await startBareRoute();
const routes: Record<string, { url: string; headers: Record<string, string> }> = {
  nodes: { url: urlOf(bench.app, '/api/nodes?page=1&limit=10'), headers: { authorization: `Bearer ${bench.token}` } },
  services: {
    url: urlOf(bench.app, `/api/services/http?domain=${benchServiceDomain(500)}`),
    headers: { authorization: `Bearer ${bench.token}` },
  },
  bare: { url: urlOf(bare, '/bare'), headers: {} },
};
const route = routes[which];
if (!route) throw new Error(`no route ${which}: nodes, services or bare`);
const offer = (seconds: number) =>
  child.ask<LoadResult>({ cmd: 'load', ...route, rate: RATE, warmupSeconds: 0, seconds });
try {
  await offer(3);
  writeFileSync(PIDFILE, String(process.pid));
  const before = process.cpuUsage();
  const result = await offer(SECONDS);
  const used = process.cpuUsage(before);
  console.log(
    `${which}: server CPU ${((used.user + used.system) / (RATE * SECONDS)).toFixed(0)} µs per request over ${SECONDS} s at ${RATE} req/s (${result.errors} failed), load ${(loadavg()[0] ?? 0).toFixed(1)}`,
  );
} finally {
  rmSync(PIDFILE, { force: true });
  child.stop();
  await bench.close();
  await bare.close();
  rmSync(dataDir, { recursive: true, force: true });
}
