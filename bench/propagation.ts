// Several gateways on one PostgreSQL database (docs/SCALE-OUT.md): how long a change made through gateway A takes until
// gateways B and C have applied it (A announces it with NOTIFY after commit), next to A's own apply as the baseline;
// then the API's change throughput on one gateway, PostgreSQL against SQLite. The gateways are the real app with the
// data plane's I/O off (buildTestApp), on 127.0.0.1 only. Prints figures; asserts nothing.
// Run: pnpm --filter @postern/bench exec tsx propagation.ts [changes] (see bench/README.md).
import { cpus, loadavg } from 'node:os';
import { createApiClient, operations } from '@postern/contract';
import type { DesiredState } from '@postern/server/src/dataplane/types.js';
import type { OfflineDataPlane } from '@postern/server/src/dataplane/offline.js';
import { buildTestApp, TEST_STORE, type TestApp } from '@postern/server/src/test/build-test-app.js';
import { postgresAvailable } from '@postern/server/src/test/postgres.js';
import { waitFor } from '@postern/server/src/test/wait-for.js';
import { ChangeSequence, DOMAIN, type ChangeTarget } from './lib/change-sequence.js';
import { runClientsInChild } from './lib/change-clients-child.js';
import { formatMs, median, percentile, printTable } from './lib/stats.js';

const CHANGES = Number(process.argv[2] ?? 200);
/** Services that stay published throughout, so each apply loads a state of some size. */
const STANDING = Number(process.env.BENCH_STANDING_SERVICES ?? 50);
/** Throughput rounds per engine, taken in turns so background load hits both alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TIME_BUDGET_MS = 10 * 60_000;
/** Clients sending changes at once in the batching measure (an import, a script creating services). */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
/** `clients`: only the clients-at-once measure. */
const ONLY = process.env.BENCH_ONLY ?? '';
/** 0: SQLite only (with BENCH_ONLY=clients). */
const POSTGRES = process.env.BENCH_POSTGRES !== '0' || ONLY !== 'clients';

interface Gateway extends ChangeTarget {
  test: TestApp;
  /** The signed-in operator's bearer token (the clients' process calls with it). */
  token: string;
  address: string;
}

/** Serves the app on 127.0.0.1 and signs in through the HTTP API; a node, a domain and the standing services. */
async function startGateway(test: TestApp, seed: boolean): Promise<Gateway> {
  const address = await test.app.listen({ host: '127.0.0.1', port: 0 });
  const token = await test.login();
  const api = createApiClient({ baseUrl: address, token });
  if (!seed) return { test, api, nodeId: 0, ids: new Map(), token, address };
  const node = await api.call(operations.createNode, { body: { name: 'office' } });
  await api.call(operations.createDomain, { body: { domain: DOMAIN } });
  for (let i = 0; i < STANDING; i++) {
    await api.call(operations.createHttpService, {
      params: { nodeId: node.id },
      body: { name: `standing${i}`, domain: DOMAIN, pathLocation: `/standing${i}`, backendPort: 8080 },
    });
  }
  return { test, api, nodeId: node.id, ids: new Map(), token, address };
}

/**
 * Calls `onApplied` with the desired state each time an apply of this data plane completes: on A inside the API
 * call, on B and C when they converge on an announcement. (app.ts calls `deps.dataPlane.apply()` at each use.)
 */
function hookApplies(dataPlane: OfflineDataPlane, onApplied: (state: DesiredState) => void): void {
  const apply = dataPlane.apply.bind(dataPlane);
  dataPlane.apply = async (scope) => {
    const result = await apply(scope);
    if (dataPlane.lastState) onApplied(dataPlane.lastState);
    return result;
  };
}

/** Per gateway: how long after it was sent each change of the sequence was first seen applied. */
class ApplyTracker {
  readonly latencies: number[] = [];
  private readonly started: number[] = [];

  constructor(private readonly sequence: ChangeSequence) {}

  /** Called just before change k is sent. */
  sent(k: number): void {
    this.started[k] = performance.now();
  }

  onApplied(state: DesiredState): void {
    const now = performance.now();
    const reached = this.sequence.progress(state);
    while (this.latencies.length <= reached && this.latencies.length < this.started.length) {
      this.latencies.push(now - (this.started[this.latencies.length] ?? now));
    }
  }

  get done(): boolean {
    return this.latencies.length === this.sequence.changes.length;
  }
}

