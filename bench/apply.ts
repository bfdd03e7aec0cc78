// Apply latency at scale: for N HTTPS services (one per domain; default 100, 1,000 and 10,000, up to 100,000), the
// time from the API call that adds one more service on a new domain to its first successful proxied request: the
// first change after boot, then BENCH_CHANGES more (p50/p99), the API's own answer time, boot time, the control
// plane's and nginx's memory, and the slope of the served time over N (ms per 10,000 services: the goal is near 0).
// Baseline measured in the same run: a bare `nginx -t` of the HTTP instance's config. Targets (p50): served within
// 50 ms at 10,000 and 100 ms at 100,000, p99 within 2x p50, boot with 100,000 within 20 s. Needs root and a built
// server: see bench/README.md.
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Lab } from '../e2e/harness/lab.js';
import { canRun } from '../apps/server/src/test/requirements.js';
import { waitFor } from '../apps/server/src/test/wait-for.js';
import { joinNode, startSystem } from '../e2e/system/fixture.js';
import { findNginxPrefix, timeNginxTest } from './lib/nginx-config.js';
import { keptAliveProbe, probeHttps } from './lib/https-probe.js';
import { tcpExchange } from '../e2e/harness/clients.js';
import { startBackend } from '../e2e/harness/backends.js';
import { benchDomain, installCertificates, makeCertificates, seedHttpServices } from './lib/seed-services.js';
import { formatMs, median, percentile, printTable } from './lib/stats.js';
import { createBurst, inParallel, watchRuns } from '../e2e/harness/burst.js';

const SIZES = (process.argv[2] ?? '100,1000,10000').split(',').map(Number);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 20);
/**
 * BENCH_EARLY_CHANGE=1: one more change, issued as soon as the restarted gateway's API answers (while the boot's full
 * run still reads and plans everything): it goes beside that run (apps/server/src/dataplane/README.md, "Beside a full
 * run"). Its served time is printed apart; the boot time then includes the work it adds.
 */
const EARLY_CHANGE = process.env.BENCH_EARLY_CHANGE === '1';
/**
 * BENCH_TCP=1: at each size, after the HTTPS changes, CHANGES new TCP services (API call -> first echo through the new
 * port) and CHANGES changes to a node (a second node disabled and enabled by turns: API answer, the apply included).
 */
const TCP_AND_NODES = process.env.BENCH_TCP === '1';
const TCP_BACKEND_PORT = 9000;
/**
 * BENCH_ACCOUNT=1: the gateway logs at debug level, and each size prints the account of its slowest 3 changes: where
 * the time from the API call to the first proxied answer went (see accountOf).
 */
const ACCOUNT = process.env.BENCH_ACCOUNT === '1';
/**
 * BENCH_BURST=<n>: at each size, after the changes, n more HTTPS services (each on a new domain) created by
 * BENCH_BURST_CLIENTS (32) callers at once, as fast as the API takes them (e2e/harness/burst.ts, as
 * e2e/system/burst.test.ts): the sustained rate, the time until every one is served, the data-plane runs (pushes) they
 * took, and the control plane's CPU per change.
 */
const BURST = Number(process.env.BENCH_BURST ?? 0);
const BURST_CLIENTS = Number(process.env.BENCH_BURST_CLIENTS ?? 32);
/**
 * BENCH_BURST_ON: `new` (each service on a new domain: a certificate made per change), `seeded` (each on a seeded
 * domain, at a path of its own, to a second backend: no certificate made; needs BENCH_BURST <= the size), or both
 * (`new,seeded`, in that order).
 */
const BURST_ON = (process.env.BENCH_BURST_ON ?? 'new').split(',') as ('new' | 'seeded')[];
const BURST_BACKEND_PORT = 8081;
/**
 * BENCH_BURST_PROBE: how "served" is checked. `kept-alive` (default): over kept-alive connections opened with a seeded
 * domain's SNI, each request naming its service's domain in Host (nginx routes by Host; bench/lib/https-probe.ts), so
 * the check costs a request, not a TLS handshake; a new domain's certificate is pushed in the same run as its route,
 * before it (dataplane/README.md "Scoped applies", step 3), and e2e/system/burst.test.ts checks each one by its own
 * SNI. `handshake`: a TLS connection per probe with the domain's own SNI (what the figures before 2026-11-28 used:
 * the handshakes, not the gateway, set the pace of "all served").
 */
