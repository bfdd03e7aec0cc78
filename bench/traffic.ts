// What counting traffic per service costs on the proxy path (docs/api.md "Observability"): two real nginx instances
// with the gateway's own config and Lua module, one counting (the default) and one with `countTraffic: false`, in front
// of the same backend, loaded alike in interleaved slices of the same run. Prints requests/s and latency of each and
// the ratios. Needs root and nginx with the Lua module (like the data plane's integration tests); loopback only.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '@postern/server/src/dataplane/atomic-write.js';
import { createSelfSignedPem, pemPath } from '@postern/server/src/dataplane/certs/self-signed.js';
import { createConnectionCutter } from '@postern/server/src/dataplane/connections.js';
import { createHttpInstance } from '@postern/server/src/dataplane/nginx/http-instance.js';
import {
  canRunNginx,
  freeLoopbackPort,
  loopbackRenderOptions,
  silentLogger,
} from '@postern/server/src/dataplane/nginx/integration-support.js';
import { readLuaModule } from '@postern/server/src/dataplane/nginx/lua-source.js';
import { FALLBACK_CERT_NAME, type NginxRenderOptions } from '@postern/server/src/dataplane/nginx/options.js';
import { renderHttpInstance } from '@postern/server/src/dataplane/nginx/render-main.js';
import { buildRouteTable } from '@postern/server/src/dataplane/nginx/routes.js';
import { createStreamInstances } from '@postern/server/src/dataplane/nginx/stream-instances.js';
import { createProxy, type Proxy } from '@postern/server/src/dataplane/proxy.js';
import { median, printTable } from './lib/stats.js';

const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 3000);
const SLICES = Number(process.env.BENCH_SLICES ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ECHO_SERVER = fileURLToPath(new URL('../e2e/harness/programs/echo-server.mjs', import.meta.url));
const DOMAIN = 'app.test';

interface Variant {
  name: string;
  proxy: Proxy;
  port: number;
  rates: number[];
  latencies: number[];
}

async function startVariant(
  dataDir: string,
  name: string,
  countTraffic: boolean,
  backendPort: number,
): Promise<Variant> {
  const prefixDir = join(dataDir, name, 'nginx');
  const certsDir = join(dataDir, name, 'certs');
  await mkdir(certsDir, { recursive: true, mode: 0o700 });
  for (const cert of [FALLBACK_CERT_NAME, DOMAIN])
    await writeFileAtomic(
      pemPath(certsDir, cert),
      await createSelfSignedPem(cert === FALLBACK_CERT_NAME ? 'gw.test' : cert),
      0o600,
    );
  const options: NginxRenderOptions = {
    ...(await loopbackRenderOptions({ prefixDir, certsDir, consoleUpstream: `http://127.0.0.1:${backendPort}` })),
    countTraffic,
  };
  const http = createHttpInstance({
    prefixDir,
    logger: silentLogger,
    render: (dir, dicts) => renderHttpInstance(options, dir, readLuaModule(), dicts),
  });
  const proxy = createProxy({
    prefixDir,
    certsDir,
    http,
    streams: createStreamInstances({ prefixDir, logger: silentLogger, listenAddress: '127.0.0.1' }),
    cutter: createConnectionCutter(silentLogger),
    logger: silentLogger,
  });
  await proxy.start();
  await proxy.publishCertificates([DOMAIN]);
  const domains = [{ domainId: 1, domain: DOMAIN, ssl: 'self-signed' as const }];
  const table = buildRouteTable(
    [
      {
        serviceId: 1,
        nodeId: 1,
        domain: DOMAIN,
        pathLocation: '/',
        backendProto: 'http',
        backendHost: '127.0.0.1',
        backendPort,
        allowedIps: [],
        blockedIps: [],
      },
    ],
    domains,
    { reservedHosts: ['gw.test'] },
  );
  await proxy.syncRoutes(table.hosts, [DOMAIN]);
  return { name, proxy, port: options.httpsPort, rates: [], latencies: [] };
}

/** One keep-alive request; resolves with its latency in ms. */
function once(agent: Agent, port: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        agent,
        servername: DOMAIN,
        headers: { host: DOMAIN },
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(performance.now() - started)
            : reject(new Error(`status ${String(res.statusCode)}`)),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** CONCURRENCY closed-loop clients for SLICE_MS: requests per second and every latency. */
async function slice(variant: Variant): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const deadline = performance.now() + SLICE_MS;
  let done = 0;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        latencies.push(await once(agent, variant.port));
        done++;
      }
    }),
  );
  agent.destroy();
  variant.rates.push(done / (SLICE_MS / 1000));
  variant.latencies.push(...latencies);
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;

async function main(): Promise<void> {
  if (!canRunNginx) {
    console.error('bench/traffic needs root and nginx with the Lua module (scripts/install-deps.sh)');
    process.exit(2);
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'postern-bench-traffic-'));
  const backendPort = await freeLoopbackPort();
  const backend: ChildProcess = spawn(
    process.execPath,
    [ECHO_SERVER, 'http', '127.0.0.1', String(backendPort), 'bench'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const variants: Variant[] = [];
  try {
    await new Promise<void>((resolve) => backend.stdout?.once('data', () => resolve()));
    variants.push(
      await startVariant(dataDir, 'counting', true, backendPort),
      await startVariant(dataDir, 'not-counting', false, backendPort),
    );
    for (const variant of variants) await slice(variant); // warm-up, not kept
    for (const variant of variants) {
      variant.rates = [];
      variant.latencies = [];
    }
    // Interleaved, so background load on the machine hits both alike.
    for (let i = 0; i < SLICES; i++)
      for (const variant of i % 2 === 0 ? variants : [...variants].reverse()) await slice(variant);
    const [counting, bare] = variants as [Variant, Variant];
    printTable(
      ['nginx', 'req/s (median of slices)', 'p50 ms', 'p99 ms'],
      variants.map((v) => [
        v.name,
        median(v.rates).toFixed(0),
        quantile(v.latencies, 0.5).toFixed(2),
        quantile(v.latencies, 0.99).toFixed(2),
      ]),
    );
    console.log(`throughput counting / not counting: ${(median(counting.rates) / median(bare.rates)).toFixed(3)}`);
    console.log(
      `p50 latency counting / not counting: ${(quantile(counting.latencies, 0.5) / quantile(bare.latencies, 0.5)).toFixed(3)}`,
    );
    console.log(
      `p99 latency counting / not counting: ${(quantile(counting.latencies, 0.99) / quantile(bare.latencies, 0.99)).toFixed(3)}`,
    );
    console.log(
      `(${SLICES} slices of ${SLICE_MS} ms each, ${CONCURRENCY} keep-alive clients, HTTPS to one service; load average ${(await import('node:os')).loadavg()[0]?.toFixed(2) ?? 'unknown'})`,
    );
  } finally {
    for (const variant of variants) await variant.proxy.stop({ keepServing: false });
    backend.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