interface Summary {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

const summarize = (values: readonly number[]): Summary => ({
  p50: percentile(values, 50),
  p95: percentile(values, 95),
  p99: percentile(values, 99),
  max: Math.max(...values),
});

const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;

async function measurePropagation(cleanups: (() => Promise<void>)[]) {
  const a = await buildTestApp({ postgres: true });
  cleanups.push(() => a.cleanup());
  const b = await buildTestApp({ sameDatabaseAs: a });
  cleanups.push(() => b.cleanup());
  const c = await buildTestApp({ sameDatabaseAs: a });
  cleanups.push(() => c.cleanup());
  const gwA = await startGateway(a, true);
  await startGateway(b, false);
  await startGateway(c, false);

  const sequence = new ChangeSequence(CHANGES, 0);
  const trackers = { A: new ApplyTracker(sequence), B: new ApplyTracker(sequence), C: new ApplyTracker(sequence) };
  hookApplies(a.fakeDataPlane, (state) => trackers.A.onApplied(state));
  hookApplies(b.fakeDataPlane, (state) => trackers.B.onApplied(state));
  hookApplies(c.fakeDataPlane, (state) => trackers.C.onApplied(state));
  const applies = { B: b.fakeDataPlane.applyCount, C: c.fakeDataPlane.applyCount };
  for (const [k, change] of sequence.changes.entries()) {
    for (const tracker of Object.values(trackers)) tracker.sent(k);
    await change(gwA);
  }
  await waitFor(() => trackers.B.done && trackers.C.done, {
    timeoutMs: 30_000,
    intervalMs: 5,
    what: 'gateways B and C to apply every change',
  });
  if (!trackers.A.done) throw new Error('gateway A answered before applying a change');
  return {
    A: summarize(trackers.A.latencies),
    B: summarize(trackers.B.latencies),
    C: summarize(trackers.C.latencies),
    appliesB: b.fakeDataPlane.applyCount - applies.B,
    appliesC: c.fakeDataPlane.applyCount - applies.C,
  };
}

/** The same change sequence against one gateway, back to back through the HTTP API: changes per second. */
async function measureThroughput(cleanups: (() => Promise<void>)[]) {
  const sqlite = await buildTestApp();
  cleanups.push(() => sqlite.cleanup());
  const postgres = await buildTestApp({ postgres: true });
  cleanups.push(() => postgres.cleanup());
  const gateways = { sqlite: await startGateway(sqlite, true), postgres: await startGateway(postgres, true) };
  const rates: Record<keyof typeof gateways, number[]> = { sqlite: [], postgres: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['sqlite', 'postgres'] as const) : (['postgres', 'sqlite'] as const);
    for (const engine of order) {
      const { changes } = new ChangeSequence(CHANGES, (round + 1) * CHANGES);
      const started = performance.now();
      for (const change of changes) await change(gateways[engine]);
      rates[engine].push(changes.length / ((performance.now() - started) / 1000));
    }
  }
  return { sqlite: median(rates.sqlite), postgres: median(rates.postgres), rates };
}

/**
 * CONCURRENCY clients at once against one gateway, each running its own change sequence (as fast as the API answers
 * it), the clients in a process of their own (lib/change-clients.ts): changes per second, the gateway's CPU per
 * change (its process only), and whether the data plane then serves every change: each client's last change is in
 * the state it serves, and what it serves matches the database (a drift check).
 */
async function measureBatching(cleanups: (() => Promise<void>)[], postgres: boolean) {
  const app = await buildTestApp(postgres ? { postgres: true } : {});
  cleanups.push(() => app.cleanup());
  const gateway = await startGateway(app, true);
  const runs = app.fakeDataPlane.applyCount;
  const perClient = Math.max(3, Math.ceil(CHANGES / CONCURRENCY));
  const offset = 1_000_000;
  const cpuBefore = process.cpuUsage();
  const clients = await runClientsInChild({
    baseUrl: gateway.address,
    token: gateway.token,
    nodeId: gateway.nodeId,
    clients: CONCURRENCY,
    perClient,
    offset,
  });
  const cpu = process.cpuUsage(cpuBefore);
  /** The gateway's process only (its clients run in another): on a loaded machine, read it per CPU-second. */
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const changes = perClient * CONCURRENCY;
  const served = app.fakeDataPlane.lastState;
  const unserved = Array.from(
    { length: CONCURRENCY },
    (_, i) => new ChangeSequence(perClient, offset + i * 10_000),
  ).filter((sequence) => !served || sequence.progress(served) !== perClient - 1).length;
  const drift = await app.fakeDataPlane.checkDrift();
  return {
    perSecond: changes / clients.seconds,
    perCpuSecond: changes / cpuSeconds,
    cpuUsPerChange: (cpuSeconds * 1e6) / changes,
    clientsCpuSeconds: clients.cpuSeconds,
    changes,
    runs: app.fakeDataPlane.applyCount - runs,
    unserved,
    differences: drift.differences.length,
  };
}

