// What a node's change costs through the API at N services (bench/README.md "node-change.ts"): an idle node
// disabled and enabled again, BENCH_CHANGES times each, through injected requests on buildTestApp's gateway (SQLite,
// the data plane's I/O off: the real reconciler, planner and validators in front of recording adapters), with N HTTP
// services of another node. Prints wall p50/p99 and this process's CPU µs per change. POSTERN_SOURCE: the repository
// whose server is measured (default this one), so the old code is measured in the same way beside the new.
// No network, no root.
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { median, percentile, printTable } from './lib/stats.js';

const SIZES = (process.argv[2] ?? '1000,10000').split(',').map(Number);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 20);
/**
 * BENCH_DURING_FULL=1: also BENCH_CHANGES node changes each made while a full run is in flight (started the turn
 * before), and the full run alone: a node change goes beside the full run (its peer patch and the run's peer sync take
 * turns, ScopedLedger), where before it waited for the run and then one of its own.
 */
const DURING_FULL = process.env.BENCH_DURING_FULL === '1';
const ROOT = resolve(process.env.POSTERN_SOURCE ?? join(import.meta.dirname, '..'));

type Module = Record<string, unknown>;
const load = async (path: string): Promise<Module> => (await import(join(ROOT, 'apps/server/src', path))) as Module;

async function measure(size: number): Promise<string[]> {
  const { buildTestApp } = (await load('test/build-test-app.ts')) as {
    buildTestApp: () => Promise<{
      app: { inject: (o: object) => Promise<{ statusCode: number; json: () => { id: number; token: string } }> };
      deps: {
        dataPlane: { apply: () => Promise<unknown> };
        db: {
          write: <T>(
            work: (tx: {
              insert: (table: unknown) => { values: (rows: object[]) => { run: () => Promise<unknown> } };
            }) => Promise<T>,
          ) => Promise<T>;
        };
      };
      login: () => Promise<string>;
      cleanup: () => Promise<void>;
    }>;
  };
  const { httpServices, domains } = (await load('db/schema.ts')) as { httpServices: unknown; domains: unknown };
  const t = await buildTestApp();
  try {
    const token = await t.login();
    const api = (method: string, url: string, payload?: object) =>
      t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
    const busy = (await api('POST', '/api/nodes', { name: 'busy' })).json();
    const idle = (await api('POST', '/api/nodes', { name: 'idle' })).json();
    const at = new Date().toISOString();
    for (let start = 0; start < size; start += 500) {
      const count = Math.min(500, size - start);
      const names = Array.from({ length: count }, (_, k) => `s${String(start + k)}.bench.test`);
      // One service per domain, as a gateway's usual shape (and bench/apply.ts's).
      await t.deps.db.write(
        async (tx) =>
          await tx
            .insert(domains)
            .values(names.map((domain) => ({ domain, createdAt: at, updatedAt: at })))
            .run(),
      );
      const rows = names.map((domain, k) => ({
        nodeId: busy.id,
        name: `s${String(start + k)}`,
        domain,
        backendHost: 'ignored',
        backendPort: 80,
        createdAt: at,
        updatedAt: at,
      }));
      await t.deps.db.write(async (tx) => await tx.insert(httpServices).values(rows).run());
    }
    // A full run serves them all before the changes (as after a boot).
    await api('PATCH', `/api/nodes/${String(busy.id)}/disable`);
    await api('PATCH', `/api/nodes/${String(busy.id)}/enable`);
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < CHANGES; i++)
      for (const action of ['disable', 'enable']) {
        const started = performance.now();
        const used = process.cpuUsage();
        const answer = await api('PATCH', `/api/nodes/${String(idle.id)}/${action}`);
        const spent = process.cpuUsage(used);
        wall.push(performance.now() - started);
        cpu.push(spent.user + spent.system);
        if (answer.statusCode !== 200) throw new Error(`${action}: ${String(answer.statusCode)}`);
      }
    const during: number[] = [];
    const full: number[] = [];
    for (let i = 0; DURING_FULL && i < CHANGES; i++) {
      let started = performance.now();
      await t.deps.dataPlane.apply();
      full.push(performance.now() - started);
      const run = t.deps.dataPlane.apply();
      await new Promise((resolve) => setImmediate(resolve));
      started = performance.now();
      const answer = await api('PATCH', `/api/nodes/${String(idle.id)}/${i % 2 === 0 ? 'disable' : 'enable'}`);
      during.push(performance.now() - started);
      await run;
      if (answer.statusCode !== 200) throw new Error(`during a full run: ${String(answer.statusCode)}`);
    }
    return [
      size.toLocaleString('en'),
      `${median(wall).toFixed(1)} ms`,
      `${percentile(wall, 99).toFixed(1)} ms`,
      `${Math.round(median(cpu)).toLocaleString('en')} µs`,
      ...(DURING_FULL
        ? [`${median(during).toFixed(1)} ms (${percentile(during, 99).toFixed(1)} ms)`, `${median(full).toFixed(1)} ms`]
        : []),
    ];
  } finally {
    await t.cleanup();
  }
}

const rows: string[][] = [];
for (const size of SIZES) rows.push(await measure(size));
console.log(`\n${ROOT}: an idle node disabled/enabled through the API, ${String(CHANGES * 2)} changes per size`);
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
printTable(
  [
    'services',
    'node change API p50',
    'p99',
    'CPU per change (p50)',
    ...(DURING_FULL ? ['during a full run: p50 (p99)', 'full run alone p50'] : []),
  ],
  rows,
);
