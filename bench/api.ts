// API benchmark: list latency at 10,000 nodes and 10,000 HTTP services under a fixed offered load,
// against a bare Fastify route measured in the same run, then SSE density and the event-loop delay of one node
// update broadcast to thousands of subscribers. Everything listens on 127.0.0.1 and the run is bounded in time.
// Run: pnpm --filter @postern/bench exec tsx api.ts (see bench/README.md). Prints figures; asserts nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FastifyInstance } from 'fastify';
import { sqliteClientOf } from '@postern/server/src/db/client.js';
import type { LoadResult, SseOpenResult, SseWaitResult } from './lib/api-client-protocol.js';
import { startAnswerRoute, startBareRoute, startBenchApp, urlOf, type BenchApp } from './lib/api-app.js';
import { startLoadChild, type LoadChild } from './lib/api-load-child.js';
import { benchServiceDomain } from './lib/api-seed.js';
import { printTable } from './lib/stats.js';

const SIZE = 10_000;
const RATE = Number(process.env.BENCH_RATE ?? 500);
/**
 * The day-2 console's reads (the services overview, what needs attention) are read by each open console
 * tab about twice a minute, not per node: a lower offered load, with a bare route at the same rate as baseline.
 */
const CONSOLE_RATE = Number(process.env.BENCH_CONSOLE_RATE ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = 1;
const IDLE_SUBSCRIBERS = Number(process.env.BENCH_IDLE_SUBSCRIBERS ?? 2000);
const BROADCAST_SUBSCRIBERS = Number(process.env.BENCH_BROADCAST_SUBSCRIBERS ?? 5000);
const TIME_BUDGET_MS = 10 * 60_000;
/** The list p99 within 1.5× the bare route's at 10,000 rows (bench/README.md, api.ts; 2× before). */
const TARGET = { p99Ms: 25, ratio: 1.5, subscribersPerMb: 50, loopDelayMs: 50 };
const MB = 2 ** 20;

// RSS growth is only meaningful after a full collection; expose gc() without requiring a node flag.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
function settledRss(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().rss;
}

interface LatencySummary {
  p50: number;
  p99: number;
  count: number;
  errors: number;
  /** This process's CPU (user + system) over the route's slices per request served, µs: steadier than wall time. */
  cpuUsPerRequest: number;
}

/** Nearest-rank percentiles. */
function summarize({
  latencies,
  errors,
  cpuUs,
  requests,
}: {
  latencies: number[];
  errors: number;
  cpuUs: number;
  requests: number;
}): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p: number): number =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
  return { p50: at(50), p99: at(99), count: sorted.length, errors, cpuUsPerRequest: cpuUs / Math.max(requests, 1) };
}

/** Idle list subscribers held per MB of server RSS growth; measured first, on a quiet heap. */
async function measureSseDensity(child: LoadChild, streamUrl: string) {
  const before = settledRss();
  const idle = await child.ask<SseOpenResult>({ cmd: 'sse-open', url: streamUrl, count: IDLE_SUBSCRIBERS });
  const growthMb = (settledRss() - before) / MB;
  console.log(`idle subscribers: ${idle.open} open, ${idle.failed} failed, RSS +${growthMb.toFixed(1)} MB`);
  return { open: idle.open, perMb: idle.open / Math.max(growthMb, 1e-3) };
}

/** One node's status change (as one `wg show` poll would report it), fanned out while the event loop is watched. */
async function measureBroadcast(child: LoadChild, bench: BenchApp, streamUrl: string, alreadyOpen: number) {
  const more = await child.ask<SseOpenResult>({
    cmd: 'sse-open',
    url: streamUrl,
    count: BROADCAST_SUBSCRIBERS - alreadyOpen,
  });
  const firstNode = sqliteClientOf(bench.deps.db)
    .prepare('SELECT public_key AS publicKey FROM nodes WHERE is_local = 0 ORDER BY id LIMIT 1')
    .get() as { publicKey: string } | undefined;
  if (!firstNode) throw new Error('no seeded node');
  await child.ask({ cmd: 'sse-arm' });
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  bench.dataPlane.status.setStatus(firstNode.publicKey, {
    status: 'online',
    clientIp: '198.51.100.7',
    latestHandshakeTimestamp: new Date().toISOString(),
    transferRx: 1024,
    transferTx: 2048,
  });
  const result = await child.ask<SseWaitResult>({ cmd: 'sse-wait', timeoutMs: 30_000 });
  loopDelay.disable();
  console.log(
    `broadcast: ${result.received}/${result.open} subscribers got the update in ${result.ms.toFixed(0)} ms (${more.failed} failed to open)`,
  );
  await child.ask({ cmd: 'sse-close' });
  return { ...result, loopDelayMaxMs: loopDelay.max / 1e6 };
}

/**
 * Fixed offered load in 1-second slices, the routes taking turns (and rotating who goes first): whatever else the
 * machine does meanwhile hits all of them alike, so the ratios stay meaningful on a busy host.
 */
