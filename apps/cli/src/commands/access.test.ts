import { accessMessages, type AccessPolicy, type ServiceAccess } from '@postern/contract';
import { describe, expect, it } from 'vitest';
import { harness } from '../cli-harness.js';
import { createFakeSystem } from '../fake-system.js';
import { makeToken, startAgentServer, type RecordedRequest } from '../fixtures.js';
import { runCli } from '../run.js';

// `postern expose http … --auth …`, `postern access` and `postern share`, against a local server that answers like
// the gateway's agent API (the real rules, "only stricter", are the gateway's: apps/server tests them).

const service = {
  id: 7,
  nodeId: 1,
  name: 'grafana',
  domain: 'grafana.example.com',
  backendHost: '10.8.0.2',
  backendPort: 3000,
  allowedIps: [],
  blockedIps: [],
  enabled: false,
  publicAccess: 'https://grafana.example.com/',
  applyError: null,
  created_at: 'x',
  updated_at: 'x',
  pathLocation: '/',
  backendProto: 'http',
  ssl: 'self-signed',
};

const policy = (overrides: Partial<AccessPolicy> = {}): AccessPolicy => ({
  mode: 'protected',
  providerId: null,
  providerName: null,
  allowEmails: [],
  allowEmailDomains: [],
  allowGroups: [],
  passwordSet: false,
  shareLinks: false,
  bypassPaths: [],
  bypassNetworks: [],
  sessionSeconds: 86_400,
  ...overrides,
});

const access = (overrides: Partial<ServiceAccess> = {}): ServiceAccess => ({
  serviceId: 7,
  nodeId: 1,
  domain: 'grafana.example.com',
  mode: 'protected',
  own: policy({ shareLinks: true, passwordSet: true }),
  setBy: 'node',
  domainPolicy: policy({ mode: 'public' }),
  effective: { ...policy({ shareLinks: true, passwordSet: true }), source: 'service' },
  ...overrides,
});

const steps = (requests: RecordedRequest[]) => requests.map((request) => `${request.method} ${request.url}`);
const bodyOf = (request: RecordedRequest | undefined): unknown => JSON.parse(request?.body ?? 'null');

