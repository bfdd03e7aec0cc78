// Where a list request's server CPU goes over HTTP (bench/README.md "api-profile.ts"): the app's list, a bare route and
// a bare route sending the list's own answer (with and without its headers) under the same open-loop load from a
// child process (like api.ts), the server's CPU per request of each; then CPU profiles of the list's and the bare
// route's slices, self time per request by package and by function, list against bare. The profiler's own cost
// inflates every figure of the profile: read its shares, not its µs. No root, 127.0.0.1 only.
// Run: pnpm --filter @postern/bench exec tsx api-profile.ts [nodes|services]  (BENCH_PROFILE=0: CPU figures only)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import Fastify from 'fastify';
import type { Profiler } from 'node:inspector';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult } from './lib/api-client-protocol.js';
import { startBareRoute, startBenchApp, urlOf } from './lib/api-app.js';
import { startLoadChild } from './lib/api-load-child.js';
import { benchServiceDomain } from './lib/api-seed.js';

const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const which = process.argv[2] ?? 'nodes';
const dataDir = mkdtempSync(join(tmpdir(), 'postern-bench-prof-'));
const child = startLoadChild();
const bench = await startBenchApp(dataDir, 10_000);
const bare = await startBareRoute();
const auth = { authorization: `Bearer ${bench.token}` };
const listUrl =
  which === 'nodes'
    ? urlOf(bench.app, '/api/nodes?page=1&limit=10')
    : urlOf(bench.app, `/api/services/http?domain=${benchServiceDomain(500)}`);
async function cpuPerRequest(url: string, headers: Record<string, string>): Promise<number> {
  const before = process.cpuUsage();
  const result = await child.ask<LoadResult>({ cmd: 'load', url, headers, rate: RATE, warmupSeconds: 0, seconds: 1 });
  const used = process.cpuUsage(before);
  if (result.errors > 0) throw new Error(`${result.errors} failed requests`);
  return (used.user + used.system) / RATE;
}
// The list's own answer (same body and headers) served by a bare route: what the answer's size costs by itself.
const sample = await fetch(listUrl, { headers: auth });
const body = await sample.text();
const sampleHeaders = Object.fromEntries(
  [...sample.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'content-length'].includes(name)),
);
console.log(`answer: ${body.length} bytes, ${Object.keys(sampleHeaders).length} headers`);
const same = Fastify({ logger: false });
same.get('/same', (_request, reply) => reply.headers(sampleHeaders).send(body));
same.get('/same-bare', (_request, reply) => reply.type('application/json').send(body));
await same.listen({ host: '127.0.0.1', port: 0 });
await cpuPerRequest(listUrl, auth);
await cpuPerRequest(urlOf(bare, '/bare'), {});
await cpuPerRequest(urlOf(same, '/same'), {});
await cpuPerRequest(urlOf(same, '/same-bare'), {});
const list: number[] = [];
const bareCpu: number[] = [];
const sameCpu: number[] = [];
const sameBareCpu: number[] = [];
for (let i = 0; i < SECONDS; i++) {
  list.push(await cpuPerRequest(listUrl, auth));
  bareCpu.push(await cpuPerRequest(urlOf(bare, '/bare'), {}));
  sameCpu.push(await cpuPerRequest(urlOf(same, '/same'), {}));
  sameBareCpu.push(await cpuPerRequest(urlOf(same, '/same-bare'), {}));
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
console.log(
  `load ${(loadavg()[0] ?? 0).toFixed(2)}; server CPU µs per request: ${which} ${med(list).toFixed(0)}, bare ${med(bareCpu).toFixed(0)} (${(med(list) / med(bareCpu)).toFixed(2)}×); bare route sending the list's answer: with its headers ${med(sameCpu).toFixed(0)}, body only ${med(sameBareCpu).toFixed(0)}`,
);
type Profile = Profiler.Profile;
/** µs per request by key (self time), from a profile taken over `requests` requests. */
function perRequest(profile: Profile, requests: number, keyOf: (url: string, fn: string, line: number) => string) {
  const counts = new Map<number, number>();
  for (const id of profile.samples ?? []) counts.set(id, (counts.get(id) ?? 0) + 1);
  const usPerSample = (profile.endTime - profile.startTime) / Math.max(profile.samples?.length ?? 1, 1);
  const out = new Map<string, number>();
  for (const node of profile.nodes) {
    const n = counts.get(node.id) ?? 0;
    if (n === 0 || node.callFrame.functionName === '(idle)') continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/.*node_modules\/\.pnpm\/([^@/]+@?[^@_/]*)[^/]*\/.*/, '$1').replace(/.*\/wt\/[^/]+\//, '');
    const key = keyOf(file, functionName || '(anon)', lineNumber + 1);
    out.set(key, (out.get(key) ?? 0) + (n * usPerSample) / requests);
  }
  return out;
}
if (process.env.BENCH_PROFILE !== '0') {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
  const profileOf = async (url: string, headers: Record<string, string>) => {
    await session.post('Profiler.start');
    for (let i = 0; i < SECONDS; i++) await cpuPerRequest(url, headers);
    const { profile } = await session.post('Profiler.stop');
    return profile;
  };
  const listProfile = await profileOf(listUrl, auth);
  const bareProfile = await profileOf(urlOf(bare, '/bare'), {});
  writeFileSync(join(tmpdir(), `postern-api-profile-${which}.cpuprofile`), JSON.stringify(listProfile));
  writeFileSync(join(tmpdir(), 'postern-api-profile-bare.cpuprofile'), JSON.stringify(bareProfile));
  const requests = SECONDS * RATE;
  const compare = (title: string, keyOf: (url: string, fn: string, line: number) => string, k: number) => {
    const a = perRequest(listProfile, requests, keyOf);
    const b = perRequest(bareProfile, requests, keyOf);
    const keys = new Set([...a.keys(), ...b.keys()]);
    const sum = (m: Map<string, number>) => [...m.values()].reduce((x, y) => x + y, 0);
    console.log(
      `--- ${title}: main thread µs per request (self time), ${which} ${sum(a).toFixed(0)} vs bare ${sum(b).toFixed(0)}`,
    );
    [...keys]
      .map((key) => [key, a.get(key) ?? 0, b.get(key) ?? 0] as const)
      .sort((x, y) => y[1] - y[2] - (x[1] - x[2]))
      .slice(0, k)
      .forEach(([key, x, y]) => console.log(`${x.toFixed(1).padStart(7)} ${y.toFixed(1).padStart(7)}  ${key}`));
  };
  compare('by file/package', (file, fn) => file || fn, 45);
  compare('by function', (file, fn, line) => `${fn} ${file}:${line}`, 70);
}
child.stop();
await bench.close();
await bare.close();
await same.close();
rmSync(dataDir, { recursive: true, force: true });
