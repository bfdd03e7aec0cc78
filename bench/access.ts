// What checking a visitor costs on the proxy path (docs/ACCESS.md): ONE real nginx with the gateway's own
// config and Lua modules serves the same backend twice, once public and once protected, and keep-alive clients with
// a valid session load each in interleaved slices of the same run. Prints requests/s and p50/p99 of each, the
// throughput ratio (target >= 0.95) and what the check adds at p99 (target <= 1 ms).
// Needs root and nginx with the Lua module (like the data plane's integration tests); loopback only.
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { Agent, request } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signAccessCookie } from '@postern/server/src/modules/access/cookie.js';
import { writeFileAtomic } from '@postern/server/src/dataplane/atomic-write.js';
import { createSelfSignedPem, pemPath } from '@postern/server/src/dataplane/certs/self-signed.js';
import { createConnectionCutter } from '@postern/server/src/dataplane/connections.js';
import { buildAccessTable } from '@postern/server/src/dataplane/nginx/access-table.js';
import { createHttpInstance } from '@postern/server/src/dataplane/nginx/http-instance.js';
import {
  canRunNginx,
  freeLoopbackPort,
  loopbackRenderOptions,
  silentLogger,
} from '@postern/server/src/dataplane/nginx/integration-support.js';
import { readLuaModule } from '@postern/server/src/dataplane/nginx/lua-source.js';
import { FALLBACK_CERT_NAME } from '@postern/server/src/dataplane/nginx/options.js';
import { renderHttpInstance } from '@postern/server/src/dataplane/nginx/render-main.js';
import { buildRouteTable } from '@postern/server/src/dataplane/nginx/routes.js';
import { createStreamInstances } from '@postern/server/src/dataplane/nginx/stream-instances.js';
import { createProxy } from '@postern/server/src/dataplane/proxy.js';
import type { DesiredHttpRoute } from '@postern/server/src/dataplane/types.js';
import { median, printTable } from './lib/stats.js';

const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 3000);
const SLICES = Number(process.env.BENCH_SLICES ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ECHO_SERVER = fileURLToPath(new URL('../e2e/harness/programs/echo-server.mjs', import.meta.url));
const PUBLIC = 'public.test';
/** A second public service: public / public-again shows this run's noise floor. */
const PUBLIC_AGAIN = 'again.test';
const PROTECTED = 'app.test';
const POLICY = 7;

interface Variant {
  name: string;
  host: string;
  cookie: string;
  rates: number[];
  latencies: number[];
  /** nginx's CPU seconds (master and workers) while this variant was loaded, and the requests it answered. */
  cpuSeconds?: number;
  requests?: number;
}

/** CPU seconds (utime + stime) of the nginx whose master's pid file is given, and of its workers. */
async function nginxCpuSeconds(pidFile: string): Promise<number> {
  const master = (await readFile(pidFile, 'utf8')).trim();
  let ticks = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (pid === master || fields[1] === master) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100;
}

/** One keep-alive request; resolves with its latency in ms. */
function once(agent: Agent, port: number, variant: Variant): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/dashboard',
        agent,
        servername: variant.host,
        headers: { host: variant.host, cookie: variant.cookie, accept: 'text/html' },
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(performance.now() - started)
            : reject(new Error(`${variant.name}: status ${String(res.statusCode)}`)),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** CONCURRENCY closed-loop clients for SLICE_MS: requests per second and every latency. */
async function slice(port: number, variant: Variant, pidFile: string): Promise<void> {
  const cpuBefore = await nginxCpuSeconds(pidFile);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const deadline = performance.now() + SLICE_MS;
  let done = 0;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        latencies.push(await once(agent, port, variant));
        done++;
      }
    }),
  );
  agent.destroy();
  variant.cpuSeconds = (variant.cpuSeconds ?? 0) + (await nginxCpuSeconds(pidFile)) - cpuBefore;
  variant.requests = (variant.requests ?? 0) + done;
  variant.rates.push(done / (SLICE_MS / 1000));
  variant.latencies.push(...latencies);
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;

/**
 * The check's own cost, independent of machine load: inside one nginx worker, the CPU time (os.clock) of N calls of
 * postern_access.check() on a request with a valid session, minus N iterations doing the rest of the loop's work
 * (putting the Cookie header back, which the check strips). Microseconds of CPU per request.
 */
