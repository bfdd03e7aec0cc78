// The gateway and node images as users run them (deploy/README.md): `docker run` with NET_ADMIN and /dev/net/tun,
// a named volume for /data, a node container connecting with `postern connect`. Everything runs on a Docker network
// of this run; the test talks to the containers' addresses only. Needs root and a Docker daemon (the test command
// starts one); images are built from this checkout by scripts/build-images.sh.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HttpServiceSchema,
  NodeCreatedSchema,
  NodeLabelProblemsSchema,
  NodeSchema,
  ServiceAccessSchema,
  SystemInfoSchema,
  installCommand,
  listOf,
  type SystemInfo,
} from '@postern/contract';
import { currentRunId } from '../harness/ids.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import {
  containerIp,
  docker,
  dockerAllowingFailure,
  ensureImages,
  healthOf,
  logsOf,
  runLabel,
  runName,
  sweepDocker,
  type Images,
} from '../harness/docker.js';
import {
  ensureFreshDebianImage,
  inHost,
  posternLeftovers,
  runAsTyped,
  startFreshHost,
  waitForBoot,
} from '../harness/fresh-host.js';
import { HttpsApi, httpsRequest, type HttpsTarget } from '../harness/https.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

const ADMIN = { username: 'admin', password: `pw-${currentRunId()}-correct-horse` };
const names = {
  network: runName('net'),
  volume: runName('gwdata'),
  gateway: runName('gw'),
  node: runName('node'),
  web: runName('web'),
  /** Containers published by their Docker labels (docs/LABELS.md) through the node container's agent. */
  labelled: runName('labelled'),
  twin: runName('twin'),
  /** A labelled container whose labels also give it an access policy. */
  guarded: runName('guarded'),
  /** The install tests' machine, on a network with no way out (apt installs from its cache). */
  host: runName('host'),
  internal: runName('internal'),
};
const appDomain = `app-${currentRunId()}.test`;
const labelDomain = `labels-${currentRunId()}.test`;
/** The node's agent publishes only containers with this label: the engine is shared with other runs. */
const labelFilter = `postern-e2e-labels=${currentRunId()}`;

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
    // Docker label discovery (docs/LABELS.md): the engine's socket, and only this run's containers.
    '-v',
    '/var/run/docker.sock:/var/run/docker.sock',
    '-e',
    'POSTERN_DOCKER=1',
    '-e',
    `POSTERN_DOCKER_FILTER=${labelFilter}`,
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