const BURST_PROBE = process.env.BENCH_BURST_PROBE ?? 'kept-alive';
if (ACCOUNT || BURST > 0) process.env.POSTERN_E2E_GATEWAY_LOG ??= 'debug';
const ACCOUNTED = 3;
const BASELINE_REPEATS = 3;
const BACKEND_PORT = 8080;
/** p50 targets by size (bench/README.md); sizes between take the larger one's. */
const TARGETS: readonly [number, number][] = [
  [10_000, 50],
  [100_000, 100],
];
const BOOT_TARGET_MS = 20_000;

interface SizeResult {
  size: number;
  bootMs: number;
  nginxTestMs: number;
  /** The first change after boot. */
  firstMs: number;
  /** BENCH_EARLY_CHANGE: the change issued while the boot's full run was in flight, and whether it ran then. */
  early: { servedMs: number; beforeBootEnded: boolean } | null;
  /** The CHANGES changes after it. */
  servedMs: number[];
  /** BENCH_ACCOUNT: the slowest changes' accounts, slowest first. */
  accounts: string[];
  apiMs: number[];
  controlPlaneRssMb: number;
  nginxPssMb: number;
  nginxProcesses: number;
  /** API calls that got no answer within the harness's deadline. */
  apiFailures: string[];
  /** BENCH_TCP: a new TCP service, API call -> first echo through its port; and its API answer. */
  tcpServedMs: number[];
  tcpApiMs: number[];
  /** BENCH_TCP: a node disabled or enabled, API answer (the apply included). */
  nodeApiMs: number[];
  bursts: BurstFigures[];
}

/** BENCH_BURST: the burst's figures. */
interface BurstFigures {
  on: 'new' | 'seeded';
  changes: number;
  apiMs: number;
  servedMs: number;
  /** Checking all of them once more when all are served: what the check itself takes. */
  probePassMs: number;
  runs: number;
  /** The scoped runs' wall time: summed, and p50 / max of one run (their debug lines' `ms`). */
  runMs: { sum: number; p50: number; max: number; routesP50: number; certificatesP50: number };
  /** The gateway's CPU (supervisor and control plane, not nginx) from the first call to the last served, per change. */
  cpuUsPerChange: number;
  nginxCpuUsPerChange: number;
  failures: number;
  unserved: number;
  load: string;
}

/** BENCH_BURST: BURST services, BURST_CLIENTS at once (see BURST and BURST_ON). */
async function measureBurst(
  system: Awaited<ReturnType<typeof startSystem>>,
  api: Awaited<ReturnType<Awaited<ReturnType<typeof startSystem>>['gateway']['login']>>,
  node: Awaited<ReturnType<typeof joinNode>>,
  on: 'new' | 'seeded',
  isServed: (domain: string) => Promise<boolean>,
): Promise<BurstFigures> {
  const pid = system.gateway.process.pid;
  const nginxPid = Number(
    (await readFile(join(await findNginxPrefix(system.gateway.dataDir), 'nginx.pid'), 'utf8')).trim(),
  );
  const runsOf = watchRuns(system.gateway.process);
  const cpuBefore = await treeCpuSeconds(pid);
  const nginxBefore = await treeCpuSeconds(nginxPid);
  const burst = await createBurst(api, {
    count: BURST,
    clients: BURST_CLIENTS,
    nodeId: node.node.id,
    bodyOf: (i) =>
      on === 'new'
        ? { name: `burst-${i}`, domain: `burst${i}.bench.test`, backendHost: node.tunnelIp, backendPort: BACKEND_PORT }
        : {
            name: `burst-${i}`,
            domain: benchDomain(i),
            pathLocation: '/burst',
            backendHost: node.tunnelIp,
            backendPort: BURST_BACKEND_PORT,
          },
    isServed,
    deadlineMs: 600_000,
  });
  const cpu = (await treeCpuSeconds(pid)) - cpuBefore;
  const nginxCpu = (await treeCpuSeconds(nginxPid)) - nginxBefore;
  const runs = runsOf();
  const probeStart = performance.now();
  await inParallel(burst.domains.length, BURST_CLIENTS, async (i) => {
    await isServed(burst.domains[i] as string);
  });
  const probePassMs = performance.now() - probeStart;
  for (const failure of burst.failures.slice(0, 5)) console.log(`  burst: ${failure}`);
  if (burst.unserved.length > 0) console.log(`  burst: not served: ${burst.unserved.slice(0, 5).join(', ')}...`);
  return {
    on,
    changes: BURST,
    apiMs: burst.apiMs,
    servedMs: burst.servedMs,
    probePassMs,
    runs: runs.scoped + runs.full,
    runMs: {
      sum: runs.scopedFigures.reduce((sum, figures) => sum + (figures.ms ?? 0), 0),
      p50: median(runs.scopedFigures.map((figures) => figures.ms ?? 0)),
      max: Math.max(0, ...runs.scopedFigures.map((figures) => figures.ms ?? 0)),
      routesP50: median(runs.scopedFigures.map((figures) => figures.routesMs ?? 0)),
      certificatesP50: median(runs.scopedFigures.map((figures) => figures.certificatesMs ?? 0)),
    },
    cpuUsPerChange: (cpu * 1e6) / BURST,
    nginxCpuUsPerChange: (nginxCpu * 1e6) / BURST,
    failures: burst.failures.length,
    unserved: burst.unserved.length,
    load: (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' '),
  };
}

