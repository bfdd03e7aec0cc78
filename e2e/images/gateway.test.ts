// The gateway and node images as users run them (deploy/README.md): `docker run` with NET_ADMIN and /dev/net/tun,
// a named volume for /data, a node container connecting with `postern connect`. Everything runs on a Docker network
// of this run; the test talks to the containers' addresses only. Needs root and a Docker daemon (the test command
// starts one); images are built from this checkout by scripts/build-images.sh.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpServiceSchema, NodeCreatedSchema, NodeSchema, listOf } from '@postern/contract';
import { currentRunId } from '../harness/ids.js';
import { waitFor } from '../harness/wait-for.js';
import {
  areImageTestsRequired,
  containerIp,
  docker,
  dockerAllowingFailure,
  ensureImages,
  healthOf,
  isDockerUp,
  logsOf,
  runLabel,
  runName,
  sweepDocker,
  type Images,
} from '../harness/docker.js';
import { HttpsApi, httpsRequest, type HttpsTarget } from '../harness/https.js';

const canRun = process.getuid?.() === 0 && isDockerUp();
if (!canRun && areImageTestsRequired())
  throw new Error('image tests are required (POSTERN_E2E_IMAGES=required) but no Docker daemon answers as root');

const ADMIN = { username: 'admin', password: `pw-${currentRunId()}-correct-horse` };
const names = {
  network: runName('net'),
  volume: runName('gwdata'),
  gateway: runName('gw'),
  node: runName('node'),
  web: runName('web'),
};
const appDomain = `app-${currentRunId()}.test`;

let images: Images;
let workDir: string;
let caFile: string;
let console_: HttpsTarget;
let api: HttpsApi;

/** The README's `docker run` for the gateway, on this run's network instead of published host ports. */
async function runGateway(env: Record<string, string>): Promise<void> {
  await docker([
    'run',
    '-d',
    '--name',
    names.gateway,
    '--network',
    names.network,
    ...runLabel(),
    '--cap-add',
    'NET_ADMIN',
    '--device',
    '/dev/net/tun',
    '-v',
    `${names.volume}:/data`,
    '-e',
    `POSTERN_PUBLIC_HOST=${names.gateway}`,
    ...Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]),
    images.gateway,
  ]);
  const address = await containerIp(names.gateway);
  console_ = { address, host: names.gateway };
  // The console's certificate, self-signed for POSTERN_PUBLIC_HOST, as the gateway keeps it on its volume: under
  // the host's name, or as the fallback certificate for names without one of their own.
  const pem = await waitFor(
    async () => {
      for (const name of [names.gateway, '_fallback']) {
        const { stdout } = await dockerAllowingFailure([
          'exec',
          names.gateway,
          'openssl',
          'x509',
          '-in',
          `/data/certs/${name}.pem`,
        ]);
        if (stdout.includes('BEGIN CERTIFICATE')) return stdout;
      }
      return undefined;
    },
    { timeoutMs: 30_000, what: 'the gateway to create its self-signed console certificate' },
  );
  writeFileSync(caFile, pem);
  console_ = { address, host: names.gateway, ca: pem };
  api = new HttpsApi(console_);
  await waitFor(async () => (await httpsRequest(console_, '/api/health')).status === 200, {
    timeoutMs: 60_000,
    what: 'the console over HTTPS',
  });
}

/** The node image as deploy/README.md runs it, trusting the gateway's self-signed certificate. */
async function runNode(token: string): Promise<void> {
  await docker([
    'run',
    '-d',
    '--name',
    names.node,
    '--network',
    names.network,
    ...runLabel(),
    '--cap-add',
    'NET_ADMIN',
    '--device',
    '/dev/net/tun',
    '-v',
    `${caFile}:/etc/postern-gateway-ca.pem:ro`,
    '-e',
    'NODE_EXTRA_CA_CERTS=/etc/postern-gateway-ca.pem',
    '-e',
    `POSTERN_URL=https://${names.gateway}`,
    '-e',
    `POSTERN_TOKEN=${token}`,
    images.node,
  ]);
  await waitFor(
    async () => (await dockerAllowingFailure(['exec', names.node, 'postern', 'status', '--health'])).code === 0,
    {
      timeoutMs: 60_000,
      what: 'the node container to bring its tunnel up and reach the gateway through it',
    },
  );
}

/** GET through the gateway's nginx to the node's service, by the service's domain. */
async function getApp(path: string): Promise<{ status: number; body: string; fingerprint: string }> {
  return httpsRequest({ address: console_.address, host: appDomain }, path);
}