async function measureLatency(
  child: LoadChild,
  targets: { name: string; url: string; headers: Record<string, string>; rate?: number }[],
) {
  const samples = new Map(
    targets.map((target) => [target.name, { latencies: [] as number[], errors: 0, cpuUs: 0, requests: 0 }]),
  );
  for (let slice = 0; slice < SECONDS; slice++) {
    const order = [...targets.slice(slice % targets.length), ...targets.slice(0, slice % targets.length)];
    for (const target of order) {
      const warmupSeconds = slice === 0 ? WARMUP_SECONDS : 0;
      // The server's CPU while it serves this route alone (the load client is another process): per request, the
      // figure that a busy machine disturbs least (it still includes the app's background work of the slice).
      const cpuBefore = process.cpuUsage();
      const result = await child.ask<LoadResult>({
        cmd: 'load',
        url: target.url,
        headers: target.headers,
        rate: target.rate ?? RATE,
        warmupSeconds,
        seconds: 1,
      });
      const cpu = process.cpuUsage(cpuBefore);
      const sample = samples.get(target.name);
      if (!sample) continue;
      sample.latencies.push(...result.latencies);
      sample.errors += result.errors;
      sample.cpuUs += cpu.user + cpu.system;
      sample.requests += Math.round((warmupSeconds + 1) * (target.rate ?? RATE));
    }
  }
  return new Map([...samples].map(([name, sample]) => [name, summarize(sample)]));
}

const ms = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : 'n/a');
const verdict = (ok: boolean): string => (ok ? 'yes' : 'NO');

function printReport(
  latency: Map<string, LatencySummary>,
  density: { open: number; perMb: number },
  broadcast: { received: number; open: number; loopDelayMaxMs: number },
): void {
  const empty: LatencySummary = { p50: Number.NaN, p99: Number.NaN, count: 0, errors: 0, cpuUsPerRequest: Number.NaN };
  const bare = latency.get('bare') ?? empty;
  const latencyRow = (label: string, r: LatencySummary, isBaseline = false): string[] => [
    `${label}  p50 / p99`,
    `${ms(r.p50)} / ${ms(r.p99)}`,
    isBaseline ? 'baseline' : `p99 ≤ ${TARGET.p99Ms} ms`,
    isBaseline ? '-' : verdict(r.p99 <= TARGET.p99Ms && r.errors === 0),
    `${r.count} ok, ${r.errors} failed`,
  ];
  const ratioRow = (label: string, r: LatencySummary): string[] => {
    const ratio = r.p99 / bare.p99;
    return [label, `${ratio.toFixed(2)}×`, `≤ ${TARGET.ratio}×`, verdict(ratio <= TARGET.ratio), ''];
  };
  const nodes = latency.get('nodes') ?? empty;
  const services = latency.get('services') ?? empty;
  const cpuRow = (label: string, r: LatencySummary): string[] => [
    `${label}: server CPU per request`,
    `${r.cpuUsPerRequest.toFixed(0)} µs (${(r.cpuUsPerRequest / bare.cpuUsPerRequest).toFixed(2)}× bare)`,
    'report',
    '-',
    '',
  ];
  const bareConsole = latency.get('bare-console') ?? empty;
  const consoleRatioRow = (label: string, r: LatencySummary): string[] => {
    const ratio = r.p99 / bareConsole.p99;
    return [label, `${ratio.toFixed(2)}×`, 'report', '-', ''];
  };
  const consoleRows = (['overview', 'overview-shaped', 'attention', 'find'] as const).map((name) => {
    const labels = {
      overview: 'GET /api/services?page=1&limit=25',
      'overview-shaped': 'GET /api/services?q=…&status=public&sort=node&order=desc&limit=25',
      attention: 'GET /api/system/attention',
      find: 'GET /api/services/find?q=… (for comparison)',
    };
    return latencyRow(`${labels[name]} at ${CONSOLE_RATE}/s`, latency.get(name) ?? empty);
  });
  const load = loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
  console.log(
    `\noffered load ${RATE} req/s, ${SECONDS} × 1 s per route, interleaved (open loop, latency from the scheduled start)`,
  );
  const isBusy = (loadavg()[0] ?? 0) > cpus().length;
  console.log(
    `load average ${load} on ${cpus().length} CPUs${isBusy ? ': above the CPU count, latency figures are not meaningful' : ''}\n`,
  );
  printTable(
    ['measure', 'figure', 'target', 'met', 'notes'],
    [
      latencyRow('GET /api/nodes?page=1&limit=10', nodes),
      latencyRow('GET /api/services/http?domain=…', services),
      latencyRow('bare Fastify route', bare, true),
      ratioRow('nodes list p99 / bare p99', nodes),
      ratioRow('services list p99 / bare p99', services),
      cpuRow('nodes list', nodes),
      cpuRow('services list', services),
      cpuRow('bare route', bare),
      latencyRow("bare route sending the nodes list's own answer (floor)", latency.get('answer') ?? empty, true),
      cpuRow("bare route sending the nodes list's answer", latency.get('answer') ?? empty),
      ...consoleRows,
      latencyRow(`bare Fastify route at ${CONSOLE_RATE}/s`, bareConsole, true),
      consoleRatioRow('services overview p99 / bare p99', latency.get('overview') ?? empty),
      consoleRatioRow('shaped overview p99 / bare p99', latency.get('overview-shaped') ?? empty),
      consoleRatioRow('attention p99 / bare p99', latency.get('attention') ?? empty),
      [
        'idle /api/nodes/stream subscribers per MB RSS',
        density.perMb.toFixed(0),
        `≥ ${TARGET.subscribersPerMb}`,
        verdict(density.perMb >= TARGET.subscribersPerMb),
        `${density.open} subscribers`,
      ],
      [
        `event-loop delay, one update to ${broadcast.open} subscribers (max)`,
        ms(broadcast.loopDelayMaxMs),
        `≤ ${TARGET.loopDelayMs} ms`,
        verdict(broadcast.loopDelayMaxMs <= TARGET.loopDelayMs && broadcast.received === broadcast.open),
        `${broadcast.received} received`,
      ],
    ],
  );
  // One line to read at the end of a run: the list p99 target against the bare route of the same run.
  const [nodesRatio, servicesRatio] = [nodes.p99 / bare.p99, services.p99 / bare.p99];
  const isMet = nodesRatio <= TARGET.ratio && servicesRatio <= TARGET.ratio && nodes.errors + services.errors === 0;
  console.log(
    `\n${isMet ? 'PASS' : 'FAIL'}: list p99 / bare p99 nodes ${nodesRatio.toFixed(2)}×, services ${servicesRatio.toFixed(2)}× (target ≤ ${TARGET.ratio}×)` +
      (isBusy
        ? ` — load average ${load} above ${cpus().length} CPUs: not a meaningful verdict, run again on a quiet machine`
        : ''),
  );
}