/** BENCH_TCP: new TCP services and node changes on the seeded gateway (see TCP_AND_NODES). */
async function measureTcpAndNodes(
  system: Awaited<ReturnType<typeof startSystem>>,
  api: Awaited<ReturnType<Awaited<ReturnType<typeof startSystem>>['gateway']['login']>>,
  node: Awaited<ReturnType<typeof joinNode>>,
): Promise<Pick<SizeResult, 'tcpServedMs' | 'tcpApiMs' | 'nodeApiMs'>> {
  await node.serve('tcp', TCP_BACKEND_PORT);
  const gatewayIp = system.topology.gatewayPublicIp;
  const client = system.topology.clientNs;
  const tcpServedMs: number[] = [];
  const tcpApiMs: number[] = [];
  for (let r = 0; r < CHANGES; r++) {
    const start = performance.now();
    const service = await api.createTcpService(node.node.id, {
      name: `tcp-${r}`,
      proto: 'tcp',
      backendHost: node.tunnelIp,
      backendPort: TCP_BACKEND_PORT,
    });
    tcpApiMs.push(performance.now() - start);
    await waitFor(
      async () => (await tcpExchange(client, gatewayIp, service.port, 'hi', { timeoutMs: 2000 })).reply === 'node1:hi',
      { timeoutMs: 60_000, intervalMs: 5, what: `TCP port ${service.port} to reach node1` },
    );
    tcpServedMs.push(performance.now() - start);
  }
  const idle = await api.createNode({ name: 'bench-idle' });
  const nodeApiMs: number[] = [];
  for (let r = 0; r < CHANGES; r++) {
    const start = performance.now();
    await (r % 2 === 0 ? api.disableNode(idle.id) : api.enableNode(idle.id));
    nodeApiMs.push(performance.now() - start);
  }
  return { tcpServedMs, tcpApiMs, nodeApiMs };
}

/** With POSTERN_E2E_GATEWAY_LOG=debug: how each apply went (load/nginx/WireGuard ms), boot, dictionaries grown. */
function printDataPlaneLines(output: string): void {
  const wanted = /"msg":"(data plane (converged|started|rebuilt)[^"]*|nginx: (started|adopted|grew)[^"]*)"/;
  console.log(
    output
      .split('\n')
      .filter((line) => wanted.test(line))
      .join('\n'),
  );
}

/** One change as the bench saw it: when its API call went (epoch ms), its answer and its first proxied 200. */
interface ChangeTimes {
  domain: string;
  startedAt: number;
  apiMs: number;
  servedMs: number;
}

interface LogLine {
  time: number;
  msg: string;
  [field: string]: unknown;
}

/** The gateway's JSON log lines (pino: `time` in epoch ms). */
function logLines(output: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const text of output.split('\n')) {
    if (!text.startsWith('{')) continue;
    try {
      const line = JSON.parse(text) as Partial<LogLine>;
      if (typeof line.time === 'number' && typeof line.msg === 'string') lines.push(line as LogLine);
    } catch {
      // not a log line
    }
  }
  return lines;
}

/** A log line's figures in ms (`ms`, `readMs`, `writeMs`...). */
const timings = (line: LogLine): string =>
  Object.entries(line)
    .filter(([key, value]) => /^(ms|[a-z]+Ms)$/.test(key) && typeof value === 'number')
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');

const num = (value: unknown): number => (typeof value === 'number' ? value : Number.NaN);