async function stopAndRemove(name: string): Promise<void> {
  await dockerAllowingFailure(['rm', '-f', name]);
}

describe.runIf(canRun)('gateway and node images', () => {
  beforeAll(async () => {
    images = await ensureImages();
    workDir = mkdtempSync(join(tmpdir(), `${currentRunId()}-images-`));
    caFile = join(workDir, 'gateway-ca.pem');
    await docker(['network', 'create', ...runLabel(), names.network]);
    await docker(['volume', 'create', ...runLabel(), names.volume]);
    await runGateway({ POSTERN_ADMIN_PASSWORD: ADMIN.password });
  }, 45 * 60_000);

  afterAll(async () => {
    for (const name of [names.web, names.node, names.gateway]) await stopAndRemove(name);
    sweepDocker(currentRunId());
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('adds at most 120 MB to its Node base image, without pnpm, compilers or sources', async () => {
    const sizeOf = async (image: string) =>
      Number((await docker(['image', 'inspect', '--format', '{{.Size}}', image])).trim());
    const added = (await sizeOf(images.gateway)) - (await sizeOf('postern-local/node:22-bookworm-slim'));
    expect(added / 1e6).toBeLessThanOrEqual(120);
    const found = await docker([
      'run',
      '--rm',
      '--entrypoint',
      'sh',
      images.gateway,
      '-c',
      'for c in pnpm gcc g++ make python3; do command -v "$c"; done; ls /app/apps/server; ls -d /app/apps/*/src /app/packages 2>/dev/null; true',
    ]);
    expect(found.trim().split('\n')).toEqual(['dist', 'node_modules', 'package.json', 'pnpm-lock.yaml']);
  });

  it('turns healthy by its own HEALTHCHECK', async () => {
    await waitFor(async () => (await healthOf(names.gateway)) === 'healthy', {
      timeoutMs: 60_000,
      what: 'Docker to report the gateway healthy',
    });
  });

  it('serves the console over HTTPS with its certificate for POSTERN_PUBLIC_HOST, and signs in through it', async () => {
    const page = await httpsRequest(console_, '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>Postern</title>');
    await api.login(ADMIN.username, ADMIN.password);
    const nodes = listOf(NodeSchema).parse(await api.call('GET', '/api/nodes'));
    expect(nodes.data.map((node) => node.isLocal)).toEqual([true]);
  });

  it('keeps the plain-HTTP control plane inside the container (loopback only)', async () => {
    const listening = await docker(['exec', names.gateway, 'ss', '-Hltn', 'sport = :3000']);
    expect(listening.trim().split(/\s+/)[3]).toBe('127.0.0.1:3000');
    const fromOutside = await fetch(`http://${console_.address}:3000/api/health`, {
      signal: AbortSignal.timeout(5000),
    }).then(
      () => 'answered',
      () => 'refused',
    );
    expect(fromOutside).toBe('refused');
  });

  it('brings WireGuard up inside the container with wireguard-go', async () => {
    expect(await docker(['exec', names.gateway, 'wg', 'show', 'postern0', 'listen-port'])).toBe('51820\n');
    expect(await docker(['exec', names.gateway, 'ps', '-o', 'args=', '-C', 'wireguard-go'])).toContain('wireguard-go');
  });

  it('connects a node container with `postern connect`, and a request reaches its service through the tunnel', async () => {
    const node = NodeCreatedSchema.parse(await api.call('POST', '/api/nodes', { name: 'container node' }));
    await runNode(node.token);
    // The application as a sidecar sharing the node container's network, as deploy/README.md shows.
    await docker([
      'run',
      '-d',
      '--init',
      '--name',
      names.web,
      '--network',
      `container:${names.node}`,
      ...runLabel(),
      '--entrypoint',
      'node',
      images.node,
      '-e',
      'require("http").createServer((q, s) => s.end(`web saw ${q.url}`)).listen(8080)',
    ]);
    const exposed = await docker([
      'exec',
      names.node,
      'postern',
      'expose',
      'http',
      'web',
      '--port',
      '8080',
      '--domain',
      appDomain,
    ]);
    expect(exposed).toContain(`https://${appDomain}/`);
    const answer = await waitFor(
      async () => {
        const reply = await getApp('/through/the/tunnel');
        return reply.status === 200 ? reply : undefined;
      },
      { timeoutMs: 30_000, what: `https://${appDomain}/ to reach the node's service` },
    );
    expect(answer.body).toBe('web saw /through/the/tunnel');
  });

  it('creates an allowInternet node although /proc/sys is read-only in the container, and masquerades it', async () => {
    expect(await docker(['exec', names.gateway, 'sh', '-c', 'grep -w "/proc/sys" /proc/mounts'])).toMatch(/\bro\b/);
    const node = NodeSchema.parse(await api.call('POST', '/api/nodes', { name: 'internet node', allowInternet: true }));
    expect(node.allowInternet).toBe(true);
    await waitFor(
      async () =>
        (await docker(['exec', names.gateway, 'iptables', '-t', 'nat', '-S', 'POSTERN-NAT'])).includes(
          `-s ${node.address}/32`,
        ),
      { timeoutMs: 20_000, what: 'the NAT rule of the allowInternet node' },
    );
    // A later node is not refused because of the first one.
    NodeSchema.parse(await api.call('POST', '/api/nodes', { name: 'after internet node' }));
  });

  let before: { nodes: unknown; services: unknown; nodeConfig: string; consoleCert: string; appCert: string };

  it('stops cleanly within 2 s on `docker stop`', async () => {
    const services = listOf(HttpServiceSchema).parse(await api.call('GET', '/api/services/http'));
    const nodes = listOf(NodeSchema).parse(await api.call('GET', '/api/nodes'));
    const containerNode = nodes.data.find((node) => node.name === 'container node');
    before = {
      nodes: nodes.data.map(({ id, name, address, allowInternet, isLocal }) => ({
        id,
        name,
        address,
        allowInternet,
        isLocal,
      })),
      services: services.data.map(({ id, nodeId, name, domain, backendHost, backendPort }) => ({
        id,
        nodeId,
        name,
        domain,
        backendHost,
        backendPort,
      })),
      nodeConfig: await api.call<string>('GET', `/api/nodes/${containerNode?.id ?? 0}/download`),
      consoleCert: (await httpsRequest(console_, '/api/health')).fingerprint,
      appCert: (await getApp('/')).fingerprint,
    };
    const started = performance.now();
    await docker(['stop', '--time', '10', names.gateway]);
    const stopMs = performance.now() - started;
    const state = JSON.parse(await docker(['inspect', '--format', '{{json .State}}', names.gateway])) as {
      ExitCode: number;
    };
    const logs = await logsOf(names.gateway);
    expect(state.ExitCode, logs.slice(-2000)).toBe(0);
    expect(logs).toContain('"shutting down"');
    expect(logs).not.toContain('shutdown failed');
    expect(stopMs).toBeLessThan(2000);
  });

  it('keeps admin, nodes, services, keys and certificates in its volume across `docker rm` + `docker run`', async () => {
    await docker(['rm', names.gateway]);
    // No POSTERN_ADMIN_PASSWORD this time: the admin must come from the volume.
    await runGateway({});
    await api.login(ADMIN.username, ADMIN.password);
    const nodes = listOf(NodeSchema).parse(await api.call('GET', '/api/nodes'));
    const services = listOf(HttpServiceSchema).parse(await api.call('GET', '/api/services/http'));
    const containerNode = nodes.data.find((node) => node.name === 'container node');
    expect(
      nodes.data.map(({ id, name, address, allowInternet, isLocal }) => ({
        id,
        name,
        address,
        allowInternet,
        isLocal,
      })),
    ).toEqual(before.nodes);
    expect(
      services.data.map(({ id, nodeId, name, domain, backendHost, backendPort }) => ({
        id,
        nodeId,
        name,
        domain,
        backendHost,
        backendPort,
      })),
    ).toEqual(before.services);
    expect(await api.call<string>('GET', `/api/nodes/${containerNode?.id ?? 0}/download`)).toBe(before.nodeConfig);
    expect((await httpsRequest(console_, '/api/health')).fingerprint).toBe(before.consoleCert);
    expect((await getApp('/')).fingerprint).toBe(before.appCert);
    // The node reconnects with its stored token and config to the replaced gateway, and its service answers again.
    await docker(['restart', '--time', '5', names.node]);
    await waitFor(
      async () => (await dockerAllowingFailure(['exec', names.node, 'postern', 'status', '--health'])).code === 0,
      {
        timeoutMs: 60_000,
        what: 'the node to reconnect to the replaced gateway',
      },
    );
    await docker(['restart', '--time', '1', names.web]);
    await waitFor(async () => (await getApp('/again')).body === 'web saw /again', {
      timeoutMs: 30_000,
      what: 'the service through the new gateway',
    });
  });
});
