import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { operations, routes, type NodeCreated, type SystemInfo } from '@postern/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../harness/api.js';
import { startBackend } from '../harness/backends.js';
import { httpGet } from '../harness/clients.js';
import { runInAllowingFailure, type RunResult } from '../harness/exec.js';
import { listNamespaceProcesses } from '../harness/netns-processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { startSystem, stopSystem, type System } from './fixture.js';
import { canRun, CLI_ENTRY } from '../../apps/server/src/test/requirements.js';

// The node side as an operator runs it: the bundled `postern` CLI inside a node namespace, with an access token
// created through the API, connects the node through the gateway's public HTTPS address with the pin the console
// shows (the gateway's self-signed certificate, served by nginx), publishes a web service, checks its health
// through the tunnel, runs into a revoked token and disconnects.

const BACKEND_PORT = 8080;
const SERVICE_DOMAIN = 'cli.e2e.test';
const SERVICE_PATH = '/cli-web';
const TOKEN_NAME = 'e2e-cli-token';
/** connect waits up to 10 s for the first handshake itself; the rest is process start-up and the API. */
const CLI_TIMEOUT_MS = 30_000;
const ONLINE_DEADLINE_MS = 15_000;
/** How long a new service may take to answer: generous, the apply-latency target is measured in bench/. */
const APPLY_DEADLINE_MS = 15_000;