/**
 * Where one change's time went, from the bench's clock and the gateway's debug log (same host, same clock):
 * `request` until the gateway saw the call (logged when its event loop gets to it: a long turn of the gateway's shows
 * here, not the bench's client), `before run` from there to the start of its scoped run (the handler, the
 * write, the audit, the queue: a full run, drift check or burst ahead of it), the run's own steps (read, plan,
 * certificates, routes, the rest: cut-off, ledger, streams), `answer` from the run's end to the API's answer, and
 * `pick-up` from the answer to the first proxied 200 (nginx's workers and the bench's 5 ms poll; negative when nginx
 * served the route before the run's cut-off and the answer were done). Other gateway lines inside the change's window
 * (a drift check, a full run, a certificate made) are named after it.
 */
function accountOf(change: ChangeTimes, lines: readonly LogLine[]): string {
  // Until the later of the first 200 and the API's answer: the run's line comes after the push nginx served from.
  const end = change.startedAt + Math.max(change.servedMs, change.apiMs);
  const answeredAt = change.startedAt + change.apiMs;
  const inWindow = lines.filter((line) => line.time >= change.startedAt - 1 && line.time <= end + 1);
  const urlOf = (line: LogLine): string => {
    const url = (line.req as { url?: unknown } | undefined)?.url;
    return typeof url === 'string' ? url : '';
  };
  // The request's one log line is written with its answer; the gateway saw the call `responseTime` ms before it.
  const answered = inWindow.find((line) => line.msg === 'request completed' && /\/http$/.test(urlOf(line)));
  const request = answered && { time: answered.time - num(answered.responseTime) };
  const run = inWindow.find((line) => line.msg === 'data plane converged (scoped)' && line.time <= answeredAt + 1);
  const parts = [`served ${formatMs(change.servedMs)}: API ${formatMs(change.apiMs)}`];
  if (request) parts.push(`request ${formatMs(request.time - change.startedAt)}`);
  if (run) {
    const ms = num(run.ms);
    const startedAt = run.time - ms;
    const read = num(run.readMs);
    const plan = num(run.loadMs) - read;
    const certificates = num(run.certificatesMs);
    const routes = num(run.routesMs);
    parts.push(
      `before run ${formatMs(startedAt - (request?.time ?? change.startedAt))}`,
      `run ${formatMs(ms)} (read ${read}, plan ${plan}, certificates ${certificates}, routes ${routes}, rest ${ms - read - plan - certificates - routes})`,
      `answer ${formatMs(answeredAt - run.time)}`,
    );
  } else parts.push('no scoped run logged in the API call (a full run served it?)');
  parts.push(`pick-up ${formatMs(change.servedMs - change.apiMs)}`);
  const others = inWindow
    .filter((line) => line !== run && line.msg !== 'request completed')
    .map((line) => `${line.msg.slice(0, 60)} (${timings(line)}) @+${line.time - change.startedAt}`);
  return `${change.domain}: ${parts.join(', ')}${others.length > 0 ? `\n      beside it: ${others.join('; ')}` : ''}`;
}

/** CPU seconds (user + system) a process and its children have spent so far (0 when it is gone). */
async function treeCpuSeconds(root: number): Promise<number> {
  let ticks = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pid) === root || Number(fields[1]) === root) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100;
}

/** A field of /proc/<pid>/status or smaps_rollup in kB (0 when the process is gone). */
async function procKb(file: string, field: string): Promise<number> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
}

/**
 * nginx's HTTP instance: its master and workers' proportional set size summed (shared dictionaries counted once, not
 * once per worker as a sum of RSS would).
 */
async function nginxMemory(prefix: string): Promise<{ pssMb: number; processes: number }> {
  const master = Number((await readFile(join(prefix, 'nginx.pid'), 'utf8').catch(() => '')).trim());
  if (!master) return { pssMb: 0, processes: 0 };
  const pids = [master];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === master) pids.push(Number(pid));
  }
  let kb = 0;
  for (const pid of pids) kb += await procKb(`/proc/${pid}/smaps_rollup`, 'Pss');
  return { pssMb: kb / 1024, processes: pids.length };
}

