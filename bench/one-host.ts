// Many paths on one host (bench/README.md "one-host.ts"): the planner's route table for a host with 1,000 / 6,000 /
// 20,000 paths, and a change to one service on that host through the API (a scoped run plans the whole host), in
// buildTestApp's app (SQLite, the data plane's I/O off, its planner real). With BENCH_BASE=<a checkout of another
// commit, dependencies installed> the same is measured with that checkout's code in the same process, and the ratio
// printed. Prints CPU ms (this process's user + system time, median of rounds) and the load average; no root.
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { buildTestApp } from '@postern/server/src/test/build-test-app.js';
import type { buildRouteTable } from '@postern/server/src/dataplane/nginx/routes.js';
import type { sqliteClientOf } from '@postern/server/src/db/client.js';
import { median, printTable } from './lib/stats.js';

const SIZES = process.argv.slice(2).map(Number);
if (SIZES.length === 0) SIZES.push(1_000, 6_000, 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BASE = process.env.BENCH_BASE;
/** Beyond this many paths the base gets one round (its quadratic planner takes half a minute at 20,000). */
const BASE_FULL_ROUNDS_UP_TO = 6_000;
const DOMAIN = 'one.bench.test';

interface Code {
  name: string;
  buildTestApp: typeof buildTestApp;
  buildRouteTable: typeof buildRouteTable;
  sqliteClientOf: typeof sqliteClientOf;
}

async function load(name: string, root: string): Promise<Code> {
  const from = async <T>(path: string): Promise<T> =>
    (await import(pathToFileURL(`${root}/apps/server/src/${path}`).href)) as T;
  return {
    name,
    ...(await from<Pick<Code, 'buildTestApp'>>('test/build-test-app.ts')),
    ...(await from<Pick<Code, 'buildRouteTable'>>('dataplane/nginx/routes.ts')),
    ...(await from<Pick<Code, 'sqliteClientOf'>>('db/client.ts')),
  };
}

/** CPU ms of `work`: the median over `rounds` rounds, after a warm-up when there is more than one. */
async function cpuMs(rounds: number, work: () => Promise<unknown>): Promise<number> {
  const figures: number[] = [];
  for (let r = rounds > 1 ? -1 : 0; r < rounds; r++) {
    const start = process.cpuUsage();
    await work();
    const used = process.cpuUsage(start);
    if (r >= 0) figures.push((used.user + used.system) / 1000);
  }
  return median(figures);
}

/** The paths of one host: two levels, in both letter cases where that clashes with nothing. */
const pathOf = (i: number): string => `/team${i % 97}/${i % 2 === 0 ? 'App' : 'app'}${i}`;

async function measure(code: Code, size: number, rounds: number): Promise<{ plan: number; change: number }> {
  const test = await code.buildTestApp();
  try {
    const headers = { authorization: `Bearer ${await test.login()}` };
    const inject = async (method: 'POST' | 'PATCH', url: string, payload: object): Promise<{ id: number }> => {
      const response = await test.app.inject({ method, url, headers, payload });
      if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
      return JSON.parse(response.body) as { id: number };
    };
    const node = await inject('POST', '/api/nodes', { name: 'office' });
    await inject('POST', '/api/domains', { domain: DOMAIN });
    // Through the API every create would be a scoped run of its own: one transaction of raw inserts instead.
    const sqlite = code.sqliteClientOf(test.deps.db);
    const add = sqlite.prepare(
      `INSERT INTO http_services (node_id, name, domain, path_location, backend_host, backend_port) VALUES (?, ?, ?, ?, '10.44.0.2', 80) RETURNING id`,
    );
    const ids: number[] = [];
    sqlite.transaction(() => {
      for (let i = 0; i < size; i++) ids.push((add.get(node.id, `s${i}`, DOMAIN, pathOf(i)) as { id: number }).id);
    })();
    const rows = ids.map((serviceId, i) => ({
      serviceId,
      nodeId: node.id,
      domain: DOMAIN,
      pathLocation: pathOf(i),
      backendProto: 'http' as const,
      backendHost: '10.44.0.2',
      backendPort: 80,
      allowedIps: [],
      blockedIps: [],
      accessPolicyId: null,
    }));
    const domains = [{ domainId: 1, domain: DOMAIN, ssl: 'self-signed' as const }];
    const plan = await cpuMs(rounds, () => {
      const table = code.buildRouteTable(rows, domains);
      if (table.rejected.size > 0) throw new Error(`${code.name}: ${table.rejected.size} paths set aside`);
      return Promise.resolve(table);
    });
    let port = 8000;
    const target = ids[Math.floor(size / 2)] ?? 0;
    const change = await cpuMs(rounds, () =>
      inject('PATCH', `/api/services/${node.id}/http/${target}`, { backendPort: port++ }),
    );
    return { plan, change };
  } finally {
    await test.cleanup();
  }
}

const codes = [await load('this tree', new URL('..', import.meta.url).pathname)];
if (BASE) codes.push(await load(`BENCH_BASE (${BASE})`, BASE));
console.log(
  `load average before: ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} (2 CPUs)`,
);
const rows: string[][] = [];
for (const size of SIZES) {
  const [now, before] = [
    await measure(codes[0] as Code, size, ROUNDS),
    codes[1] ? await measure(codes[1], size, size > BASE_FULL_ROUNDS_UP_TO ? 1 : ROUNDS) : undefined,
  ];
  const ratio = (old: number | undefined, fresh: number) => (old === undefined ? '' : `${(old / fresh).toFixed(1)}×`);
  rows.push([
    size.toLocaleString('en'),
    now.plan.toFixed(1),
    before?.plan.toFixed(0) ?? '',
    ratio(before?.plan, now.plan),
    now.change.toFixed(1),
    before?.change.toFixed(0) ?? '',
    ratio(before?.change, now.change),
  ]);
  console.log(`${size}: done, load average ${(loadavg()[0] ?? 0).toFixed(2)}`);
}
printTable(
  [
    'paths on one host',
    'route table, CPU ms',
    'base',
    'base / this',
    'change on that host through the API, CPU ms',
    'base',
    'base / this',
  ],
  rows,
);
console.log(
  `load average after: ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} (2 CPUs)`,
);
