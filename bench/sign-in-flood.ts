// Two gateways on one PostgreSQL database (docs/api.md "Audit log"): while one client floods gateway A with refused
// sign-ins, how much slower do the operator's changes get on gateway B? Every refused sign-in used to write an audit
// row in a write transaction of its own, and every write on PostgreSQL takes the cluster-wide write lock, so the flood
// on A queued B's changes behind it. Prints B's change latency during the flood next to B's own baseline (same run, no
// flood), the audit rows the flood wrote and the flood's rate. Gateway A and the flood run in a child process, so the
// flood competes with B for the database and the CPUs, not for B's event loop. Asserts nothing. Run: pnpm --filter
// @postern/bench exec tsx sign-in-flood.ts [requests] (see bench/README.md).
import { fork } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { buildTestApp, TEST_ADMIN, type TestApp } from '@postern/server/src/test/build-test-app.js';
import { postgresAvailable } from '@postern/server/src/test/postgres.js';
import { formatMs, median, percentile, printTable } from './lib/stats.js';

const isChild = process.argv[2] === 'gateway-a';
const REQUESTS = Number((isChild ? process.argv[5] : process.argv[2]) ?? 3000);
/** Sign-ins in flight at most in the flood. */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
/**
 * Sign-ins started per second (open loop: request i starts at i / rate), the same for any version of the code, so
 * that a version that answers the flood faster does not get a heavier flood. 0: as fast as the workers go.
 */
const RATE = Number(process.env.BENCH_RATE ?? 60);
/** B's changes in each baseline phase. */
const BASELINE_CHANGES = Number(process.env.BENCH_BASELINE_CHANGES ?? 60);

type Command = { cmd: 'flood' } | { cmd: 'exit' };
type Reply = { cmd: 'ready' } | { cmd: 'flood'; ms: number; statuses: Record<string, number> };

/** Gateway A, in the child: joins B's database, answers 'flood' with the flood's figures. */
async function gatewayA(url: string, dataDir: string): Promise<void> {
  const shared = { database: { url }, dataDir } as unknown as TestApp;
  const a = await buildTestApp({ sameDatabaseAs: shared });
  const send = (reply: Reply) => process.send?.(reply);
  process.on('message', (command: Command) => {
    if (command.cmd === 'exit') {
      void a.app.close().then(() => process.exit(0));
      return;
    }
    void (async () => {
      const start = performance.now();
      const statuses: Record<string, number> = {};
      let next = 0;
      const worker = async () => {
        while (next < REQUESTS) {
          const due = start + (next / RATE) * 1000;
          next++;
          if (RATE > 0 && due > performance.now()) await sleep(due - performance.now());
          const response = await a.app.inject({
            method: 'POST',
            url: '/api/auth/login',
            payload: { username: TEST_ADMIN.username, password: 'not-the-password' },
            remoteAddress: '127.0.0.1',
            headers: { 'x-forwarded-for': '203.0.113.7' },
          });
          statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      send({ cmd: 'flood', ms: performance.now() - start, statuses });
    })();
  });
  send({ cmd: 'ready' });
}

async function main(): Promise<void> {
  if (!(await postgresAvailable())) {
    console.log('PostgreSQL is not reachable (scripts/lib/postgres.sh start_test_postgres): nothing measured');
    return;
  }
  const b = await buildTestApp({ postgres: true });
  const child = fork(
    fileURLToPath(import.meta.url),
    ['gateway-a', b.database?.url ?? '', b.dataDir, String(REQUESTS)],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const next = (cmd: Reply['cmd']) =>
    new Promise<Reply>((resolve, reject) => {
      const onMessage = (reply: Reply) => {
        if (reply.cmd !== cmd) return;
        child.off('message', onMessage);
        resolve(reply);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`gateway A exited (${String(code)})`)));
    });
  try {
    await next('ready');
    const token = await b.login();
    const headers = { authorization: `Bearer ${token}` };
    const domain = await b.app.inject({
      method: 'POST',
      url: '/api/domains',
      headers,
      payload: { domain: 'b.example' },
    });
    const { id } = domain.json<{ id: number }>();
    let flip = 0;
    /** One operator change on B: a domain renamed back and forth (a write, its audit row, an apply). */
    const change = async (): Promise<number> => {
      const start = performance.now();
      const name = flip++ % 2 ? 'b.example' : 'b2.example';
      const answer = await b.app.inject({
        method: 'PATCH',
        url: `/api/domains/${id}`,
        headers,
        payload: { domain: name },
      });
      if (answer.statusCode !== 200) throw new Error(`change on B: ${answer.statusCode} ${answer.body}`);
      return performance.now() - start;
    };
    const baseline = async () => {
      const times: number[] = [];
      for (let i = 0; i < BASELINE_CHANGES; i++) times.push(await change());
      return times;
    };
    const auditRows = async () =>
      (await b.app.inject({ url: '/api/audit?limit=1', headers })).json<{ total: number }>().total;

    for (let i = 0; i < 10; i++) await change(); // warm-up
    const before = await baseline();
    const rowsBefore = await auditRows();
    const flood = next('flood');
    child.send({ cmd: 'flood' } satisfies Command);
    const during: number[] = [];
    const state = { isFlooding: true };
    void flood.then(() => (state.isFlooding = false));
    while (state.isFlooding) during.push(await change());
    const floodReply = (await flood) as Extract<Reply, { cmd: 'flood' }>;
    const rowsOfFlood = (await auditRows()) - rowsBefore - during.length;
    const after = await baseline();

    const base = median([...before, ...after]);
    console.log(
      `load average ${(loadavg()[0] ?? 0).toFixed(2)} on ${cpus().length} CPUs; flood: ${REQUESTS} refused sign-ins from one ` +
        `address, ${RATE > 0 ? `${RATE}/s offered` : 'unpaced'}, ≤ ${CONCURRENCY} at once, in ${formatMs(floodReply.ms)} (${Math.round((REQUESTS / floodReply.ms) * 1000)}/s), ` +
        `answers ${JSON.stringify(floodReply.statuses)}`,
    );
    printTable(
      ['phase', 'changes on B', 'p50', 'p95', 'p50 / baseline'],
      [
        ['baseline (before)', String(before.length), formatMs(median(before)), formatMs(percentile(before, 95)), '-'],
        [
          'during the flood on A',
          String(during.length),
          formatMs(median(during)),
          formatMs(percentile(during, 95)),
          `${(median(during) / base).toFixed(2)}x`,
        ],
        ['baseline (after)', String(after.length), formatMs(median(after)), formatMs(percentile(after, 95)), '-'],
      ],
    );
    console.log(`audit rows the flood wrote: ${rowsOfFlood}`);
  } finally {
    child.send({ cmd: 'exit' } satisfies Command);
    await new Promise((resolve) => child.once('exit', resolve));
    await b.cleanup();
  }
}

if (isChild) await gatewayA(process.argv[3] ?? '', process.argv[4] ?? '');
else await main();