async function cpuPerCheck(dataDir: string, key: Buffer, session: string): Promise<{ check: number; public: number }> {
  const dir = join(dataDir, 'cpu');
  await mkdir(join(dir, 'logs'), { recursive: true });
  const luaDir = fileURLToPath(new URL('../apps/server/src/dataplane/nginx/lua', import.meta.url));
  const port = await freeLoopbackPort();
  const access = buildAccessTable({
    key: { id: '1', secret: key.toString('base64') },
    policies: [{ id: POLICY, epoch: 1, bypassPaths: ['/hooks'], bypassNetworks: [] }],
    revoked: new Map(),
  });
  const [ref = '', json = ''] = [...access.entries][0] ?? [];
  await writeFileAtomic(
    join(dir, 'access_cpu.lua'),
    `local access = require("postern_access")
local postern = require("postern")
return { run = function()
  local d = ngx.shared.gw_access
  d:set("k", ${JSON.stringify(access.key)}); d:set("p:${ref}", ${JSON.stringify(json)}); d:set("v", "1")
  local cookie = ngx.var.http_cookie
  local path, loose = postern.canonical_path("/dashboard")
  local n = 200000
  local function loop(route)
    local ok = 0
    local started = os.clock()
    for _ = 1, n do
      ngx.req.set_header("Cookie", cookie)
      if route and access.check(route, "${PROTECTED}", path, loose) then ok = ok + 1 end
    end
    return (os.clock() - started) * 1e6 / n, ok
  end
  loop({ s = 2, x = "${ref}" })
  local base = loop(nil)
  local checked, ok = loop({ s = 2, x = "${ref}" })
  local open = loop({ s = 1 })
  ngx.say(string.format("%.3f %.3f %d", checked - base, open - base, ok))
end }
`,
    0o644,
  );
  const conf = [
    'load_module /usr/lib/nginx/modules/ndk_http_module.so;',
    'load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;',
    'daemon off; master_process off; worker_processes 1;',
    `error_log ${join(dir, 'logs/error.log')} warn; pid ${join(dir, 'nginx.pid')};`,
    'events {}',
    `http { access_log off; lua_package_path "${dir}/?.lua;${luaDir}/?.lua;/usr/share/lua/5.1/?.lua;;";`,
    ...['gw_access', 'gw_routes', 'gw_certs', 'gw_acme', 'gw_live', 'gw_stats'].map((d) => `lua_shared_dict ${d} 4m;`),
    `init_by_lua_block { require("postern").init([==[${JSON.stringify({ snapshot: join(dir, 'none.json'), certs_dir: dir })}]==]) }`,
    `server { listen 127.0.0.1:${port}; set $gw_access_user ""; set $gw_access_email ""; set $gw_access_groups "";`,
    `  location / { content_by_lua_block { require("access_cpu").run() } } } }`,
  ].join('\n');
  await writeFileAtomic(join(dir, 'nginx.conf'), conf, 0o644);
  const nginx = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 100; i++) {
      const answer = await new Promise<string | null>((resolve) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/',
            headers: { cookie: `theme=dark; __Host-postern-${POLICY}=${session}` },
          },
          (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () => resolve(body));
          },
        );
        req.on('error', () => resolve(null));
        req.end();
      });
      if (answer) {
        const [check = 'NaN', open = 'NaN', ok = '0'] = answer.trim().split(' ');
        if (Number(ok) !== 200000) throw new Error(`the check let in ${ok} of 200000 valid requests`);
        return { check: Number(check), public: Number(open) };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the CPU measurement nginx did not answer');
  } finally {
    nginx.kill();
  }
}

