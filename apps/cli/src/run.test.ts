import { describe, expect, it } from 'vitest';
import { ruleMessages } from '@postern/contract';
import { connectedSystem, harness } from './cli-harness.js';
import { EXIT_BAD_TOKEN, TOOLS_MISSING_MESSAGE } from './errors.js';
import { createFakeSystem } from './fake-system.js';
import {
  GATEWAYS,
  findClosedPort,
  makeCertificate,
  makeNode,
  makeToken,
  multiGatewayConfigText,
  nodeConfigText,
  startAgentServer,
} from './fixtures.js';
import { runCli } from './run.js';
import { createSystem } from './system.js';

// The CLI as a user runs it: argv in, exit code and printed lines out. OS effects go to a fake system,
// HTTP goes to a local server on 127.0.0.1 that answers like the gateway's agent API.

describe('postern connect', () => {
  it('fetches the config, stores it, brings the tunnel up and says so', async () => {
    const token = makeToken();
    const server = await startAgentServer(() => ({
      status: 200,
      body: { node: makeNode(), config: nodeConfigText() },
    }));
    try {
      const system = connectedSystem();
      const h = harness(system);
      const code = await runCli(
        ['connect', '--url', server.url, '--token', token, '--config-dir', '/cfg', '--interface', 'pstn-t1'],
        h.context,
      );
      expect(h.err()).toContain(`Connecting to ${server.url} …`);
      expect(code).toBe(0);
      expect(h.out()).toBe('Connected: pstn-t1 (wireguard-go) 10.8.0.2/32 via gw.example.com:51820\n');
      expect(system.files.get('/cfg/wireguard.conf')).toEqual({ text: nodeConfigText(), mode: 0o600 });
      expect(JSON.parse(system.files.get('/cfg/postern.json')?.text ?? '')).toEqual({
        url: server.url,
        token,
        interface: 'pstn-t1',
      });
      expect(system.links.has('pstn-t1')).toBe(true);
      expect(h.err() + h.out()).not.toContain(token);

      // Connecting again under another name replaces the old interface.
      const again = harness(system);
      expect(
        await runCli(
          ['connect', '--url', server.url, '--token', token, '--config-dir', '/cfg', '--interface', 'pstn-t3'],
          again.context,
        ),
      ).toBe(0);
      expect([...system.links]).toEqual(['pstn-t3']);

      // A damaged settings file does not block the connect that rewrites it.
      system.files.set('/cfg/postern.json', { text: '{', mode: 0o600 });
      const repair = harness(system);
      expect(
        await runCli(
          ['connect', '--url', server.url, '--token', token, '--config-dir', '/cfg', '--interface', 'pstn-t3'],
          repair.context,
        ),
      ).toBe(0);
      expect(JSON.parse(system.files.get('/cfg/postern.json')?.text ?? '')).toMatchObject({ interface: 'pstn-t3' });
    } finally {
      await server.close();
    }
  });

  it('uses the stored URL and token later, and the environment when nothing is stored', async () => {
    const token = makeToken();
    const server = await startAgentServer(() => ({ status: 200, body: { data: [], page: 1, limit: 100, total: 0 } }));
    try {
      const system = connectedSystem();
      system.files.set('/cfg/postern.json', {
        text: JSON.stringify({ url: server.url, token, interface: 'x' }),
        mode: 0o600,
      });
      const stored = harness(system, { configDir: '/cfg' });
      expect(await runCli(['services'], stored.context)).toBe(0);
      const fromEnv = harness(createFakeSystem(), { url: server.url, token });
      expect(await runCli(['services'], fromEnv.context)).toBe(0);
      expect(fromEnv.out()).toContain('No services yet');
      expect(server.requests.map((r) => r.authorization)).toEqual(Array(4).fill(`Bearer ${token}`));
    } finally {
      await server.close();
    }
  });

  it('reads the token from --token-file (- is standard input), so it is no argument, and it wins over a stored one', async () => {
    const [stale, fresh] = [makeToken(), makeToken()];
    const server = await startAgentServer(() => ({
      status: 200,
      body: { node: makeNode(), config: nodeConfigText() },
    }));
    try {
      const system = connectedSystem();
      // A reinstall: an older connect stored another token for the same gateway.
      system.files.set('/cfg/postern.json', {
        text: JSON.stringify({ url: server.url, token: stale, interface: 'x' }),
        mode: 0o600,
      });
      system.files.set('/dev/stdin', { text: `${fresh}\n`, mode: 0o600 });
      const h = harness(system);
      expect(
        await runCli(['connect', '--url', server.url, '--token-file', '-', '--config-dir', '/cfg'], h.context),
      ).toBe(0);
      expect(server.requests.map((r) => r.authorization)).toEqual([`Bearer ${fresh}`]);
      expect(JSON.parse(system.files.get('/cfg/postern.json')?.text ?? '')).toMatchObject({ token: fresh });
      expect(h.err() + h.out()).not.toContain(fresh);

      system.files.set('/root/token', { text: '\n', mode: 0o600 });
      const empty = harness(system);
      expect(
        await runCli(
          ['connect', '--url', server.url, '--token-file', '/root/token', '--config-dir', '/cfg'],
          empty.context,
        ),
      ).toBe(2);
      expect(empty.err()).toBe('postern: --token-file: /root/token holds no token\n');
      const both = harness(system);
      expect(await runCli(['connect', '--url', server.url, '--token', fresh, '--token-file', '-'], both.context)).toBe(
        2,
      );
      expect(both.err()).toContain('--token or --token-file, not both');
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('fails with one line and exit 1 when the gateway is unreachable', async () => {
    const url = `http://127.0.0.1:${await findClosedPort()}`;
    const h = harness(connectedSystem());
    expect(await runCli(['connect', '--url', url, '--token', makeToken(), '--config-dir', '/cfg'], h.context)).toBe(1);
    expect(h.err()).toMatch(
      new RegExp(`^Connecting to .*\\npostern: Cannot reach the gateway at ${url}: connect ECONNREFUSED [\\d.:]+\\n$`),
    );
  });

  it('prints the server message for a revoked token and stores nothing', async () => {
    const server = await startAgentServer(() => ({ status: 401, body: { message: 'Token revoked' } }));
    try {
      const system = connectedSystem();
      const h = harness(system);
      expect(
        await runCli(['connect', '--url', server.url, '--token', makeToken(), '--config-dir', '/cfg'], h.context),
      ).toBe(EXIT_BAD_TOKEN);
      expect(h.err()).toContain('postern: The gateway refused the access token: Token revoked\n');
      expect(system.files.has('/cfg/postern.json')).toBe(false);
      expect(system.links.size).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('rejects a malformed token before any request', async () => {
    const server = await startAgentServer(() => ({ status: 200, body: {} }));
    try {
      const h = harness(connectedSystem());
      expect(
        await runCli(['connect', '--url', server.url, '--token', 'pstn_typo', '--config-dir', '/cfg'], h.context),
      ).toBe(EXIT_BAD_TOKEN);
      expect(h.err()).toMatch(/^postern: Malformed access token/);
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it('names the missing WireGuard tools when wg is not on PATH', async () => {
    const server = await startAgentServer(() => ({ status: 200, body: {} }));
    try {
      // The real system, with a PATH that holds no wg.
      const h = harness(createSystem('/nonexistent-postern-bin'));
      expect(
        await runCli(
          ['connect', '--url', server.url, '--token', makeToken(), '--config-dir', '/nonexistent-postern-cfg'],
          h.context,
        ),
      ).toBe(1);
      expect(h.err()).toBe(`postern: ${TOOLS_MISSING_MESSAGE}\n`);
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it('with --daemon, waits for a gateway that is not reachable yet instead of exiting', async () => {
    const token = makeToken();
    let calls = 0;
    const h = harness(connectedSystem());
    const stop = new AbortController();
    h.context.signal = stop.signal;
    h.context.createHttpClient = () => async () => {
      calls++;
      if (calls <= 2) throw new Error('connect ENETUNREACH 192.0.2.1:443');
      return { status: 200, body: JSON.stringify({ node: makeNode(), config: nodeConfigText() }) };
    };
    const stdout = h.context.stdout;
    h.context.stdout = {
      write: (text) => {
        stdout.write(text);
        // Stop the daemon once connected, as SIGTERM would.
        if (text.startsWith('Connected:')) stop.abort();
      },
    };
    expect(
      await runCli(
        ['connect', '--daemon', '--url', 'https://gw.example.com', '--token', token, '--config-dir', '/cfg'],
        h.context,
      ),
    ).toBe(0);
    expect(h.err()).toContain(
      'Cannot reach the gateway at https://gw.example.com: connect ENETUNREACH 192.0.2.1:443; retrying in 2 s\n',
    );
    expect(h.err()).toContain('retrying in 4 s\n');
    expect(h.out()).toContain('Connected: postern0');
    expect(h.out()).toMatch(/stopping: removing postern0\n$/);
  });

  it('brings up one peer per gateway and stores the gateway list for status', async () => {
    const server = await startAgentServer(() => ({
      status: 200,
      body: { node: makeNode(), config: multiGatewayConfigText(), gateways: GATEWAYS },
    }));
    try {
      const system = connectedSystem();
      const h = harness(system);
      expect(
        await runCli(['connect', '--url', server.url, '--token', makeToken(), '--config-dir', '/cfg'], h.context),
      ).toBe(0);
      expect(h.out()).toBe(
        'Connected: postern0 (wireguard-go) 10.8.0.2/32 via gw-a.example.com:51820 (and 2 more gateways)\n',
      );
      expect(system.peers.get('postern0')?.map((peer) => peer.publicKey)).toEqual(
        GATEWAYS.map((gateway) => gateway.publicKey),
      );
      expect(JSON.parse(system.files.get('/cfg/postern.json')?.text ?? '')).toMatchObject({ gateways: GATEWAYS });
    } finally {
      await server.close();
    }
  });

  it('asks for --url when nothing gives one', async () => {
    const h = harness(createFakeSystem());
    expect(await runCli(['connect', '--token', makeToken()], h.context)).toBe(2);
    expect(h.err()).toMatch(/^postern: No gateway URL: pass --url URL/);
  });
});

describe('postern connect: plain HTTP and certificates', () => {
  const configAnswer = {
    status: 200,
    body: { node: makeNode(), config: nodeConfigText(), tunnelHealthUrl: 'http://10.8.0.1:80/_postern/tunnel-health' },
  };
  const storedSettings = (system: ReturnType<typeof connectedSystem>) =>
    JSON.parse(system.files.get('/cfg/postern.json')?.text ?? 'null') as Record<string, unknown> | null;

  it('refuses a plain-HTTP URL to a public host before any request, and says how to go on', async () => {
    const system = connectedSystem();
    const h = harness(system);
    const requested: string[] = [];
    h.context.createHttpClient = () => async (request) => {
      requested.push(request.url);
      return { status: 500, body: '' };
    };
    expect(
      await runCli(
        ['connect', '--url', 'http://gw.example.com:3000', '--token', makeToken(), '--config-dir', '/cfg'],
        h.context,
      ),
    ).toBe(2);
    expect(h.err()).toMatch(/^postern: Refusing plain-HTTP gateway URL http:\/\/gw\.example\.com:3000: .*--insecure/);
    expect(requested).toEqual([]);
    expect(system.files.has('/cfg/postern.json')).toBe(false);
  });

  it('connects over plain HTTP to a public host with --insecure, and later commands keep that permission', async () => {
    const system = connectedSystem();
    const requested: string[] = [];
    const answering = () => async (request: { url: string }) => {
      requested.push(request.url);
      return request.url.endsWith('/api/agent/config')
        ? { status: 200, body: JSON.stringify(configAnswer.body) }
        : { status: 200, body: JSON.stringify({ data: [], page: 1, limit: 100, total: 0 }) };
    };
    const h = harness(system);
    h.context.createHttpClient = answering;
    expect(
      await runCli(
        [
          'connect',
          '--insecure',
          '--url',
          'http://gw.example.com:3000',
          '--token',
          makeToken(),
          '--config-dir',
          '/cfg',
        ],
        h.context,
      ),
    ).toBe(0);
    expect(storedSettings(system)).toMatchObject({ url: 'http://gw.example.com:3000', insecure: true });

    const later = harness(system, { configDir: '/cfg' });
    later.context.createHttpClient = answering;
    expect(await runCli(['services'], later.context)).toBe(0);
    expect(requested).toEqual([
      'http://gw.example.com:3000/api/agent/config',
      'http://gw.example.com:3000/api/agent/services/http?page=1&limit=100',
      'http://gw.example.com:3000/api/agent/services/tcp?page=1&limit=100',
    ]);
  });

  it('refuses a self-signed gateway without a pin, stores nothing and points at --pin', async () => {
    const server = await startAgentServer(() => configAnswer, await makeCertificate('gateway.test'));
    try {
      const system = connectedSystem();
      const h = harness(system);
      const token = makeToken();
      expect(await runCli(['connect', '--url', server.url, '--token', token, '--config-dir', '/cfg'], h.context)).toBe(
        1,
      );
      expect(h.err()).toMatch(
        /\npostern: The gateway's certificate at https:\/\/127\.0\.0\.1:\d+ is not trusted: it is self-signed .*--pin sha256:/,
      );
      expect(h.err()).not.toContain(token);
      expect(server.requests).toEqual([]);
      expect(system.files.has('/cfg/postern.json')).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('connects to a self-signed gateway with --pin, stores the pin, and later commands use it', async () => {
    const certificate = await makeCertificate('gateway.test');
    const server = await startAgentServer(
      (request) =>
        request.url.endsWith('/config')
          ? configAnswer
          : { status: 200, body: { data: [], page: 1, limit: 100, total: 0 } },
      certificate,
    );
    try {
      const system = connectedSystem();
      const token = makeToken();
      const h = harness(system);
      expect(
        await runCli(
          ['connect', '--url', server.url, '--token', token, '--pin', certificate.pin, '--config-dir', '/cfg'],
          h.context,
        ),
      ).toBe(0);
      expect(storedSettings(system)).toEqual({
        url: server.url,
        token,
        interface: 'postern0',
        pin: certificate.pin,
        tunnelHealthUrl: 'http://10.8.0.1:80/_postern/tunnel-health',
      });
      expect(h.err() + h.out()).not.toContain(token);

      const later = harness(system, { configDir: '/cfg' });
      expect(await runCli(['services'], later.context)).toBe(0);
      expect(server.requests.map((request) => request.url)).toEqual([
        '/api/agent/config',
        '/api/agent/services/http?page=1&limit=100',
        '/api/agent/services/tcp?page=1&limit=100',
      ]);

      // A stored pin belongs to the stored URL: a URL given by flag is verified on its own terms.
      const otherUrl = harness(system, { configDir: '/cfg' });
      expect(await runCli(['services', '--url', server.url], otherUrl.context)).toBe(1);
      expect(otherUrl.err()).toContain('is not trusted');
    } finally {
      await server.close();
    }
  });

  it('takes the pin from POSTERN_PIN, refuses a mismatch, and refuses a malformed one or one without TLS', async () => {
    const certificate = await makeCertificate('gateway.test');
    const server = await startAgentServer(
      () => ({ status: 200, body: { data: [], page: 1, limit: 100, total: 0 } }),
      certificate,
    );
    try {
      const token = makeToken();
      const fromEnv = harness(createFakeSystem(), { url: server.url, token, pin: certificate.pin });
      expect(await runCli(['services'], fromEnv.context)).toBe(0);

      const wrong = harness(createFakeSystem(), {
        url: server.url,
        token,
        pin: (await makeCertificate('other.test')).pin,
      });
      expect(await runCli(['services'], wrong.context)).toBe(1);
      expect(wrong.err()).toMatch(
        /^postern: The gateway at https:\/\/127\.0\.0\.1:\d+ presented a certificate with pin sha256:\S+, not the pinned sha256:\S+: nothing was sent\./,
      );
      expect(server.requests).toHaveLength(2);

      const malformed = harness(createFakeSystem(), { url: server.url, token, pin: 'sha256:nope' });
      expect(await runCli(['services'], malformed.context)).toBe(2);
      expect(malformed.err()).toMatch(/^postern: POSTERN_PIN: Invalid pin "sha256:nope"/);

      const plain = harness(createFakeSystem());
      expect(
        await runCli(
          ['services', '--url', 'http://127.0.0.1:9', '--token', token, '--pin', certificate.pin],
          plain.context,
        ),
      ).toBe(2);
      expect(plain.err()).toBe('postern: A certificate pin needs an https:// gateway URL, not http://127.0.0.1:9\n');
    } finally {
      await server.close();
    }
  });
});

describe('postern status', () => {
  it('reports a missing tunnel and fails --health without probing', async () => {
    const h = harness(connectedSystem(), { configDir: '/empty' });
    expect(await runCli(['status'], h.context)).toBe(0);
    expect(h.out()).toContain('Interface: postern0 (down)');
    expect(h.out()).toContain('Gateway:   not configured');
    const health = harness(connectedSystem(), { configDir: '/empty' });
    expect(await runCli(['status', '--health', '--json'], health.context)).toBe(1);
    expect(JSON.parse(health.out())).toMatchObject({ up: false, healthy: false });
  });
});

describe('postern expose / services / enable / rm', () => {
  it('checks the request like the gateway does before sending it', async () => {
    const h = harness(createFakeSystem(), { url: 'http://127.0.0.1:9', token: makeToken() });
    expect(
      await runCli(
        ['expose', 'http', 'web', '--port', '80', '--domain', 'app.example.com', '--allow', 'not-an-ip'],
        h.context,
      ),
    ).toBe(1);
    expect(h.err()).toBe(
      'postern: Validation failed:\n  allowedIps: This field must be a valid IPv4 address, optionally with a CIDR\n',
    );
    const reserved = harness(createFakeSystem(), { url: 'http://127.0.0.1:9', token: makeToken() });
    expect(
      await runCli(
        ['expose', 'http', 'web', '--port', '80', '--domain', 'app.example.com', '--path', '/_postern/x'],
        reserved.context,
      ),
    ).toBe(1);
    expect(reserved.err()).toContain(
      "pathLocation: This field must not be /_postern or a path below it: it is the gateway's internal path",
    );
  });

  it('asks for --domain before calling the gateway, with the guidance the gateway gives', async () => {
    for (const argv of [
      ['expose', 'http', 'web', '--port', '80'],
      ['expose', 'http', 'web', '--port', '80', '--path', '/shop'],
    ]) {
      const h = harness(createFakeSystem(), { url: 'http://127.0.0.1:9', token: makeToken() });
      expect(await runCli(argv, h.context)).toBe(2);
      expect(h.err()).toBe(`postern: ${ruleMessages.domainRequiredForNode}. Run "postern expose http --help".\n`);
    }
  });

  it("passes the gateway's refusals through: a domain that is not the node's, a disabled node", async () => {
    const server = await startAgentServer((request) =>
      request.url.includes('/tcp')
        ? {
            status: 403,
            body: {
              message:
                'This node is disabled: the gateway refuses its access tokens until an operator connects it again (Connect in the console)',
            },
          }
        : {
            status: 422,
            body: {
              message: 'Validation failed',
              errors: { body: [{ field: 'domain', message: ruleMessages.domainNotYours }] },
            },
          },
    );
    try {
      const env = { url: server.url, token: makeToken() };
      const notMine = harness(createFakeSystem(), env);
      expect(
        await runCli(['expose', 'http', 'web', '--port', '80', '--domain', 'theirs.example.com'], notMine.context),
      ).toBe(1);
      expect(notMine.err()).toBe(`postern: Validation failed:\n  domain: ${ruleMessages.domainNotYours}\n`);
      const disabled = harness(createFakeSystem(), env);
      expect(await runCli(['expose', 'tcp', 'ssh', '--port', '22'], disabled.context)).toBe(1);
      expect(disabled.err()).toMatch(/^postern: The gateway answered: This node is disabled: .* \(HTTP 403\)\n$/);
    } finally {
      await server.close();
    }
  });

  it("prints the gateway's 403 when the operator's decision stands: enable, rm and networks set", async () => {
    const refusals: Record<string, string> = {
      enable:
        "The gateway's operator disabled this service: only the operator can enable or delete it (in the console)",
      rm: "The gateway's operator created this service: only the operator can delete it (in the console); this node's token can disable it",
      networks:
        "The gateway's operator has not allowed this node's access tokens to set its networks: the operator sets them, or allows this, in the node's form in the console",
    };
    const server = await startAgentServer((request) => ({
      status: 403,
      body: {
        code: 'forbidden',
        message:
          request.method === 'DELETE'
            ? refusals.rm
            : request.url.includes('gateway-networks')
              ? refusals.networks
              : refusals.enable,
      },
    }));
    try {
      const env = { url: server.url, token: makeToken() };
      for (const [argv, message] of [
        [['enable', 'http', '3'], refusals.enable],
        [['rm', 'tcp', '4'], refusals.rm],
        [['networks', 'set', '10.23.0.0/24'], refusals.networks],
      ] as const) {
        const h = harness(createFakeSystem(), env);
        expect(await runCli([...argv], h.context), argv.join(' ')).toBe(1);
        expect(h.err()).toBe(`postern: The gateway answered: ${String(message)} (HTTP 403)\n`);
      }
    } finally {
      await server.close();
    }
  });

  it('sends the service and prints where it is published', async () => {
    const service = {
      id: 5,
      nodeId: 1,
      name: 'mqtt',
      domain: null,
      backendHost: '10.8.0.2',
      backendPort: 1883,
      allowedIps: [],
      blockedIps: ['10.1.0.0/16'],
      enabled: true,
      publicAccess: 'tcp://gw.example.com:31883',
      applyError: null,
      created_at: 'x',
      updated_at: 'x',
      proto: 'tcp',
      port: 31883,
      ssl: true,
    };
    const server = await startAgentServer((request) =>
      request.method === 'POST'
        ? { status: 201, body: service }
        : {
            status: 200,
            body: {
              data: request.url.includes('/tcp') ? [service] : [],
              page: 1,
              limit: 100,
              total: request.url.includes('/tcp') ? 1 : 0,
            },
          },
    );
    try {
      const env = { url: server.url, token: makeToken() };
      const expose = harness(createFakeSystem(), env);
      expect(
        await runCli(
          [
            ...['expose', 'tcp', 'mqtt', '--port', '1883', '--public-port', '31883'],
            ...['--tls', '--domain', 'mq.example.com', '--block', '10.1.0.0/16'],
          ],
          expose.context,
        ),
      ).toBe(0);
      expect(expose.out()).toBe('Exposed tcp service 5 "mqtt" at tcp://gw.example.com:31883\n');
      expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({
        name: 'mqtt',
        backendPort: 1883,
        proto: 'tcp',
        ssl: true,
        domain: 'mq.example.com',
        port: 31883,
        blockedIps: ['10.1.0.0/16'],
      });

      const list = harness(createFakeSystem(), env);
      expect(await runCli(['services'], list.context)).toBe(0);
      expect(list.out()).toBe(
        'TYPE  ID  NAME  BACKEND        PUBLIC                      STATE\n' +
          'tcp   5   mqtt  10.8.0.2:1883  tcp://gw.example.com:31883  enabled\n',
      );
      const disable = harness(createFakeSystem(), env);
      expect(await runCli(['disable', 'tcp', '5'], disable.context)).toBe(0);
      expect(disable.out()).toBe('Disabled tcp service 5\n');
      expect(server.requests.at(-1)).toMatchObject({ method: 'PATCH', url: '/api/agent/services/tcp/5/disable' });
    } finally {
      await server.close();
    }
  });
});

describe('postern expose --ttl', () => {
  it('sends the duration in seconds and prints when the exposure ends', async () => {
    const service = {
      id: 7,
      nodeId: 1,
      name: 'demo',
      domain: 'demo.example.com',
      backendHost: '10.8.0.2',
      backendPort: 3000,
      allowedIps: [],
      blockedIps: [],
      enabled: true,
      publicAccess: 'https://demo.example.com/',
      applyError: null,
      expiresAt: '2030-01-01T01:00:00.000Z',
      created_at: 'x',
      updated_at: 'x',
      pathLocation: '/',
      backendProto: 'http',
      ssl: 'self-signed',
    };
    const server = await startAgentServer(() => ({ status: 201, body: service }));
    try {
      const env = { url: server.url, token: makeToken() };
      const http = harness(createFakeSystem(), env);
      expect(
        await runCli(
          ['expose', 'http', 'demo', '--port', '3000', '--domain', 'demo.example.com', '--ttl', '1h'],
          http.context,
        ),
      ).toBe(0);
      expect(http.out()).toBe(
        'Exposed http service 7 "demo" at https://demo.example.com/ until 2030-01-01T01:00:00.000Z\n',
      );
      expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({
        name: 'demo',
        backendPort: 3000,
        domain: 'demo.example.com',
        ttl: 3600,
      });

      const tcp = harness(createFakeSystem(), env);
      await runCli(['expose', 'tcp', 'ssh', '--port', '22', '--ttl', '90m'], tcp.context);
      expect(JSON.parse(server.requests[1]?.body ?? '')).toMatchObject({ name: 'ssh', ttl: 5400 });

      for (const bad of ['1x', '30s', '0', 'soon']) {
        const h = harness(createFakeSystem(), env);
        expect(await runCli(['expose', 'tcp', 'ssh', '--port', '22', '--ttl', bad], h.context)).toBe(2);
        expect(h.err()).toContain('--ttl must be a duration such as 30m, 1h or 7d');
      }
      expect(server.requests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});

describe('postern --help / --version', () => {
  it('prints help for a command and the version', async () => {
    const help = harness(createFakeSystem());
    expect(await runCli(['expose', 'tcp', '--help'], help.context)).toBe(0);
    expect(help.out()).toContain('Usage: postern expose tcp NAME --port P');
    const version = harness(createFakeSystem());
    expect(await runCli(['--version'], version.context)).toBe(0);
    expect(version.out()).toMatch(/^postern \d+\.\d+\.\d+\n$/);
  });
});

describe('postern networks', () => {
  it('shows the subnets of a gateway node and replaces them, checking them before asking', async () => {
    const token = makeToken();
    const networks = ['192.168.1.0/24', '10.20.0.0/24'];
    const server = await startAgentServer((request) => ({
      status: 200,
      body: makeNode({
        isGateway: true,
        gatewayNetwork: '192.168.1.0/24',
        gatewayNetworks: request.method === 'PATCH' ? networks : ['192.168.1.0/24'],
      }),
    }));
    try {
      const shown = harness(createFakeSystem(), { url: server.url, token });
      expect(await runCli(['networks'], shown.context)).toBe(0);
      expect(shown.out()).toBe('192.168.1.0/24\n');
      const set = harness(createFakeSystem(), { url: server.url, token });
      expect(await runCli(['networks', 'set', ...networks], set.context)).toBe(0);
      expect(set.out()).toBe('This node now routes:\n192.168.1.0/24\n10.20.0.0/24\n');
      expect(server.requests.at(-1)).toMatchObject({ method: 'PATCH', url: '/api/agent/node/gateway-networks' });
      expect(JSON.parse(server.requests.at(-1)?.body ?? '')).toEqual({ gatewayNetworks: networks });
      const typo = harness(createFakeSystem(), { url: server.url, token });
      expect(await runCli(['networks', 'set', '192.168.1.5/24'], typo.context)).toBe(1);
      expect(typo.err()).toContain('has host bits set');
      expect(server.requests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});
