// The data plane in the field, each figure next to a baseline measured in the same run:
//   collateral  open connections of untouched services cut by N changes to other services (target 0), against the
//               same N changes made the way a reload-per-change gateway makes them: N SIGHUPs to an nginx with
//               worker_shutdown_timeout (what Postern did before, and what most peers do);
//   cut-off     time from the API call disabling a service to its open connection being closed (target <= 2 s),
//               next to how long the API call itself took;
//   restart     failed probes (HTTP and TCP, every 100 ms) per restart of the control plane (target 0): SIGKILL and
//               SIGTERM restarts, which adopt the running nginx and WireGuard, against a restart that replaces them.
// Needs root and a built server: see bench/README.md.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runIn } from '../e2e/harness/exec.js';
import { Lab } from '../e2e/harness/lab.js';
import { holdHttp, holdTcp, startProbes, type HeldConnection } from '../e2e/harness/probes.js';
import { canRun } from '../apps/server/src/test/requirements.js';
import { waitFor } from '../apps/server/src/test/wait-for.js';
import { connectNode, startSystem, type ConnectedNode, type System } from '../e2e/system/fixture.js';
import { formatMs, median, printTable } from './lib/stats.js';

const CHANGES = Number(process.argv[2] ?? 20);
const HELD = 4;
const RESTARTS = 5;
const HTTP_PORT = 8080;
const TCP_PORT = 9000;
/** The baseline nginx's port in the gateway namespace (the gateway's own use 80, 443, 8443 and the TCP range). */
const BASELINE_PORT = 9443;

async function holdMany(system: System, domain: string, tcpPort: number): Promise<HeldConnection[]> {
  const held: HeldConnection[] = [];
  for (let i = 0; i < HELD; i++) {
    held.push(await holdHttp(system.lab, system.topology.clientNs, system.topology.gatewayPublicIp, 443, domain));
    held.push(await holdTcp(system.lab, system.topology.clientNs, system.topology.gatewayPublicIp, tcpPort));
  }
  return held;
}

/** Waits out `ms` while watching the held connections (a duration to observe, not a condition to wait for). */
async function observe(ms: number): Promise<void> {
  const until = Date.now() + ms;
  await waitFor(() => Date.now() >= until, { timeoutMs: ms + 1000, intervalMs: 250, what: 'the observation window' });
}

/** Collateral: N changes to other services on the gateway against N reloads of a reload-per-change nginx. */
async function collateral(
  system: System,
  node: ConnectedNode,
): Promise<{ gateway: number; baseline: number; total: number }> {
  const held = await holdMany(system, 'held.bench.test', 30001);
  for (let i = 0; i < CHANGES; i++) {
    const kind = i % 4;
    if (kind === 0)
      await system.api.createHttpService(node.node.id, {
        name: `c${i}`,
        domain: `c${i}.bench.test`,
        backendHost: node.tunnelIp,
        backendPort: HTTP_PORT,
      });
    else if (kind === 1)
      await system.api.createTcpService(node.node.id, {
        name: `t${i}`,
        port: 30010 + i,
        backendHost: node.tunnelIp,
        backendPort: TCP_PORT,
      });
    else if (kind === 2)
      await system.api.updateService(
        node.node.id,
        'tcp',
        (await system.api.listNodeServices(node.node.id, 'tcp')).at(-1)?.id ?? 0,
        { allowedIps: ['203.0.113.0/24'] },
      );
    else
      await system.api.deleteService(
        node.node.id,
        'http',
        (await system.api.listNodeServices(node.node.id, 'http')).at(-1)?.id ?? 0,
      );
  }
  // worker_shutdown_timeout is 10 s in the baseline: watch at least that long after the last change.
  await observe(12_000);
  const gateway = held.filter((h) => h.isClosed()).length;
  for (const h of held) h.process.kill('SIGKILL');

  // The baseline: a plain nginx in the gateway's namespace proxying to the same node, reloaded once per change.
  const dir = system.lab.makeTempDir('baseline-nginx');
  const conf = join(dir, 'nginx.conf');
  await writeFile(
    conf,
    [
      'daemon off; worker_processes 1; worker_shutdown_timeout 10s;',
      `pid ${dir}/nginx.pid; error_log ${dir}/error.log;`,
      'events { worker_connections 1024; }',
      `http { access_log off; client_body_temp_path ${dir}/t1; proxy_temp_path ${dir}/t2; fastcgi_temp_path ${dir}/t3; uwsgi_temp_path ${dir}/t4; scgi_temp_path ${dir}/t5;`,
      `  server { listen ${BASELINE_PORT} ssl; ssl_certificate ${system.gateway.dataDir}/certs/_fallback.pem; ssl_certificate_key ${system.gateway.dataDir}/certs/_fallback.pem;`,
      `    location / { proxy_pass http://${node.tunnelIp}:${HTTP_PORT}; proxy_buffering off; proxy_read_timeout 1h; } } }`,
    ].join('\n'),
  );
  const nginx = system.lab.spawn(system.topology.gatewayNs, 'baseline nginx', 'nginx', ['-p', `${dir}/`, '-c', conf]);
  await waitFor(
    async () => (await runIn(system.topology.gatewayNs, 'cat', [`${dir}/nginx.pid`]).catch(() => '')).trim() !== '',
    { timeoutMs: 5000, what: 'the baseline nginx' },
  );
  const baselineHeld: HeldConnection[] = [];
  for (let i = 0; i < HELD * 2; i++)
    baselineHeld.push(
      await holdHttp(
        system.lab,
        system.topology.clientNs,
        system.topology.gatewayPublicIp,
        BASELINE_PORT,
        'held.bench.test',
      ),
    );
  for (let i = 0; i < CHANGES; i++) nginx.kill('SIGHUP');
  await observe(12_000);
  const baseline = baselineHeld.filter((h) => h.isClosed()).length;
  for (const h of baselineHeld) h.process.kill('SIGKILL');
  await nginx.stop(2000);
  return { gateway, baseline, total: HELD * 2 };
}