async function main(): Promise<void> {
  if (!Number.isInteger(CHANGES) || CHANGES < 3) throw new Error('usage: tsx propagation.ts [changes ≥ 3]');
  if (TEST_STORE === 'postgres') throw new Error('unset POSTERN_TEST_STORE: the SQLite gateway would be PostgreSQL');
  if (POSTGRES && !(await postgresAvailable()))
    throw new Error('no PostgreSQL at POSTERN_TEST_DATABASE_URL (scripts/lib/postgres.sh: start_test_postgres)');
  setTimeout(() => {
    console.error(`benchmark exceeded ${TIME_BUDGET_MS / 1000} s, giving up`);
    process.exit(2);
  }, TIME_BUDGET_MS).unref();

  // Each gateway's temp dir and database go, also on Ctrl-C; the first app made the database, so it goes last.
  const cleanups: (() => Promise<void>)[] = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((err: unknown) => console.error(err));
  };
  process.once('SIGINT', () => {
    void cleanUp().finally(() => process.exit(130));
  });
  try {
    const load = () =>
      loadavg()
        .map((n) => n.toFixed(1))
        .join(' ');
    // BENCH_ONLY=clients: only the clients-at-once measure (SQLite, then PostgreSQL), ~1 min.
    if (ONLY !== 'clients') {
      const propagation = await measurePropagation(cleanups);
      await cleanUp();
      const throughput = await measureThroughput(cleanups);
      await cleanUp();
      console.log(
        `\n${CHANGES} changes (create / edit / delete of HTTP services in turn, ${STANDING} standing), back to back through gateway A's HTTP API`,
      );
      console.log(`load average ${load()} on ${cpus().length} CPUs; the three gateways share one process\n`);
      const row = (label: string, s: Summary, baseline?: Summary): string[] => [
        label,
        fmt(s.p50),
        fmt(s.p95),
        fmt(s.p99),
        fmt(s.max),
        baseline ? `${(s.p50 / baseline.p50).toFixed(2)}× / ${(s.p99 / baseline.p99).toFixed(2)}×` : 'baseline',
      ];
      printTable(
        ['API call → applied', 'p50', 'p95', 'p99', 'max', 'p50 / p99 vs A'],
        [
          row('gateway A (its own apply)', propagation.A),
          row(`gateway B (${propagation.appliesB} applies)`, propagation.B, propagation.A),
          row(`gateway C (${propagation.appliesC} applies)`, propagation.C, propagation.A),
        ],
      );
      console.log('');
      const perSecond = (rates: number[]) => rates.map((rate) => rate.toFixed(0)).join(', ');
      printTable(
        ['one gateway, sequential API changes', 'changes/s (median)', 'rounds', 'ratio'],
        [
          ['SQLite', throughput.sqlite.toFixed(0), perSecond(throughput.rates.sqlite), 'baseline'],
          [
            'PostgreSQL',
            throughput.postgres.toFixed(0),
            perSecond(throughput.rates.postgres),
            `${(throughput.postgres / throughput.sqlite).toFixed(2)}×`,
          ],
        ],
      );
      console.log(
        `\n(one change = ${formatMs(1000 / throughput.sqlite)} on SQLite, ${formatMs(1000 / throughput.postgres)} on PostgreSQL)`,
      );
    }
    const batchedSqlite = await measureBatching(cleanups, false);
    await cleanUp();
    const batchedPostgres = POSTGRES ? await measureBatching(cleanups, true) : null;
    console.log(
      `\n${CONCURRENCY} clients at once in a process of their own, ${batchedSqlite.changes} changes; load average ${load()} on ${cpus().length} CPUs\n`,
    );
    const batched = (label: string, b: Awaited<ReturnType<typeof measureBatching>>) => [
      label,
      b.perSecond.toFixed(0),
      b.perCpuSecond.toFixed(0),
      b.cpuUsPerChange.toFixed(0),
      b.clientsCpuSeconds.toFixed(1),
      `${b.runs} (${(b.runs / b.changes).toFixed(2)} per change)`,
      b.unserved === 0 ? "every client's last" : `${b.unserved} clients' NOT`,
      b.differences === 0 ? 'none' : `${b.differences} DIFFER`,
    ];
    printTable(
      [
        'gateway',
        'changes/s',
        'per gateway CPU-s',
        'gateway CPU µs/change',
        'clients CPU-s',
        'data-plane runs',
        'served',
        'served vs database',
      ],
      [
        batched('SQLite (target ≥ 500/s)', batchedSqlite),
        ...(batchedPostgres ? [batched('PostgreSQL', batchedPostgres)] : []),
      ],
    );
  } finally {
    await cleanUp();
  }
}

await main();