async function measureSize(size: number, certCache: string): Promise<SizeResult> {
  const lab = new Lab();
  try {
    const system = await startSystem(lab);
    const gatewayIp = system.topology.gatewayMgmtIp;
    const created = await system.api.createNode({ name: 'bench-node' });
    if (created.address === null) throw new Error('the node got no tunnel address');
    const isServedByNode = async (domain: string): Promise<boolean> => {
      const answer = await probeHttps(gatewayIp, domain, '/');
      return answer.status === 200 && answer.body.includes('"node1"');
    };

    await system.gateway.stop();
    const seedStart = performance.now();
    await seedHttpServices(system.gateway.dataDir, created.id, created.address, BACKEND_PORT, size, certCache);
    await installCertificates(certCache, system.gateway.dataDir, size);
    console.log(`  ${size}: seeded in ${formatMs(performance.now() - seedStart)}`);
    const bootStart = performance.now();
    await system.gateway.restart();
    // The node joins after the restart: a tunnel from before it would wait for WireGuard's rekey timers.
    const node = await joinNode(system, created, 'node1', 11);
    await node.serve('http', BACKEND_PORT);
    const api = await system.gateway.login();
    const apiFailures: string[] = [];
    const changes: ChangeTimes[] = [];
    const change = async (r: number, timeoutMs = 120_000): Promise<{ served: number; api: number; at: number }> => {
      const domain = r < 0 ? 'early.bench.test' : `new${r}.bench.test`;
      const startedAt = Date.now();
      const start = performance.now();
      const call = api
        .createHttpService(node.node.id, {
          name: `new-${r}`,
          domain,
          backendHost: node.tunnelIp,
          backendPort: BACKEND_PORT,
        })
        .then(
          () => performance.now() - start,
          // The harness gives up on an answer after 30 s: noted, and the service is still waited for.
          (err: unknown) => {
            apiFailures.push(`${domain}: ${err instanceof Error ? err.message : String(err)}`);
            return Number.NaN;
          },
        );
      await waitFor(() => isServedByNode(domain), {
        timeoutMs,
        intervalMs: 5,
        what: `${domain} to be served`,
      });
      const served = performance.now() - start;
      const answered = await call;
      if (r > 0) changes.push({ domain, startedAt, apiMs: answered, servedMs: served });
      return { served, api: answered, at: performance.now() };
    };
    const booted = { at: Number.NaN };
    const early = EARLY_CHANGE
      ? change(-1, 60_000 + size * 20).catch((err: unknown) => {
          apiFailures.push(`the change during the boot: ${err instanceof Error ? err.message : String(err)}`);
          return null;
        })
      : null;
    // Boot rebuilds everything from the DB; allow it time in proportion to the size.
    await waitFor(() => isServedByNode(benchDomain(size - 1)), {
      timeoutMs: 60_000 + size * 20,
      intervalMs: 50,
      what: `the last of ${size} seeded services to be served`,
    });
    const bootMs = performance.now() - bootStart;
    booted.at = performance.now();
    // The restarted control plane's CPU so far is its boot's (on a loaded machine wall time says little).
    const bootCpu = await treeCpuSeconds(system.gateway.process.pid);
    const nginxCpu = await treeCpuSeconds(
      Number((await readFile(join(await findNginxPrefix(system.gateway.dataDir), 'nginx.pid'), 'utf8')).trim()),
    );
    console.log(
      `  ${size}: booted in ${formatMs(bootMs)}; control plane CPU ${bootCpu.toFixed(1)} s, nginx (master and workers now running) ${nginxCpu.toFixed(1)} s; load average ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`,
    );
    const earlyResult = early === null ? null : await early;
    const first = await change(0);
    const servedMs: number[] = [];
    const apiMs: number[] = [first.api];
    for (let r = 1; r <= CHANGES; r++) {
      const next = await change(r);
      servedMs.push(next.served);
      apiMs.push(next.api);
    }

    const tcpAndNodes = TCP_AND_NODES
      ? await measureTcpAndNodes(system, api, node)
      : { tcpServedMs: [], tcpApiMs: [], nodeApiMs: [] };
    const bursts: BurstFigures[] = [];
    if (BURST > 0) {
      // The seeded burst's services answer from a backend of their own: the seeded service at `/` answers `/burst` too.
      await startBackend(system.lab, node.ns, 'http', node.tunnelIp, BURST_BACKEND_PORT, 'burst');
      const kept = keptAliveProbe(gatewayIp, benchDomain(0), BURST_CLIENTS);
      const probe = (domain: string, path: string) =>
        BURST_PROBE === 'handshake' ? probeHttps(gatewayIp, domain, path) : kept.probe(domain, path);
      const isServedByBurst = async (domain: string): Promise<boolean> => {
        const answer = await probe(domain, '/burst/x');
        return answer.status === 200 && answer.body.includes('"burst"');
      };
      const isServedNew = async (domain: string): Promise<boolean> => {
        const answer = await probe(domain, '/');
        return answer.status === 200 && answer.body.includes('"node1"');
      };
      try {
        for (const on of BURST_ON)
          if (on === 'seeded' && BURST > size)
            console.log(`  ${size}: no seeded burst of ${BURST} (more than the size)`);
          else bursts.push(await measureBurst(system, api, node, on, on === 'new' ? isServedNew : isServedByBurst));
      } finally {
        kept.close();
      }
    }
    if (process.env.POSTERN_E2E_GATEWAY_LOG && !ACCOUNT && BURST === 0)
      printDataPlaneLines(system.gateway.process.text);
    const lines = ACCOUNT ? logLines(system.gateway.process.text) : [];
    const accounts = [...changes]
      .sort((a, b) => b.servedMs - a.servedMs)
      .slice(0, ACCOUNT ? ACCOUNTED : 0)
      .map((slow) => accountOf(slow, lines));
    const prefix = await findNginxPrefix(system.gateway.dataDir);
    const nginx = await nginxMemory(prefix);
    const controlPlaneRssMb = (await procKb(`/proc/${system.gateway.process.pid}/status`, 'VmRSS')) / 1024;
    const nginxTests: number[] = [];
    for (let r = 0; r < BASELINE_REPEATS; r++) nginxTests.push(await timeNginxTest(system.topology.gatewayNs, prefix));
    return {
      size,
      bootMs,
      nginxTestMs: median(nginxTests),
      firstMs: first.served,
      early:
        earlyResult === null ? null : { servedMs: earlyResult.served, beforeBootEnded: !(earlyResult.at >= booted.at) },
      servedMs,
      accounts,
      apiMs,
      controlPlaneRssMb,
      nginxPssMb: nginx.pssMb,
      nginxProcesses: nginx.processes,
      apiFailures,
      ...tcpAndNodes,
      bursts,
    };
  } finally {
    await lab.destroy();
  }
}