describe('postern expose http --auth', () => {
  it('creates the service disabled, sets its policy, then enables it; the password comes from a file', async () => {
    const server = await startAgentServer((request) => {
      if (request.method === 'POST') return { status: 201, body: service };
      if (request.url.endsWith('/access')) return { status: 200, body: access() };
      return { status: 200, body: { ...service, enabled: true } };
    });
    try {
      const system = createFakeSystem();
      system.files.set('/run/secrets/pin', { text: '482916\n', mode: 0o600 });
      const h = harness(system, { url: server.url, token: makeToken() });
      const argv = ['expose', 'http', 'grafana', '--port', '3000', '--domain', 'grafana.example.com'];
      const auth = [
        '--share-links',
        '--password-file',
        '/run/secrets/pin',
        '--bypass-path',
        '/hook',
        '--session',
        '8h',
      ];
      expect(await runCli([...argv, ...auth], h.context)).toBe(0);

      expect(steps(server.requests)).toEqual([
        'POST /api/agent/services/http',
        'PATCH /api/agent/services/http/7/access',
        'PATCH /api/agent/services/http/7/enable',
      ]);
      expect(bodyOf(server.requests[0])).toMatchObject({ name: 'grafana', enabled: false });
      expect(bodyOf(server.requests[1])).toEqual({
        mode: 'protected',
        providerId: null,
        allowEmails: [],
        allowEmailDomains: [],
        allowGroups: [],
        password: '482916',
        shareLinks: true,
        bypassPaths: ['/hook'],
        bypassNetworks: [],
        sessionSeconds: 28_800,
      });
      expect(h.out()).toBe(
        'Exposed http service 7 "grafana" at https://grafana.example.com/ (protected: password, share links)\n',
      );
      expect(h.out() + h.err()).not.toContain('482916');
    } finally {
      await server.close();
    }
  });

  it("lets an allow list sign in through the domain policy's provider", async () => {
    const domainPolicy = policy({ providerId: 3, providerName: 'Company SSO', allowEmailDomains: ['example.com'] });
    const server = await startAgentServer((request) => {
      if (request.method === 'POST') return { status: 201, body: service };
      if (request.url.endsWith('/access'))
        return {
          status: 200,
          body: access({
            mode: 'inherit',
            own: null,
            setBy: null,
            domainPolicy,
            effective: { ...domainPolicy, source: 'domain' },
          }),
        };
      return { status: 200, body: { ...service, enabled: true } };
    });
    try {
      const h = harness(createFakeSystem(), { url: server.url, token: makeToken() });
      const argv = ['expose', 'http', 'grafana', '--port', '3000', '--domain', 'grafana.example.com'];
      expect(await runCli([...argv, '--allow-email', 'Alice@Example.com,bob@example.com'], h.context)).toBe(0);
      expect(steps(server.requests)).toEqual([
        'POST /api/agent/services/http',
        'GET /api/agent/services/http/7/access',
        'PATCH /api/agent/services/http/7/access',
        'PATCH /api/agent/services/http/7/enable',
      ]);
      expect(bodyOf(server.requests[2])).toMatchObject({
        providerId: 3,
        allowEmails: ['alice@example.com', 'bob@example.com'],
      });
    } finally {
      await server.close();
    }
  });

  it("prints the gateway's refusal by option and deletes the new service again: nothing is published", async () => {
    const server = await startAgentServer((request) => {
      if (request.method === 'POST') return { status: 201, body: service };
      if (request.method === 'DELETE') return { status: 204 };
      if (request.url.endsWith('/access'))
        return {
          status: 422,
          body: {
            message: 'Validation failed',
            errors: {
              body: [
                {
                  field: 'password',
                  message: "A password of your own would let in people the domain's access policy does not",
                },
              ],
            },
          },
        };
      return { status: 500 };
    });
    try {
      const system = createFakeSystem();
      system.files.set('/pin', { text: 'hunter22', mode: 0o600 });
      const h = harness(system, { url: server.url, token: makeToken() });
      const argv = ['expose', 'http', 'grafana', '--port', '3000', '--domain', 'grafana.example.com'];
      expect(await runCli([...argv, '--password-file', '/pin'], h.context)).toBe(1);
      expect(h.err()).toBe(
        'postern: The gateway refused the access policy of http service 7:\n' +
          "  --password-file: A password of your own would let in people the domain's access policy does not\n" +
          "A node's token may only make a service stricter than its domain's policy, and cannot change a policy the gateway's operator set.\n" +
          'Nothing was published: the new service was deleted again.\n',
      );
      expect(steps(server.requests)).toEqual([
        'POST /api/agent/services/http',
        'PATCH /api/agent/services/http/7/access',
        'DELETE /api/agent/services/http/7',
      ]);
      expect(h.out()).toBe('');
    } finally {
      await server.close();
    }
  });

  it('checks the policy before any request: bad entries, contradictions, a missing password file', async () => {
    const env = { url: 'http://127.0.0.1:9', token: makeToken() };
    const argv = ['expose', 'http', 'web', '--port', '80', '--domain', 'app.example.com'];
    const cases: [string[], number, string][] = [
      [
        ['--allow-email', 'bob@'],
        1,
        'postern: Validation failed:\n  --allow-email: This field must be a valid email\n',
      ],
      [['--bypass-network', '10.0.0.5/8'], 1, '--bypass-network: '],
      [['--auth', 'public', '--share-links'], 2, '--auth public takes no other access option'],
      [['--auth', 'sometimes'], 2, '--auth must be public, protected or inherit'],
      [['--session', '1m'], 2, '--session must be a duration such as 30m, 12h or 7d'],
      [['--password-file', '/nope'], 2, 'Cannot read the password file /nope: it does not exist'],
      [['--password-file', '/p', '--no-password'], 2, 'contradict each other'],
      [['--sso-provider', 'google'], 2, '--sso-provider must be the numeric ID'],
    ];
    for (const [flags, code, message] of cases) {
      const h = harness(createFakeSystem(), env);
      expect(await runCli([...argv, ...flags], h.context), flags.join(' ')).toBe(code);
      expect(h.err()).toContain(message);
    }
  });

  it("asks for --sso-provider when the domain's policy has no provider, and publishes nothing", async () => {
    const server = await startAgentServer((request) => {
      if (request.method === 'POST') return { status: 201, body: service };
      if (request.method === 'DELETE') return { status: 204 };
      return { status: 200, body: access({ mode: 'inherit', own: null, setBy: null }) };
    });
    try {
      const h = harness(createFakeSystem(), { url: server.url, token: makeToken() });
      const argv = ['expose', 'http', 'grafana', '--port', '3000', '--domain', 'grafana.example.com'];
      expect(await runCli([...argv, '--allow-group', 'ops'], h.context)).toBe(2);
      expect(h.err()).toContain("the domain's access policy names none: pass --sso-provider ID");
      expect(h.err()).toContain('Nothing was published');
      expect(steps(server.requests).at(-1)).toBe('DELETE /api/agent/services/http/7');
    } finally {
      await server.close();
    }
  });
});