async function main(): Promise<void> {
  if (!canRunNginx) {
    console.error('bench/access needs root and nginx with the Lua module (scripts/install-deps.sh)');
    process.exit(2);
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'postern-bench-access-'));
  const backendPort = await freeLoopbackPort();
  const backend: ChildProcess = spawn(
    process.execPath,
    [ECHO_SERVER, 'http', '127.0.0.1', String(backendPort), 'bench'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const prefixDir = join(dataDir, 'nginx');
  const certsDir = join(dataDir, 'certs');
  await mkdir(certsDir, { recursive: true, mode: 0o700 });
  const options = await loopbackRenderOptions({
    prefixDir,
    certsDir,
    consoleUpstream: `http://127.0.0.1:${backendPort}`,
  });
  const proxy = createProxy({
    prefixDir,
    certsDir,
    http: createHttpInstance({
      prefixDir,
      logger: silentLogger,
      render: (dir) => renderHttpInstance(options, dir, readLuaModule()),
    }),
    streams: createStreamInstances({ prefixDir, logger: silentLogger, listenAddress: '127.0.0.1' }),
    cutter: createConnectionCutter(silentLogger),
    logger: silentLogger,
  });
  try {
    await new Promise<void>((resolve) => backend.stdout?.once('data', () => resolve()));
    for (const cert of [FALLBACK_CERT_NAME, PUBLIC, PUBLIC_AGAIN, PROTECTED])
      await writeFileAtomic(
        pemPath(certsDir, cert),
        await createSelfSignedPem(cert === FALLBACK_CERT_NAME ? 'gw.test' : cert),
        0o600,
      );
    await proxy.start();
    await proxy.publishCertificates([PUBLIC, PUBLIC_AGAIN, PROTECTED]);
    const key = randomBytes(32);
    // What a real gateway holds: a policy with a bypass path and a few revocations besides this visitor's.
    const access = buildAccessTable({
      key: { id: '1', secret: key.toString('base64') },
      policies: [{ id: POLICY, epoch: 1, bypassPaths: ['/hooks'], bypassNetworks: [] }],
      revoked: new Map(
        Array.from({ length: 100 }, (_, i) => [
          `revoked-session-${String(i).padStart(8, '0')}`,
          Date.now() / 1000 + 3600,
        ]),
      ),
    });
    const route = (serviceId: number, domain: string, accessPolicyId?: number): DesiredHttpRoute => ({
      serviceId,
      nodeId: 1,
      domain,
      pathLocation: '/',
      backendProto: 'http',
      backendHost: '127.0.0.1',
      backendPort,
      allowedIps: [],
      blockedIps: [],
      ...(accessPolicyId === undefined ? {} : { accessPolicyId }),
    });
    const domains = [PUBLIC, PUBLIC_AGAIN, PROTECTED].map((domain, i) => ({
      domainId: i + 1,
      domain,
      ssl: 'self-signed' as const,
    }));
    await proxy.syncAccess(access);
    await proxy.syncRoutes(
      buildRouteTable([route(1, PUBLIC), route(3, PUBLIC_AGAIN), route(2, PROTECTED, POLICY)], domains, {
        reservedHosts: ['gw.test'],
        access,
      }).hosts,
      [PUBLIC, PUBLIC_AGAIN, PROTECTED],
    );
    const session = signAccessCookie(key, '1', PROTECTED, {
      s: 'bench-session-0000000000',
      p: POLICY,
      e: 1,
      x: Math.floor(Date.now() / 1000) + 3600,
      u: 'alice',
      m: 'alice@corp.test',
      g: ['staff', 'ops'],
    });
    const variants: Variant[] = [
      // The same cookie header length on both: the public one is stripped of nothing but still scanned.
      {
        name: 'public',
        host: PUBLIC,
        cookie: `theme=dark; other=${'x'.repeat(session.length)}`,
        rates: [],
        latencies: [],
      },
      {
        name: 'protected (valid session)',
        host: PROTECTED,
        cookie: `theme=dark; __Host-postern-${POLICY}=${session}`,
        rates: [],
        latencies: [],
      },
      {
        name: 'public again (noise floor)',
        host: PUBLIC_AGAIN,
        cookie: `theme=dark; other=${'x'.repeat(session.length)}`,
        rates: [],
        latencies: [],
      },
    ];
    const pidFile = join(prefixDir, 'nginx.pid');
    for (const variant of variants) await slice(options.httpsPort, variant, pidFile); // warm-up, not kept
    for (const variant of variants) {
      variant.rates = [];
      variant.latencies = [];
      variant.cpuSeconds = 0;
      variant.requests = 0;
    }
    // Interleaved in a rotating order, so background load on the machine hits every variant alike.
    for (let i = 0; i < SLICES; i++)
      for (let j = 0; j < variants.length; j++) {
        const variant = variants[(i + j) % variants.length];
        if (variant) await slice(options.httpsPort, variant, pidFile);
      }
    const [open, guarded, again] = variants as [Variant, Variant, Variant];
    printTable(
      ['service', 'req/s (median of slices)', 'p50 ms', 'p99 ms', "nginx's CPU µs per request"],
      variants.map((v) => [
        v.name,
        median(v.rates).toFixed(0),
        quantile(v.latencies, 0.5).toFixed(2),
        quantile(v.latencies, 0.99).toFixed(2),
        (((v.cpuSeconds ?? 0) * 1e6) / Math.max(1, v.requests ?? 0)).toFixed(1),
      ]),
    );
    console.log(
      `throughput protected / public: ${(median(guarded.rates) / median(open.rates)).toFixed(3)} (target >= 0.95)`,
    );
    console.log(
      `noise floor, public again / public: ${(median(again.rates) / median(open.rates)).toFixed(3)} throughput, ${(quantile(again.latencies, 0.99) - quantile(open.latencies, 0.99)).toFixed(3)} ms at p99`,
    );
    console.log(
      `p50 added: ${(quantile(guarded.latencies, 0.5) - quantile(open.latencies, 0.5)).toFixed(3)} ms; p99 added: ${(quantile(guarded.latencies, 0.99) - quantile(open.latencies, 0.99)).toFixed(3)} ms (target <= 1 ms)`,
    );
    const cpu = await cpuPerCheck(dataDir, key, session);
    console.log(
      `CPU per request inside nginx (load-independent): the check with a valid session ${cpu.check.toFixed(2)} µs, a public route's ${cpu.public.toFixed(2)} µs`,
    );
    console.log(
      `(${SLICES} slices of ${SLICE_MS} ms each, ${CONCURRENCY} keep-alive clients, HTTPS; load average ${loadavg()[0]?.toFixed(2) ?? 'unknown'})`,
    );
  } finally {
    await proxy.stop({ keepServing: false });
    backend.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