/** Least-squares slope of the served p50 over the number of services, in ms per 10,000 services. */
function slopePer10k(results: readonly SizeResult[]): number {
  if (results.length < 2) return Number.NaN;
  const xs = results.map((r) => r.size / 10_000);
  const ys = results.map((r) => median(r.servedMs));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * ((ys[i] ?? 0) - my);
    den += (x - mx) ** 2;
  });
  return num / den;
}

function verdict(size: number, p50: number, p99: number): string {
  const target = TARGETS.find(([upTo]) => size <= upTo)?.[1] ?? TARGETS.at(-1)?.[1] ?? 0;
  if (size < 10_000) return `(${target} ms) ${p50 <= target && p99 <= 2 * p50 ? 'met' : 'not met'}`;
  return `${target} ms: ${p50 <= target ? 'met' : 'NOT met'}; p99 <= 2x: ${p99 <= 2 * p50 ? 'met' : 'NOT met'}`;
}

async function main(): Promise<void> {
  if (!canRun('netns', 'server-build')) {
    console.error('bench/apply needs root, wireguard-go and a built server (pnpm --filter @postern/server build)');
    process.exit(2);
  }
  // BENCH_CERT_CACHE=<dir> keeps the certificates between runs.
  const keepCache = process.env.BENCH_CERT_CACHE;
  const certCache = keepCache ?? (await mkdtemp(join(tmpdir(), 'postern-bench-certs-')));
  if (keepCache) await mkdir(keepCache, { recursive: true });
  try {
    const certStart = performance.now();
    await makeCertificates(certCache, Math.max(...SIZES));
    console.log(`setup: ${Math.max(...SIZES)} self-signed certificates in ${formatMs(performance.now() - certStart)}`);
    const results: SizeResult[] = [];
    for (const size of SIZES) {
      const result = await measureSize(size, certCache);
      console.log(
        `${size} services: boot ${formatMs(result.bootMs)}, first change ${formatMs(result.firstMs)}, then ${result.servedMs.map(formatMs).join(' / ')}`,
      );
      for (const failure of result.apiFailures) console.log(`  API call without an answer: ${failure}`);
      if (result.accounts.length > 0) {
        console.log(
          `  the slowest ${result.accounts.length} changes (load average ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}):`,
        );
        for (const account of result.accounts) console.log(`    ${account}`);
      }
      if (result.early)
        console.log(
          `  change issued during the boot's run: served in ${formatMs(result.early.servedMs)} (${result.early.beforeBootEnded ? 'before' : 'after'} the last seeded service was)`,
        );
      results.push(result);
    }
    console.log(
      `\nOne more HTTPS service (new domain): API call -> first proxied 200; the first change after boot, then ${CHANGES}`,
    );
    printTable(
      [
        'services',
        'served p50',
        'p99',
        'first after boot',
        'API p50',
        'bare nginx -t',
        'target (p50; p99 <= 2x p50)',
        'boot with all',
        'control plane RSS',
        'nginx PSS (procs)',
      ],
      results.map((r) => {
        const p50 = median(r.servedMs);
        const p99 = percentile(r.servedMs, 99);
        const boot = r.size >= 100_000 ? ` (${r.bootMs <= BOOT_TARGET_MS ? 'met' : 'NOT met'} 20 s)` : '';
        return [
          String(r.size),
          formatMs(p50),
          formatMs(p99),
          formatMs(r.firstMs),
          `${formatMs(median(r.apiMs.filter((ms) => !Number.isNaN(ms))))}${r.apiFailures.length > 0 ? ` (${r.apiFailures.length} timed out)` : ''}`,
          formatMs(r.nginxTestMs),
          verdict(r.size, p50, p99),
          `${formatMs(r.bootMs)}${boot}`,
          `${Math.round(r.controlPlaneRssMb)} MB`,
          `${Math.round(r.nginxPssMb)} MB (${r.nginxProcesses})`,
        ];
      }),
    );
    console.log(`\nslope of served p50: ${slopePer10k(results).toFixed(1)} ms per 10,000 services (goal: near 0)`);
    if (BURST > 0) {
      console.log(
        `\nBENCH_BURST: ${BURST} HTTPS services, ${BURST_CLIENTS} callers at once (API calls -> all served); on new domains or seeded ones; served checked ${BURST_PROBE === 'handshake' ? 'by a TLS handshake each' : 'over kept-alive connections'}`,
      );
      printTable(
        [
          'services',
          'on',
          'API changes/s',
          'all served in',
          'served changes/s',
          'one check of all',
          'runs (pushes)',
          'changes per run',
          'scoped runs: ms summed, p50 / max (routes, certificates p50)',
          'control plane CPU µs/change',
          'nginx CPU µs/change',
          'failed / unserved',
          'load average',
        ],
        results.flatMap(({ size, bursts }) =>
          bursts.map((b) => [
            String(size),
            b.on,
            ((b.changes * 1000) / b.apiMs).toFixed(0),
            formatMs(b.servedMs),
            ((b.changes * 1000) / b.servedMs).toFixed(0),
            formatMs(b.probePassMs),
            String(b.runs),
            (b.changes / b.runs).toFixed(1),
            `${formatMs(b.runMs.sum)}, ${formatMs(b.runMs.p50)} / ${formatMs(b.runMs.max)} (${formatMs(b.runMs.routesP50)}, ${formatMs(b.runMs.certificatesP50)})`,
            b.cpuUsPerChange.toFixed(0),
            b.nginxCpuUsPerChange.toFixed(0),
            `${b.failures} / ${b.unserved}`,
            b.load,
          ]),
        ),
      );
    }
    if (TCP_AND_NODES) {
      console.log(`\nBENCH_TCP: ${CHANGES} new TCP services (API call -> first echo) and ${CHANGES} node changes`);
      printTable(
        ['services', 'TCP served p50', 'p99', 'TCP API p50', 'node change API p50', 'p99', 'node / TCP API'],
        results.map((r) => {
          const tcpApi = median(r.tcpApiMs);
          const nodeApi = median(r.nodeApiMs);
          return [
            String(r.size),
            formatMs(median(r.tcpServedMs)),
            formatMs(percentile(r.tcpServedMs, 99)),
            formatMs(tcpApi),
            formatMs(nodeApi),
            formatMs(percentile(r.nodeApiMs, 99)),
            `${(nodeApi / tcpApi).toFixed(1)}x`,
          ];
        }),
      );
    }
  } finally {
    if (!keepCache) await rm(certCache, { recursive: true, force: true });
  }
}

await main();
