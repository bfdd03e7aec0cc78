// Throughput through the gateway (client -> nginx (TLS) -> WireGuard -> node) as a ratio of a bare WireGuard
// tunnel measured in the same run (target: >= 0.9). Also shows the gateway's own tunnel without nginx,
// so a shortfall can be put on nginx or on WireGuard. Needs root and a built server: see bench/README.md.
import { httpGet } from '../e2e/harness/clients.js';
import { runIn } from '../e2e/harness/exec.js';
import { Lab } from '../e2e/harness/lab.js';
import { canRun } from '../apps/server/src/test/requirements.js';
import { waitFor } from '../apps/server/src/test/wait-for.js';
import { startBackend } from '../e2e/harness/backends.js';
import { generateKeyPair, startWireguard, waitForHandshake } from '../e2e/harness/wireguard.js';
import { connectNode, startSystem } from '../e2e/system/fixture.js';
import { formatCpu, withCpu } from './lib/cpu.js';
import { median, printTable } from './lib/stats.js';

const BYTES = Number(process.argv[2] ?? 128 * 1024 * 1024);
const ROUNDS = 3;
const BACKEND_PORT = 8080;
/** The bare pair's port on the gateway (the gateway's own WireGuard has 51820). */
const BARE_PORT = 51821;
const TARGET_RATIO = 0.9;

/** Mbit/s of one download of /bytes/BYTES with curl from `ns`. */
async function download(ns: string, url: string, connectTo?: string): Promise<number> {
  const target = new URL(url);
  const args = ['-sS', '-k', '--fail', '-o', '/dev/null', '-w', '%{speed_download}', '--max-time', '300'];
  if (connectTo) args.push('--resolve', `${target.hostname}:${target.port || '443'}:${connectTo}`);
  const bytesPerSecond = Number(await runIn(ns, 'curl', [...args, url], { timeoutMs: 310_000 }));
  return (bytesPerSecond * 8) / 1e6;
}

/**
 * The baseline: a second, bare wireguard-go pair between the SAME two namespaces over the SAME links (gateway ->
 * internet bridge -> node), with its own keys, port and addresses and the same backend program. Only the
 * gateway's own setup differs, so the ratio is about the gateway, not about a shorter path.
 */
async function startBareTunnel(
  lab: Lab,
  gatewayNs: string,
  gatewayPublicIp: string,
  nodeNs: string,
): Promise<{ ns: string; url: string }> {
  const hubKeys = generateKeyPair();
  const nodeKeys = generateKeyPair();
  // The hub runs in a session of its own, like the gateway's wireguard-go (and any wg-quick one): see README.
  // BENCH_BARE_SESSION=shared runs it in this process's session instead, to show what that changes.
  const hubWg = await startWireguard(
    lab,
    gatewayNs,
    lab.ifName('bhub'),
    [
      '[Interface]',
      'Address = 10.98.0.1/24',
      `PrivateKey = ${hubKeys.privateKey}`,
      `ListenPort = ${BARE_PORT}`,
      '[Peer]',
      `PublicKey = ${nodeKeys.publicKey}`,
      'AllowedIPs = 10.98.0.2/32',
    ].join('\n'),
    { ownSession: process.env.BENCH_BARE_SESSION !== 'shared' },
  );
  await startWireguard(
    lab,
    nodeNs,
    lab.ifName('bnode'),
    [
      '[Interface]',
      'Address = 10.98.0.2/32',
      `PrivateKey = ${nodeKeys.privateKey}`,
      '[Peer]',
      `PublicKey = ${hubKeys.publicKey}`,
      `Endpoint = ${gatewayPublicIp}:${BARE_PORT}`,
      'AllowedIPs = 10.98.0.0/24',
      'PersistentKeepalive = 25',
    ].join('\n'),
  );
  await startBackend(lab, nodeNs, 'http', '10.98.0.2', BACKEND_PORT, 'bare');
  await waitForHandshake(hubWg, 10_000);
  return { ns: gatewayNs, url: `http://10.98.0.2:${BACKEND_PORT}/bytes/${BYTES}` };
}

async function main(): Promise<void> {
  if (!canRun('netns', 'server-build')) {
    console.error('bench/throughput needs root, wireguard-go and a built server (pnpm --filter @postern/server build)');
    process.exit(2);
  }
  const lab = new Lab();
  try {
    const system = await startSystem(lab);
    const node = await connectNode(system, 'node1', 11);
    await node.serve('http', BACKEND_PORT);
    await system.api.createHttpService(node.node.id, {
      name: 'throughput',
      domain: 'tp.bench.test',
      backendHost: node.tunnelIp,
      backendPort: BACKEND_PORT,
    });
    const gatewayIp = system.topology.gatewayPublicIp;
    const client = system.topology.clientNs;
    await waitFor(
      async () => (await httpGet(client, 'https://tp.bench.test/bytes/1', { connectTo: gatewayIp })).status === 200,
      {
        timeoutMs: 30_000,
        what: 'tp.bench.test to be served',
      },
    );
    const bare = await startBareTunnel(lab, system.topology.gatewayNs, gatewayIp, node.ns);

    // Interleaved rounds, so a noisy moment of the machine hits every path alike.
    const figures = { bare: [] as number[], gatewayTunnel: [] as number[], throughGateway: [] as number[] };
    // CPU seconds per program during each path's downloads: who spent the machine's two cores.
    const cpu = { bare: [] as string[], gatewayTunnel: [] as string[], throughGateway: [] as string[] };
    const measure = async (path: keyof typeof figures, fn: () => Promise<number>): Promise<void> => {
      const { result, cpu: spent } = await withCpu(fn);
      figures[path].push(result);
      cpu[path].push(formatCpu(spent));
    };
    for (let round = 0; round < ROUNDS; round++) {
      await measure('bare', () => download(bare.ns, bare.url));
      await measure('gatewayTunnel', () =>
        download(system.topology.gatewayNs, `http://${node.tunnelIp}:${BACKEND_PORT}/bytes/${BYTES}`),
      );
      await measure('throughGateway', () => download(client, `https://tp.bench.test/bytes/${BYTES}`, gatewayIp));
    }
    const base = median(figures.bare);
    const row = (name: string, values: number[]): string[] => [
      name,
      median(values).toFixed(0),
      values.map((v) => v.toFixed(0)).join(' / '),
      (median(values) / base).toFixed(2),
    ];
    console.log(`Download of ${BYTES} bytes, ${ROUNDS} interleaved rounds (Mbit/s)`);
    printTable(
      ['path', 'median', 'rounds', 'ratio to bare'],
      [
        row('bare WireGuard tunnel (wireguard-go pair, plain HTTP)', figures.bare),
        row("gateway's WireGuard only (gateway -> node, plain HTTP)", figures.gatewayTunnel),
        row('through the gateway (client -> nginx HTTPS -> WireGuard -> node)', figures.throughGateway),
      ],
    );
    console.log('\nCPU seconds per program during each download (round by round):');
    for (const [path, rounds] of Object.entries(cpu)) for (const line of rounds) console.log(`  ${path}: ${line}`);
    const ratio = median(figures.throughGateway) / base;
    console.log(
      `\nthroughput ratio: ${ratio.toFixed(2)} (target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'})`,
    );
  } finally {
    await lab.destroy();
  }
}

await main();