describe.runIf(canRun('docker'))('gateway and node images', () => {
  beforeAll(async () => {
    images = await ensureImages();
    workDir = mkdtempSync(join(tmpdir(), `${currentRunId()}-images-`));
    caFile = join(workDir, 'gateway-ca.pem');
    await docker(['network', 'create', ...runLabel(), names.network]);
    await docker(['volume', 'create', ...runLabel(), names.volume]);
    await runGateway({ POSTERN_ADMIN_PASSWORD: ADMIN.password });
  }, 45 * 60_000);

  afterAll(async () => {
    for (const name of [names.host, names.guarded, names.twin, names.labelled, names.web, names.node, names.gateway]) {
      await stopAndRemove(name);
    }
    sweepDocker(currentRunId());
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('adds at most 120 MB to its Node base image besides the node client it serves, without pnpm, compilers or sources', async () => {
    const sizeOf = async (image: string) =>
      Number((await docker(['image', 'inspect', '--format', '{{.Size}}', image])).trim());
    const added = (await sizeOf(images.gateway)) - (await sizeOf('postern-local/node:22-bookworm-slim'));
    // install.sh and the node client for amd64 and arm64 (two gzipped single executables of ~39 MB, deploy/README.md).
    const client = Number(
      (await docker(['run', '--rm', '--entrypoint', 'du', images.gateway, '-sb', '/app/apps/cli/dist/release'])).split(
        '\t',
      )[0],
    );
    expect(client / 1e6).toBeGreaterThan(60);
    expect(client / 1e6).toBeLessThanOrEqual(90);
    expect((added - client) / 1e6).toBeLessThanOrEqual(120);
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

  it('publishes a labelled container through the node container, disables it when stopped, removes it when removed', async () => {
    /** A small HTTP server in the node container's network (so each its own port), published by its labels alone. */
    const runLabelled = (name: string, port: number, more: string[] = []) =>
      docker([
        'run',
        '-d',
        '--init',
        '--name',
        name,
        '--network',
        `container:${names.node}`,
        ...runLabel(),
        '--label',
        labelFilter,
        '--label',
        `postern.http.domain=${labelDomain}`,
        '--label',
        `postern.http.port=${port}`,
        ...more,
        '--entrypoint',
        'node',
        images.node,
        '-e',
        `require("http").createServer((q, s) => s.end("${name} saw " + q.url)).listen(${port})`,
      ]);
    const labelServices = async () =>
      listOf(HttpServiceSchema)
        .parse(await api.call('GET', '/api/services/http?limit=100'))
        .data.filter((service) => service.source?.kind === 'docker-labels');
    const served = () => httpsRequest({ address: console_.address, host: labelDomain }, '/hello');

    const started = performance.now();
    await runLabelled(names.labelled, 8081);
    await waitFor(async () => ((await served()).body === `${names.labelled} saw /hello` ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the labelled container to be served through the gateway',
    });
    console.info(`labelled container served ${Math.round(performance.now() - started)} ms after docker run returned`);
    const [service] = await labelServices();
    expect(service?.source).toMatchObject({ container: names.labelled, key: 'http' });

    // A second container asking for the same domain and path: refused, reported, the first still served.
    await runLabelled(names.twin, 8082);
    await waitFor(
      async () =>
        (await dockerAllowingFailure(['exec', names.node, 'postern', 'status'])).stdout.includes(
          `${names.twin} (http)`,
        ),
      { timeoutMs: 30_000, what: '`postern status` to report the refused twin' },
    );
    expect(await logsOf(names.node)).toContain(`docker: container ${names.twin} (http):`);
    // The console's node page shows the same report (GET /api/nodes/:id/label-problems).
    const containerNode = listOf(NodeSchema)
      .parse(await api.call('GET', '/api/nodes?limit=100'))
      .data.find((node) => node.name === 'container node');
    const reported = await waitFor(
      async () => {
        const { problems } = NodeLabelProblemsSchema.parse(
          await api.call('GET', `/api/nodes/${containerNode?.id ?? 0}/label-problems`),
        );
        return problems.find((problem) => problem.container === names.twin);
      },
      { timeoutMs: 30_000, what: "the node page's report of the refused twin" },
    );
    expect(reported).toMatchObject({ key: 'http', message: expect.stringContaining('already') as string });
    expect((await served()).body).toBe(`${names.labelled} saw /hello`);
    expect((await labelServices()).map((row) => row.source?.container)).toEqual([names.labelled]);

    await docker(['stop', '--time', '1', names.labelled]);
    await waitFor(async () => ((await labelServices())[0]?.enabled === false ? true : undefined), {
      timeoutMs: 30_000,
      what: "the stopped container's service to be disabled",
    });
    expect((await served()).status).not.toBe(200);

    // Removed: its service goes, and the twin's labels get the route.
    await docker(['rm', names.labelled]);
    await waitFor(async () => ((await served()).body === `${names.twin} saw /hello` ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the twin to be served once the first container is gone',
    });
    expect((await labelServices()).map((row) => row.source?.container)).toEqual([names.twin]);

    // Access policy labels (docs/LABELS.md): the service is served only behind the policy its labels ask for.
    await runLabelled(names.guarded, 8083, [
      '--label',
      'postern.http.path=/private',
      '--label',
      'postern.http.access=protected',
      '--label',
      'postern.http.access.share-links=true',
    ]);
    const guarded = await waitFor(
      async () => (await labelServices()).find((row) => row.source?.container === names.guarded && row.enabled),
      { timeoutMs: 30_000, what: 'the guarded container to be published' },
    );
    const access = ServiceAccessSchema.parse(
      await api.call('GET', `/api/services/${guarded.nodeId}/http/${guarded.id}/access`),
    );
    expect(access).toMatchObject({ mode: 'protected', setBy: 'node', own: { shareLinks: true } });
    const privately = await waitFor(
      async () => {
        const reply = await httpsRequest({ address: console_.address, host: labelDomain }, '/private/x');
        // Until the guarded service is routed, the twin at / answers below /private too.
        return reply.body.includes(`${names.twin} saw`) ? undefined : reply;
      },
      { timeoutMs: 30_000, what: 'the guarded path to be routed' },
    );
    expect([302, 401, 403]).toContain(privately.status);
    expect(privately.body).not.toContain(`${names.guarded} saw`);
    await docker(['rm', '-f', names.guarded]);
    await waitFor(
      async () => ((await labelServices()).some((row) => row.source?.container === names.guarded) ? undefined : true),
      { timeoutMs: 30_000, what: "the guarded container's service to be removed" },
    );

    // Configuration as code from the node's machine (docs/CONFIG-AS-CODE.md): the exported document names the
    // service made by `postern expose` and leaves the labels' one to its labels; planned back, it changes nothing.
    const asOperator = ['exec', '-e', `POSTERN_ADMIN_PASSWORD=${ADMIN.password}`, names.node, 'sh', '-c'];
    const url = `--url https://${names.gateway}`;
    const exported = JSON.parse(await docker([...asOperator, `postern admin export --json ${url}`])) as {
      nodes: { name: string; http: { name: string }[] }[];
    };
    expect(exported.nodes.find((node) => node.name === 'container node')?.http.map((service) => service.name)).toEqual([
      'web',
    ]);
    const plan = await docker([
      ...asOperator,
      `postern admin export ${url} > /tmp/gateway.yaml && postern admin plan -f /tmp/gateway.yaml ${url}`,
    ]);
    expect(plan).toContain('No changes: the gateway matches the document.');
    expect(plan).toContain('1 service published by Docker labels is not part of the document');
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

  // --- the one-line install on a fresh Debian machine (deploy/install.sh, served by this gateway) --------------------
  describe('the console’s one-line install on a fresh Debian machine', () => {
    let info: SystemInfo;
    let node: { id: number; token: string };
    const accessLog = '/data/nginx/logs/access-http.log';

    /** The node as the gateway sees it: its latest handshake (unix seconds), 0 before any. */
    const latestHandshake = async (): Promise<number> => {
      const at = NodeSchema.parse(await api.call('GET', `/api/nodes/${node.id}`)).latestHandshakeTimestamp;
      return at === null ? 0 : Math.floor(Date.parse(at) / 1000);
    };

    /** Nothing of Postern on the machine, and none of the packages the install adds. */
    async function expectNothingInstalled(): Promise<void> {
      expect(await posternLeftovers(names.host)).toEqual([]);
      const packages = await inHost(
        names.host,
        'dpkg-query -W -f "\\${Status} \\${Package}\\n" wireguard-tools wireguard-go iproute2 2>/dev/null | grep "^install ok installed" || true',
      );
      expect(packages.stdout.trim()).toBe('');
    }

    /** Access-log lines of the gateway's nginx that came from the machine since `fromLine`. */
    async function requestsFromHost(fromLine: number): Promise<string[]> {
      const address = (
        await docker([
          'inspect',
          '--format',
          `{{(index .NetworkSettings.Networks "${names.internal}").IPAddress}}`,
          names.host,
        ])
      ).trim();
      const { stdout } = await dockerAllowingFailure([
        'exec',
        names.gateway,
        'sh',
        '-c',
        `tail -n +${fromLine + 1} ${accessLog}`,
      ]);
      return stdout.split('\n').filter((line) => line.includes(`"${address}"`));
    }
    const accessLogLines = async (): Promise<number> =>
      Number(
        (await dockerAllowingFailure(['exec', names.gateway, 'sh', '-c', `wc -l < ${accessLog}`])).stdout.trim(),
      ) || 0;

    beforeAll(async () => {
      await ensureFreshDebianImage();
      // No way out of this network: the install reaches the gateway and nothing else (apt installs from its cache).
      await docker(['network', 'create', '--internal', ...runLabel(), names.internal]);
      await docker(['network', 'connect', names.internal, names.gateway]);
      await startFreshHost(names.host, names.internal);
      await api.login(ADMIN.username, ADMIN.password);
      info = SystemInfoSchema.parse(await api.call('GET', '/api/system/info'));
      node = NodeCreatedSchema.parse(await api.call('POST', '/api/nodes', { name: 'installed node' }));
    }, 10 * 60_000);

    it('the gateway serves install.sh and a client for each architecture, and the console prints the pinned command', () => {
      expect(info.nodeInstall.script).toBe(true);
      expect(info.certificate?.selfSigned).toBe(true);
      expect(installCommand(node.token, info)).toContain(
        `--pinnedpubkey sha256//${info.certificate?.pin.slice(7) ?? ''} -k`,
      );
    });

    it('stops at a wrong pin before anything is installed or any request (and so the token) reaches the gateway', async () => {
      const wrong: SystemInfo = {
        ...info,
        certificate: { selfSigned: true, pin: `sha256:${randomBytes(32).toString('base64')}` },
      };
      const logFrom = await accessLogLines();
      const result = await runAsTyped(names.host, installCommand(node.token, wrong));
      expect(result.stderr).toMatch(/curl: \(90\)/);
      expect(result.code).not.toBe(0);
      await expectNothingInstalled();
      expect(await requestsFromHost(logFrom)).toEqual([]);
      expect(await latestHandshake()).toBe(0);
    });

    it('refuses a download that does not match SHA256SUMS before anything is installed', async () => {
      const client = '/app/apps/cli/dist/release/postern-linux-x64.gz';
      // Another program, compressed as the client is: only the checksum can tell.
      await docker(['exec', names.gateway, 'sh', '-c', `cp ${client} /tmp/client.gz && gzip -c /bin/ls > ${client}`]);
      try {
        const result = await runAsTyped(names.host, installCommand(node.token, info));
        expect(result.stderr).toContain('postern-linux-x64.gz from the gateway does not match its checksum');
        expect(result.code).not.toBe(0);
        await expectNothingInstalled();
        expect(await latestHandshake()).toBe(0);
      } finally {
        await docker(['exec', names.gateway, 'sh', '-c', `mv /tmp/client.gz ${client}`]);
      }
    });

    it('installs, connects (the gateway sees the handshake) and enables the service; the token is in no argument, log or URL', async () => {
      const started = Math.floor(Date.now() / 1000) - 1;
      const logFrom = await accessLogLines();
      const result = await runAsTyped(names.host, installCommand(node.token, info), '/tmp/install-execve.trace');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('postern-install: connected');
      await waitFor(async () => (await latestHandshake()) >= started, {
        timeoutMs: 30_000,
        what: 'the gateway to see the installed node’s handshake',
      });
      expect(
        (await inHost(names.host, 'systemctl is-enabled postern-node; systemctl is-active postern-node')).stdout,
      ).toBe('enabled\nactive\n');
      // strace saw every program the install started, with its arguments: curl, apt-get, postern connect, systemctl…
      const trace = (await inHost(names.host, 'cat /tmp/install-execve.trace; rm -f /tmp/install-execve.trace')).stdout;
      expect(trace).toMatch(/execve\("[^"]*\/postern", \["[^"]*postern", "connect", "--url"/);
      expect(trace).toContain('"apt-get", "install"');
      expect(trace).not.toContain(node.token);
      // ...and none of the running ones has it either (the service's daemon reads it from its 0600 config).
      expect((await inHost(names.host, 'ps -eo args')).stdout).not.toContain(node.token);
      expect((await inHost(names.host, 'stat -c %a /etc/postern/postern.json')).stdout.trim()).toBe('600');
      const logs = [
        result.stdout + result.stderr,
        (await inHost(names.host, 'journalctl --no-pager -o cat')).stdout,
        await logsOf(names.gateway),
        (await dockerAllowingFailure(['exec', names.gateway, 'sh', '-c', 'cat /data/nginx/logs/*.log'])).stdout,
      ];
      for (const text of logs) expect(text).not.toContain(node.token);
      // What the machine asked the gateway for: install.sh and the downloads, then the agent API; no token in a URL.
      const requests = (await requestsFromHost(logFrom)).join('\n');
      expect(requests).toContain('/downloads/postern-linux-x64.gz');
      expect(requests).toContain('/api/agent/');
    });

    it('is connected again after the machine restarts: the service survived', async () => {
      const before = await latestHandshake();
      await docker(['restart', '--time', '5', names.host]);
      await waitForBoot(names.host);
      await waitFor(async () => (await latestHandshake()) > before, {
        timeoutMs: 60_000,
        what: 'a new handshake of the restarted node',
      });
      await waitFor(async () => (await inHost(names.host, 'postern status --health')).code === 0, {
        timeoutMs: 30_000,
        what: 'the restarted node to reach the gateway through its tunnel',
      });
    });

    it('`postern uninstall` leaves nothing of Postern on the machine', async () => {
      const result = await inHost(names.host, 'postern uninstall');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('Removed the service postern-node.service, the interface postern0');
      expect(await posternLeftovers(names.host)).toEqual([]);
      await stopAndRemove(names.host);
    });
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
    // The node's agent restarted with it: the labelled twin (in the node's network, restarted with it as the web
    // container is) is still published once, not twice.
    await docker(['restart', '--time', '1', names.twin]);
    await waitFor(
      async () =>
        (await httpsRequest({ address: console_.address, host: labelDomain }, '/again')).body ===
        `${names.twin} saw /again`,
      { timeoutMs: 30_000, what: 'the labelled twin through the new gateway' },
    );
    const labelled = listOf(HttpServiceSchema)
      .parse(await api.call('GET', '/api/services/http?limit=100'))
      .data.filter((service) => service.source?.kind === 'docker-labels');
    expect(labelled.map((service) => service.source?.container)).toEqual([names.twin]);
  });
});