describe.skipIf(!canRun('netns', 'server-build', 'cli-build'))('postern CLI on a node', () => {
  let system: System | undefined;
  let node: NodeCreated;
  let nodeNs = '';
  let configDir = '';
  let ifName = '';
  /** What the console's connect command carries: the public HTTPS URL and the pin of its self-signed certificate. */
  let info: SystemInfo;
  let pin = '';

  const api = (): ApiClient => {
    if (system === undefined) throw new Error('the system did not start');
    return system.api;
  };

  /** `postern ARGS --config-dir DIR` in the node namespace, with no POSTERN_* variables from the caller. */
  const postern = (args: readonly string[]): Promise<RunResult> =>
    runInAllowingFailure(nodeNs, process.execPath, [CLI_ENTRY, ...args, '--config-dir', configDir], {
      env: { PATH: process.env.PATH },
      timeoutMs: CLI_TIMEOUT_MS,
    });

  /** A failed command's output, for assertion messages. */
  const describeRun = (result: RunResult): string =>
    `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;

  beforeAll(async () => {
    system = await startSystem();
    const host = await system.topology.addHost('cli', 11);
    nodeNs = host.ns;
    // A directory connect has to create, as /etc/postern on a fresh machine.
    configDir = join(system.lab.makeTempDir('postern'), 'etc-postern');
    ifName = system.lab.ifName('cli');
    node = await system.api.createNode({ name: 'e2e-cli' });
    info = await system.api.call(operations.systemInfo);
    if (info.certificate === null) throw new Error('the gateway serves no certificate');
    pin = info.certificate.pin;
    // nginx publishes the API on the public HTTPS address once the data plane has started.
    const health = `${info.publicUrl}${routes.health.path}`;
    await waitFor(async () => (await httpGet(nodeNs, health)).status === 200, {
      timeoutMs: 15_000,
      what: `${health} from the node`,
    });
  });

  afterAll(async () => {
    // Also on failure: the lab kills wireguard-go and everything else in its namespaces and removes the temp dirs.
    expect(await stopSystem(system)).toEqual([]);
  });

  it('gives the console its public HTTPS URL and the pin of the self-signed certificate nginx serves', () => {
    expect(info).toEqual({
      publicUrl: `https://${system?.topology.gatewayPublicIp ?? ''}`,
      certificate: { selfSigned: true, pin: expect.stringMatching(/^sha256:/) as unknown },
      // Where the Docker and Helm commands' image and chart come from; `script` depends on the checkout's build.
      nodeInstall: {
        script: expect.any(Boolean) as unknown,
        image: expect.stringMatching(/^ghcr\.io\/postern\/node:\d+\.\d+\.\d+$/) as unknown,
        chart: 'oci://ghcr.io/postern/charts/postern-node',
        chartVersion: expect.any(String) as unknown,
      },
    });
  });

  it('warns at boot that the control plane serves plain HTTP beyond loopback (the test gateway sets POSTERN_HOST=0.0.0.0)', () => {
    expect(system?.gateway.process.text).toMatch(
      /"msg":"The control plane serves plain HTTP on 0\.0\.0\.0:3000, beyond loopback: .*POSTERN_HOST=127\.0\.0\.1/,
    );
  });

  it("connects with the console's command (public HTTPS URL, pin, a token created through the API) and the node turns online", async () => {
    const created = await api().call(operations.createToken, { params: { id: node.id }, body: { name: TOKEN_NAME } });
    expect((await api().getNode(node.id)).status).toBe('offline');

    // Without the pin the self-signed certificate is refused, and nothing is stored.
    const unpinned = await postern([
      'connect',
      '--url',
      info.publicUrl,
      '--token',
      created.token,
      '--interface',
      ifName,
    ]);
    expect(unpinned.code, describeRun(unpinned)).toBe(1);
    expect(unpinned.stderr).toMatch(/postern: The gateway's certificate at https:\/\/[\d.]+ is not trusted: .*--pin/);
    expect(existsSync(join(configDir, 'postern.json'))).toBe(false);

    const result = await postern([
      'connect',
      '--url',
      info.publicUrl,
      '--token',
      created.token,
      '--pin',
      pin,
      '--interface',
      ifName,
    ]);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toContain(`Connected: ${ifName}`);
    expect(`${result.stdout}${result.stderr}`).not.toContain(created.token);
    // The token and the private key are on disk: only root may read them.
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    for (const file of ['postern.json', 'wireguard.conf'])
      expect(statSync(join(configDir, file)).mode & 0o777, file).toBe(0o600);
    // Later commands (and the daemon) use the stored pin; --health probes the gateway's tunnel address, not its API.
    expect(JSON.parse(readFileSync(join(configDir, 'postern.json'), 'utf8'))).toMatchObject({
      url: info.publicUrl,
      pin,
      tunnelHealthUrl: 'http://10.44.0.1:80/_postern/tunnel-health',
    });

    const online = await waitFor(
      async () => {
        const found = await api().getNode(node.id);
        return found.status === 'online' && found;
      },
      { timeoutMs: ONLINE_DEADLINE_MS, what: 'the node to be shown online' },
    );
    expect(online.latestHandshakeTimestamp).not.toBeNull();
  });

  it('exposes an HTTP service that a client reaches through the gateway', async () => {
    if (system === undefined || node.address === null) throw new Error('no system or no tunnel address');
    await startBackend(system.lab, nodeNs, 'http', node.address, BACKEND_PORT, 'cli-node');

    const result = await postern(['expose', 'http', 'web', '--port', String(BACKEND_PORT), '--domain', SERVICE_DOMAIN]);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toMatch(/^Exposed http service \d+ "web"/);

    const { gatewayPublicIp: gatewayIp, clientNs } = system.topology;
    const answer = await waitFor(
      async () => {
        const got = await httpGet(clientNs, `https://${SERVICE_DOMAIN}/from-client?x=1`, { connectTo: gatewayIp });
        return got.status === 200 && got;
      },
      { timeoutMs: APPLY_DEADLINE_MS, what: `https://${SERVICE_DOMAIN}/ to answer through the gateway` },
    );
    expect(JSON.parse(answer.body)).toMatchObject({ label: 'cli-node', method: 'GET', url: '/from-client?x=1' });

    // A node publishes web services on its own domains only: without --domain the CLI stops before asking.
    const noDomain = await postern([
      'expose',
      'http',
      'web-path',
      '--port',
      String(BACKEND_PORT),
      '--path',
      SERVICE_PATH,
    ]);
    expect(noDomain.code, describeRun(noDomain)).toBe(2);
    expect(noDomain.stderr).toContain('pass --domain NAME');

    const byPath = await postern([
      'expose',
      'http',
      'web-path',
      '--port',
      String(BACKEND_PORT),
      '--domain',
      SERVICE_DOMAIN,
      '--path',
      SERVICE_PATH,
    ]);
    expect(byPath.code, describeRun(byPath)).toBe(0);
    const viaPath = await waitFor(
      async () => {
        const got = await httpGet(clientNs, `https://${SERVICE_DOMAIN}${SERVICE_PATH}/page`, { connectTo: gatewayIp });
        return got.status === 200 && got;
      },
      { timeoutMs: APPLY_DEADLINE_MS, what: `https://${SERVICE_DOMAIN}${SERVICE_PATH}/ to answer through the gateway` },
    );
    expect(JSON.parse(viaPath.body)).toMatchObject({ label: 'cli-node', url: `${SERVICE_PATH}/page` });

    const listed = await postern(['services']);
    expect(listed.code, describeRun(listed)).toBe(0);
    expect(listed.stdout).toMatch(/^http\s+\d+\s+web\s.*enabled$/m);
    expect(listed.stdout).toMatch(/^http\s+\d+\s+web-path\s.*enabled$/m);
  });

  it('refuses the gateway when its certificate does not match the pin', async () => {
    const otherPin = `sha256:${Buffer.alloc(32, 7).toString('base64')}`;
    const result = await postern(['services', '--url', info.publicUrl, '--pin', otherPin]);
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr.trim()).toBe(
      `postern: The gateway at ${info.publicUrl} presented a certificate with pin ${pin}, not the pinned ${otherPin}: nothing was sent. ` +
        "If the gateway's certificate was replaced, copy the new connect command (with its --pin) from the console.",
    );
  });

  it('still reaches the API over plain HTTP at a private address', async () => {
    if (system === undefined) throw new Error('the system did not start');
    const result = await postern([
      'services',
      '--url',
      `http://${system.topology.gatewayPublicIp}:${new URL(system.gateway.baseUrl).port}`,
    ]);
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toMatch(/^http\s+\d+\s+web\s.*enabled$/m);
  });

  it('reports a healthy tunnel with status --health (nginx answers the tunnel health URL)', async () => {
    // The contract with nginx: exactly this path on the gateway's tunnel address answers 200 "ok" to a node.
    const tunnelHealth = await httpGet(nodeNs, 'http://10.44.0.1:80/_postern/tunnel-health', {
      sourceIp: node.address ?? '',
    });
    expect({ status: tunnelHealth.status, body: tunnelHealth.body.trim() }, tunnelHealth.error).toEqual({
      status: 200,
      body: 'ok',
    });
    const result = await postern(['status', '--health']);
    expect(result.code, describeRun(result)).toBe(0);
  });

  it('fails the next call with a clear message once the token is revoked', async () => {
    const tokens = (await api().call(operations.listTokens, { params: { id: node.id } })).data;
    const token = tokens.find((candidate) => candidate.name === TOKEN_NAME);
    if (token === undefined) throw new Error(`token ${TOKEN_NAME} not listed: ${JSON.stringify(tokens)}`);
    await api().call(operations.revokeToken, { params: { id: node.id, tokenId: token.id } });

    const result = await postern(['services']);
    // Exit code 3: the token is refused, retrying cannot help (README, "Exit codes and messages").
    expect(result.code, describeRun(result)).toBe(3);
    expect(result.stderr.trim()).toMatch(/^postern: .*revoked/i);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('removes the interface on disconnect, after which the health check fails', async () => {
    const result = await postern(['disconnect']);
    expect(result.code, describeRun(result)).toBe(0);

    const link = await runInAllowingFailure(nodeNs, 'ip', ['link', 'show', ifName]);
    expect(link.code, link.stdout).not.toBe(0);
    // wireguard-go leaves once its socket is gone; a user would notice a daemon left behind.
    await waitFor(
      async () => {
        const left = (await listNamespaceProcesses(nodeNs)).filter((entry) => entry.command.includes(ifName));
        return left.length === 0 || undefined;
      },
      { timeoutMs: 5_000, what: `wireguard-go for ${ifName} to exit` },
    );

    const health = await postern(['status', '--health']);
    expect(health.code, describeRun(health)).not.toBe(0);
  });
});
