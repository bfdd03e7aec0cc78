// The console's lists and search at the supported size (bench/README.md "console-reads.ts"): 100,000 HTTP services
// on 10,000 nodes seeded like api.ts, then each read the console makes, one request after another through the real
// app (in-process inject: server-side time, no network), and prints p50/p99 per read next to the 100 ms target.
// No root, no network. Knobs: BENCH_SERVICES (100000), BENCH_NODES (10000), BENCH_REQUESTS (200 per read).
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchApp } from './lib/api-app.js';
import { benchServiceDomain } from './lib/api-seed.js';
import { percentile, printTable } from './lib/stats.js';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 100_000);
const NODES = Number(process.env.BENCH_NODES ?? 10_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);

const dir = await mkdtemp(join(tmpdir(), 'postern-bench-console-'));
const bench = await startBenchApp(dir, NODES, SERVICES);
console.log(`seeded ${NODES} nodes and ${SERVICES} HTTP services in ${bench.seedSeconds.toFixed(2)} s`);
const headers = { authorization: `Bearer ${bench.token}` };
const q = benchServiceDomain(5);
// The cursor the next-to-last page gives: the last page read by cursor (`after`) instead of by page number.
const lastPage = Math.ceil(SERVICES / 25);
const beforeLast = await bench.app.inject({ url: `/api/services?page=${lastPage - 1}&limit=25`, headers });
const { next } = beforeLast.json<{ next?: string | null }>();
if (!next) throw new Error(`the overview gave no cursor: ${beforeLast.body.slice(0, 200)}`);
const reads: [string, string][] = [
  ['services overview, first page', '/api/services?page=1&limit=25'],
  ['services overview, last page', `/api/services?page=${lastPage}&limit=25`],
  ['services overview, last page by cursor', `/api/services?after=${encodeURIComponent(next)}&limit=25`],
  ['services overview searched', `/api/services?q=${q}&page=1&limit=25`],
  ['services overview searched, public, by node', `/api/services?q=${q}&status=public&sort=node&order=desc&limit=25`],
  ['services overview sorted by name', '/api/services?sort=name&page=1&limit=25'],
  ['find services', `/api/services/find?q=${q}`],
  ['HTTP services of one domain', `/api/services/http?domain=${benchServiceDomain(500)}`],
  ['nodes list searched', '/api/nodes?q=bench-node-77&page=1&limit=25'],
];
const rows: string[][] = [];
for (const [label, url] of reads) {
  const first = await bench.app.inject({ url, headers });
  if (first.statusCode !== 200) throw new Error(`${url}: ${first.statusCode} ${first.body}`);
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const start = performance.now();
    await bench.app.inject({ url, headers });
    times.push(performance.now() - start);
  }
  const p99 = percentile(times, 99);
  rows.push([label, percentile(times, 50).toFixed(1), p99.toFixed(1), p99 <= 100 ? 'yes' : 'NO']);
}
console.log(`load average ${(loadavg()[0] ?? 0).toFixed(2)}; ${REQUESTS} sequential requests per read`);
printTable(['read (GET)', 'p50 ms', 'p99 ms', '≤ 100 ms'], rows);
await bench.close();
await rm(dir, { recursive: true, force: true });
