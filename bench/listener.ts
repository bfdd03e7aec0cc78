// The public listener against one abusive client (the dataplane README, "The public listeners"): an untouched HTTPS
// service is requested 40 times a second, each request on a new connection, alone (the baseline) and while one other
// address keeps 10,000 connections to 443 stalled after the first 6 bytes of their TLS handshake (opening again at
// once whatever the gateway closes), in BENCH_ROUNDS (3) turns of BENCH_BASELINE_SECONDS (8) alone and
// BENCH_FLOOD_SECONDS (15) flooded, pooled. Printed per gateway configuration: the share of requests answered,
// p50/p99 and p99 against the same configuration's baseline (targets: >= 95 %, <= 3x), how many connections the
// attacker held, and the nginx workers' memory. Configurations, each a gateway of its own booted in turn:
//   before     what the gateway had: no per-address limit, nginx's 60 s handshake timeout, 4,096 connections a worker
//   defaults   the settings' defaults
//   extra      the defaults plus BENCH_EXTRA_ENV (K=V,K=V), when set: to measure another choice
// Needs root and a built server: see bench/README.md.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as measureFor } from 'node:timers/promises';
import { readChildPids } from '../apps/server/src/dataplane/nginx/process-info.js';
import { poolWindows, startHandshakeFlood, startRequests, type RequestWindow } from '../e2e/harness/flood.js';
import { Lab } from '../e2e/harness/lab.js';
import { canRun } from '../apps/server/src/test/requirements.js';
import { waitFor } from '../apps/server/src/test/wait-for.js';
import { connectNode, startSystem, stopSystem, type System } from '../e2e/system/fixture.js';
import { printTable } from './lib/stats.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BASELINE_MS = Number(process.env.BENCH_BASELINE_SECONDS ?? 8) * 1000;
const FLOOD_MS = Number(process.env.BENCH_FLOOD_SECONDS ?? 15) * 1000;
const INTERVAL_MS = 25;
const HTTP_PORT = 8080;

interface Outcome {
  name: string;
  baseline: RequestWindow;
  during: RequestWindow;
  held: number;
  rssIdleMb: number;
  rssFloodMb: number;
}

async function workersRssMb(system: System): Promise<number> {
  const master = Number((await readFile(join(system.gateway.dataDir, 'nginx', 'nginx.pid'), 'utf8')).trim());
  let kb = 0;
  for (const pid of (await readChildPids(master)) ?? []) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    kb += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return kb / 1024;
}

async function measure(name: string, env: Record<string, string>): Promise<Outcome> {
  const lab = new Lab();
  let system: System | undefined;
  try {
    system = await startSystem(lab, env);
    const node = await connectNode(system, 'node1', 11);
    await node.serve('http', HTTP_PORT);
    await system.api.createHttpService(node.node.id, {
      name: 'bystander',
      domain: 'calm.bench.test',
      backendHost: node.tunnelIp,
      backendPort: HTTP_PORT,
    });
    const [bystanderIp] = system.topology.clientIps;
    const attacker = await system.topology.addHost('flood', 40);
    const target = { ip: system.topology.gatewayPublicIp, port: 443, host: 'calm.bench.test', path: '/' };
    const load = await startRequests(lab, system.topology.clientNs, target, INTERVAL_MS, bystanderIp);
    await waitFor(async () => (await load.report()).ok > 0, { timeoutMs: 15_000, what: 'the service to answer' });
    // Alone and flooded in turns, pooled: the machine's other work comes and goes.
    const alone: RequestWindow[] = [];
    const flooded: RequestWindow[] = [];
    let held = 0;
    let rssIdleMb = 0;
    let rssFloodMb = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await load.report(); // what the end of the last flood still touched
      await measureFor(BASELINE_MS);
      alone.push(await load.report());
      if (round === 0) rssIdleMb = await workersRssMb(system);
      const flood = await startHandshakeFlood(lab, attacker.ns, target, CONNECTIONS, undefined);
      await load.report(); // the attacker's ramp: its sockets are made on this machine's CPUs
      await measureFor(FLOOD_MS);
      flooded.push(await load.report());
      rssFloodMb = Math.max(rssFloodMb, await workersRssMb(system));
      held = Math.max(held, flood.maxHeld());
      await flood.stop();
    }
    await load.stop();
    const baseline = poolWindows(alone);
    const during = poolWindows(flooded);
    return { name, baseline, during, held, rssIdleMb, rssFloodMb };
  } finally {
    if (system) await stopSystem(system);
    else await lab.destroy();
  }
}

function parseEnv(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split(',')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

async function main(): Promise<void> {
  if (!canRun('netns', 'server-build')) {
    console.error('bench/listener needs root, wireguard-go and a built server (pnpm --filter @postern/server build)');
    process.exit(2);
  }
  const configurations: [string, Record<string, string>][] = [
    [
      'before',
      {
        POSTERN_MAX_CONNECTIONS_PER_ADDRESS: '0',
        POSTERN_HANDSHAKE_TIMEOUT: '60',
        POSTERN_WORKER_CONNECTIONS: '4096',
      },
    ],
    ['defaults', {}],
  ];
  if (process.env.BENCH_EXTRA_ENV) configurations.push(['extra', parseEnv(process.env.BENCH_EXTRA_ENV)]);
  const only = process.env.BENCH_ONLY?.split(',');
  const outcomes: Outcome[] = [];
  for (const [name, env] of configurations) {
    if (only && !only.includes(name)) continue;
    console.log(`measuring ${name} ...`);
    outcomes.push(await measure(name, env));
  }
  const share = (w: RequestWindow): string => `${((100 * w.ok) / Math.max(1, w.ok + w.fail)).toFixed(1)} %`;
  console.log(
    `\nAn untouched HTTPS service, a new connection per request every ${INTERVAL_MS} ms, alone (${ROUNDS} x ${BASELINE_MS / 1000} s) ` +
      `and while one address holds ${CONNECTIONS} half-open TLS handshakes on 443 (${ROUNDS} x ${FLOOD_MS / 1000} s, after its ramp)`,
  );
  printTable(
    [
      'gateway',
      'answered alone',
      'answered in flood',
      'p50 alone / flood',
      'p99 alone / flood',
      'p99 ratio',
      'attacker held',
      'workers RSS before / in flood',
      'per held connection',
    ],
    outcomes.map((o) => [
      o.name,
      `${share(o.baseline)} of ${o.baseline.ok + o.baseline.fail}`,
      `${share(o.during)} of ${o.during.ok + o.during.fail}${Object.keys(o.during.errors).length > 0 ? ` (${JSON.stringify(o.during.errors)})` : ''}`,
      `${o.baseline.p50} / ${o.during.p50} ms`,
      `${o.baseline.p99} / ${o.during.p99} ms`,
      `${(o.during.p99 / o.baseline.p99).toFixed(2)}x`,
      String(o.held),
      `${o.rssIdleMb.toFixed(0)} / ${o.rssFloodMb.toFixed(0)} MB`,
      `${((1024 * (o.rssFloodMb - o.rssIdleMb)) / Math.max(1, o.held)).toFixed(0)} KiB`,
    ]),
  );
  console.log(`load average at the end: ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`);
}

await main();