/** Cut-off: disabling a service with an open connection, five times. */
async function cutOff(system: System, node: ConnectedNode): Promise<{ closedMs: number[]; apiMs: number[] }> {
  const closedMs: number[] = [];
  const apiMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const service = await system.api.createHttpService(node.node.id, {
      name: `cut${i}`,
      domain: `cut${i}.bench.test`,
      backendHost: node.tunnelIp,
      backendPort: HTTP_PORT,
    });
    const held = await holdHttp(
      system.lab,
      system.topology.clientNs,
      system.topology.gatewayPublicIp,
      443,
      `cut${i}.bench.test`,
    );
    const start = performance.now();
    await system.api.disableService(node.node.id, 'http', service.id);
    apiMs.push(performance.now() - start);
    await waitFor(() => held.isClosed(), {
      timeoutMs: 30_000,
      intervalMs: 5,
      what: 'the disabled service’s connection to close',
    });
    closedMs.push(performance.now() - start);
  }
  return { closedMs, apiMs };
}

/** Restarts: failed probes per restart, adopting (SIGKILL, SIGTERM) against replacing (SIGINT: stop everything). */
async function restarts(system: System): Promise<{ kind: string; failed: number[] }[]> {
  const specs = [
    `http:${system.topology.gatewayPublicIp}:443:held.bench.test:/probe`,
    `tcp:${system.topology.gatewayPublicIp}:30001`,
  ];
  const results: { kind: string; failed: number[] }[] = [];
  for (const [kind, stop] of [
    ['SIGKILL, then start (adopts)', () => system.gateway.kill()],
    ['SIGTERM, then start (adopts)', () => system.gateway.stop()],
    [
      'SIGINT, then start (replaces; baseline)',
      async () => {
        system.gateway.process.kill('SIGINT');
        await system.gateway.process.exited;
      },
    ],
  ] as const) {
    const failed: number[] = [];
    for (let i = 0; i < RESTARTS; i++) {
      const probes = await startProbes(system.lab, system.topology.clientNs, 100, specs);
      await observe(500);
      await stop();
      await system.gateway.restart();
      system.api = await system.gateway.login();
      // Until every probe answers again (a replacing restart needs the node's tunnel back too).
      await waitFor(
        async () =>
          (await runIn(system.topology.clientNs, 'curl', [
            '-sk',
            '-o',
            '/dev/null',
            '-w',
            '%{http_code}',
            '--resolve',
            `held.bench.test:443:${system.topology.gatewayPublicIp}`,
            'https://held.bench.test/',
          ]).catch(() => '')) === '200',
        { timeoutMs: 60_000, intervalMs: 100, what: 'the service to answer again' },
      );
      await observe(500);
      failed.push((await probes.report()).fail);
      await probes.stop();
    }
    results.push({ kind, failed });
  }
  return results;
}

async function main(): Promise<void> {
  if (!canRun('netns', 'server-build')) {
    console.error('bench/dataplane needs root, wireguard-go and a built server (pnpm --filter @postern/server build)');
    process.exit(2);
  }
  const lab = new Lab();
  try {
    const system = await startSystem(lab);
    const node = await connectNode(system, 'node1', 11);
    await node.serve('http', HTTP_PORT);
    await node.serve('tcp', TCP_PORT);
    await system.api.createHttpService(node.node.id, {
      name: 'held',
      domain: 'held.bench.test',
      backendHost: node.tunnelIp,
      backendPort: HTTP_PORT,
    });
    await system.api.createTcpService(node.node.id, {
      name: 'held-tcp',
      port: 30001,
      backendHost: node.tunnelIp,
      backendPort: TCP_PORT,
    });

    const hit = await collateral(system, node);
    console.log(
      `\nCollateral: open connections of an untouched service cut by ${CHANGES} changes to other services (target 0)`,
    );
    printTable(
      ['', 'cut', 'of'],
      [
        ['Postern (changes through the API)', String(hit.gateway), String(hit.total)],
        [`baseline: ${CHANGES} reloads, worker_shutdown_timeout 10s`, String(hit.baseline), String(hit.total)],
      ],
    );

    const cut = await cutOff(system, node);
    console.log('\nCut-off: a disabled service’s open connection (target <= 2 s), median of 5');
    printTable(
      ['closed after', 'API answered after', 'closed / API'],
      [
        [
          formatMs(median(cut.closedMs)),
          formatMs(median(cut.apiMs)),
          `${(median(cut.closedMs) / median(cut.apiMs)).toFixed(2)}x`,
        ],
      ],
    );

    const outage = await restarts(system);
    console.log(
      `\nRestarts: failed probes (HTTP + TCP, every 100 ms) per restart of the control plane (target 0), ${RESTARTS} each`,
    );
    printTable(
      ['restart', 'failed probes per restart'],
      outage.map((r) => [r.kind, r.failed.join(', ')]),
    );
  } finally {
    await lab.destroy();
  }
}

await main();