async function main(): Promise<void> {
  // Bounded in time whatever happens: a stuck phase ends the run instead of hanging it.
  setTimeout(() => {
    console.error(`benchmark exceeded ${TIME_BUDGET_MS / 1000} s, giving up`);
    process.exit(2);
  }, TIME_BUDGET_MS).unref();
  const dataDir = mkdtempSync(join(tmpdir(), 'postern-bench-api-'));
  const child = startLoadChild();
  let bench: BenchApp | undefined;
  let bare: FastifyInstance | undefined;
  let answer: FastifyInstance | undefined;
  try {
    bench = await startBenchApp(dataDir, SIZE);
    bare = await startBareRoute();
    console.log(`seeded ${SIZE} nodes and ${SIZE} HTTP services in ${bench.seedSeconds.toFixed(2)} s`);
    const streamUrl = urlOf(bench.app, `/api/nodes/stream?page=1&limit=10&token=${encodeURIComponent(bench.token)}`);
    const density = await measureSseDensity(child, streamUrl);
    const broadcast = await measureBroadcast(child, bench, streamUrl, density.open);
    const auth = { authorization: `Bearer ${bench.token}` };
    // The nodes list's answer, body and headers, served by a bare route: what its size and headers cost alone.
    const sample = await fetch(urlOf(bench.app, '/api/nodes?page=1&limit=10'), { headers: auth });
    const sampleHeaders = Object.fromEntries(
      [...sample.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'content-length'].includes(name)),
    );
    answer = await startAnswerRoute(await sample.text(), sampleHeaders);
    const latency = await measureLatency(child, [
      { name: 'nodes', url: urlOf(bench.app, '/api/nodes?page=1&limit=10'), headers: auth },
      {
        name: 'services',
        url: urlOf(bench.app, `/api/services/http?domain=${benchServiceDomain(500)}`),
        headers: auth,
      },
      { name: 'bare', url: urlOf(bare, '/bare'), headers: {} },
      { name: 'answer', url: urlOf(answer, '/answer'), headers: {} },
      { name: 'overview', url: urlOf(bench.app, '/api/services?page=1&limit=25'), headers: auth, rate: CONSOLE_RATE },
      {
        name: 'overview-shaped',
        url: urlOf(
          bench.app,
          `/api/services?q=${benchServiceDomain(5)}&status=public&sort=node&order=desc&page=1&limit=25`,
        ),
        headers: auth,
        rate: CONSOLE_RATE,
      },
      { name: 'attention', url: urlOf(bench.app, '/api/system/attention'), headers: auth, rate: CONSOLE_RATE },
      {
        name: 'find',
        url: urlOf(bench.app, `/api/services/find?q=${benchServiceDomain(5)}`),
        headers: auth,
        rate: CONSOLE_RATE,
      },
      { name: 'bare-console', url: urlOf(bare, '/bare'), headers: {}, rate: CONSOLE_RATE },
    ]);
    printReport(latency, density, broadcast);
  } finally {
    child.stop();
    await bench?.close();
    await bare?.close();
    await answer?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