describe('postern access', () => {
  it("shows the policy applied, where it comes from, and the service's own", async () => {
    const server = await startAgentServer(() => ({ status: 200, body: access({ setBy: 'admin' }) }));
    try {
      const h = harness(createFakeSystem(), { url: server.url, token: makeToken() });
      expect(await runCli(['access', '7'], h.context)).toBe(0);
      expect(h.out()).toBe(
        [
          'Service 7 on grafana.example.com',
          "Applied (the service's own policy):",
          '  protected:',
          '    password        set',
          '    share links     allowed',
          '    sessions        1d',
          "Own policy (set by the gateway's operator):",
          '  protected:',
          '    password        set',
          '    share links     allowed',
          '    sessions        1d',
          '',
        ].join('\n'),
      );
    } finally {
      await server.close();
    }
  });

  it("drops the service's own policy with --auth inherit; the operator's is refused with the reason", async () => {
    const server = await startAgentServer(() => ({
      status: 422,
      body: {
        message: 'Validation failed',
        errors: { body: [{ field: 'mode', message: accessMessages.setByOperator }] },
      },
    }));
    try {
      const h = harness(createFakeSystem(), { url: server.url, token: makeToken() });
      expect(await runCli(['access', '7', '--auth', 'inherit'], h.context)).toBe(1);
      expect(bodyOf(server.requests[0])).toEqual({ mode: 'inherit' });
      expect(h.err()).toContain(`  --auth: ${accessMessages.setByOperator}\n`);
    } finally {
      await server.close();
    }
  });
});

describe('postern share', () => {
  it('creates a link (its URL printed once), lists and revokes links', async () => {
    const link = {
      id: 4,
      serviceId: 7,
      name: 'for-bob',
      pathPrefix: '/dashboards',
      expiresAt: '2030-01-08T00:00:00.000Z',
      revoked: false,
      lastUsedAt: null,
      uses: 2,
      created_at: 'x',
    };
    const url = 'https://grafana.example.com/_postern/access/share?token=abc';
    const server = await startAgentServer((request) => {
      if (request.method === 'POST') return { status: 201, body: { ...link, url } };
      if (request.method === 'PATCH') return { status: 200, body: { ...link, revoked: true } };
      return {
        status: 200,
        body: {
          data: [link, { ...link, id: 3, name: 'old', revoked: true, pathPrefix: null }],
          page: 1,
          limit: 100,
          total: 2,
        },
      };
    });
    try {
      const env = { url: server.url, token: makeToken() };
      const create = harness(createFakeSystem(), env);
      expect(
        await runCli(['share', 'create', '7', 'for-bob', '--path', '/dashboards', '--ttl', '7d'], create.context),
      ).toBe(0);
      expect(bodyOf(server.requests[0])).toEqual({ name: 'for-bob', pathPrefix: '/dashboards', ttl: 604_800 });
      expect(create.out()).toBe(
        `Share link 4 "for-bob" of http service 7 (below /dashboards), until 2030-01-08T00:00:00.000Z:\n${url}\n`,
      );
      expect(create.err()).toBe('The link is shown only this once: store it securely.\n');

      const list = harness(createFakeSystem(), env);
      expect(await runCli(['share', 'list', '7'], list.context)).toBe(0);
      expect(list.out()).toBe(
        'ID  NAME     BELOW        EXPIRES                   STATE    USES\n' +
          '4   for-bob  /dashboards  2030-01-08T00:00:00.000Z  active   2\n' +
          '3   old      (all)        2030-01-08T00:00:00.000Z  revoked  2\n',
      );
      expect(list.out()).not.toContain('token=');

      const revoke = harness(createFakeSystem(), env);
      expect(await runCli(['share', 'revoke', '7', '4'], revoke.context)).toBe(0);
      expect(revoke.out()).toBe('Revoked share link 4 of http service 7\n');
      expect(steps(server.requests).at(-1)).toBe('PATCH /api/agent/services/http/7/share-links/4/revoke');

      const bad = harness(createFakeSystem(), env);
      expect(await runCli(['share', 'revoke', '7'], bad.context)).toBe(2);
      expect(bad.err()).toContain('expected the numeric ID of the link');
    } finally {
      await server.close();
    }
  });

  it('passes the refusal of a policy without share links through', async () => {
    const server = await startAgentServer(() => ({ status: 400, body: { message: accessMessages.shareLinksOff } }));
    try {
      const h = harness(createFakeSystem(), { url: server.url, token: makeToken() });
      expect(await runCli(['share', 'create', '7', 'x'], h.context)).toBe(1);
      expect(h.err()).toBe(`postern: The gateway answered: ${accessMessages.shareLinksOff} (HTTP 400)\n`);
    } finally {
      await server.close();
    }
  });

  it('documents the access options and the share commands in --help', async () => {
    for (const [argv, text] of [
      [['expose', 'http', '--help'], '--password-file FILE'],
      [['access', '--help'], 'Usage: postern access ID'],
      [['share', '--help'], 'postern share create ID NAME'],
      [['--help'], 'share         share links of an HTTP service'],
    ] as const) {
      const h = harness(createFakeSystem());
      expect(await runCli([...argv], h.context)).toBe(0);
      expect(h.out()).toContain(text);
    }
  });
});
