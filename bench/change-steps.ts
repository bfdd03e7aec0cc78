// Where a change through the API goes (bench/README.md "change-steps.ts"): CPU µs per change of HTTP services
// created, edited and deleted in turn through injected requests, 32 clients at once and one alone, with the data
// plane's run and without it (answered at once), next to each step alone: an authenticated request that changes
// nothing, the service read that the answer and the audit make, an audit row (a write transaction of its own), the
// scoped run. The app is buildTestApp's (SQLite, the data plane's I/O off). Prints CPU µs (this process's user +
// system time, median of rounds); no network, no root.
import { loadavg } from 'node:os';
import { getHttpService } from '@postern/server/src/modules/services/http-service.js';
import { buildTestApp } from '@postern/server/src/test/build-test-app.js';
import type { ApplyResult } from '@postern/server/src/dataplane/types.js';
import { median, printTable } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Changes per round of the whole-change rows (a multiple of 3 per client). */
const CHANGES = Number(process.env.BENCH_CHANGES ?? 384);
const CALLS = Number(process.env.BENCH_CALLS ?? 300);
const DOMAIN = 'bench.example.com';

const test = await buildTestApp();
const { app, deps } = test;
const headers = { authorization: `Bearer ${await test.login()}` };

async function inject(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object): Promise<unknown> {
  const response = await app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return response.body === '' ? undefined : (JSON.parse(response.body) as unknown);
}

const node = (await inject('POST', '/api/nodes', { name: 'office' })) as { id: number };
await inject('POST', '/api/domains', { domain: DOMAIN });
for (let i = 0; i < 50; i++)
  await inject('POST', `/api/services/${node.id}/http`, {
    name: `standing${i}`,
    domain: DOMAIN,
    pathLocation: `/standing${i}`,
    backendPort: 8080,
  });
const standing = (await inject('GET', `/api/services/http?domain=${DOMAIN}&page=1&limit=1`)) as {
  data: { id: number }[];
};
const standingId = standing.data[0]?.id ?? 0;

let serial = 0;
/** One client's changes: create /x, edit its port, delete it; `count` / 3 times. */
async function client(count: number): Promise<void> {
  for (let k = 0; k < count / 3; k++) {
    const path = `/x${serial++}`;
    const created = (await inject('POST', `/api/services/${node.id}/http`, {
      name: path.slice(1),
      domain: DOMAIN,
      pathLocation: path,
      backendPort: 8080,
    })) as { id: number };
    await inject('PATCH', `/api/services/${node.id}/http/${created.id}`, { backendPort: 9000 });
    await inject('DELETE', `/api/services/${node.id}/http/${created.id}`);
  }
}

/** CPU µs per unit of `round` (which does `units` of them): the median over ROUNDS rounds, after a warm-up. */
async function cpuPer(units: number, round: () => Promise<unknown>): Promise<number> {
  const figures: number[] = [];
  for (let r = -1; r < ROUNDS; r++) {
    const start = process.cpuUsage();
    await round();
    const used = process.cpuUsage(start);
    if (r >= 0) figures.push((used.user + used.system) / units);
  }
  return median(figures);
}

const repeat = (calls: number, step: () => Promise<unknown>) => async () => {
  for (let i = 0; i < calls; i++) await step();
};

const runsBefore = test.fakeDataPlane.applyCount;
const rows: string[][] = [];
const concurrent = async () => Promise.all(Array.from({ length: 32 }, () => client(CHANGES / 32)));
rows.push(['whole change, 32 clients at once', (await cpuPer(CHANGES, concurrent)).toFixed(0)]);
const runs = (test.fakeDataPlane.applyCount - runsBefore) / (ROUNDS + 1);
rows.push(['whole change, one client', (await cpuPer(CHANGES / 4, () => client(CHANGES / 4))).toFixed(0)]);
// The data plane answering at once: the API path alone (write, audit, answer).
const apply = test.fakeDataPlane.apply.bind(test.fakeDataPlane);
const served: ApplyResult = {
  ok: true,
  rejected: { http: new Map(), tcp: new Map(), nodes: new Map() },
  scopedHttp: new Set(),
};
test.fakeDataPlane.apply = () => Promise.resolve(served);
rows.push(['change without the data-plane run, 32 at once', (await cpuPer(CHANGES, concurrent)).toFixed(0)]);
let fresh = 0;
/** One client's creates, each on a domain of its own (a script adding services as label discovery finds them). */
async function newDomains(count: number): Promise<void> {
  for (let k = 0; k < count; k++) {
    const name = `n${fresh++}`;
    await inject('POST', `/api/services/${node.id}/http`, {
      name,
      domain: `${name}.new.example.com`,
      backendPort: 8080,
    });
  }
}
rows.push([
  'service on a new domain without the data-plane run, 32 at once',
  (await cpuPer(CHANGES, async () => Promise.all(Array.from({ length: 32 }, () => newDomains(CHANGES / 32))))).toFixed(
    0,
  ),
]);
test.fakeDataPlane.apply = apply;
rows.push([
  'authenticated request changing nothing (GET one service)',
  (
    await cpuPer(
      CALLS,
      repeat(CALLS, () => inject('GET', `/api/services/${node.id}/http/${standingId}`)),
    )
  ).toFixed(0),
]);
rows.push([
  'service read (the answer; the audit reads it before and after)',
  (
    await cpuPer(
      CALLS,
      repeat(CALLS, () => getHttpService(deps, node.id, standingId)),
    )
  ).toFixed(0),
]);
rows.push([
  'audit row (one insert, its own write)',
  (
    await cpuPer(
      CALLS,
      repeat(CALLS, () =>
        deps.audit.record({
          actor: { kind: 'system' },
          action: 'bench.step',
          target: { type: 'http', id: standingId, name: 'standing0' },
          after: { backendPort: 8080 },
        }),
      ),
    )
  ).toFixed(0),
]);
rows.push([
  'scoped run of the domain (51 services), alone',
  (
    await cpuPer(
      CALLS,
      repeat(CALLS, () => deps.dataPlane.apply({ hosts: [DOMAIN], http: [standingId] })),
    )
  ).toFixed(0),
]);
console.log(
  `\nload average ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}; ${ROUNDS} rounds; ${runs.toFixed(0)} data-plane runs per round of ${CHANGES} changes at once\n`,
);
printTable(['CPU µs per change (or per call)', 'µs'], rows);
await test.cleanup();
