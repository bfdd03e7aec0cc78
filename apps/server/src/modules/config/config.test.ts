import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type {
  ConfigApplyResult,
  ConfigDocument,
  ConfigDocumentInput,
  ConfigPlan,
  HttpService,
  NodeCreated,
} from '@postern/contract';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { createApiClient } from '../services/test-support.js';

// Configuration as code through the API (docs/CONFIG-AS-CODE.md): export → apply on an empty gateway → export gives
// the same document; applying twice changes nothing the second time; a plan against a changed gateway lists exactly
// the differences; secrets never leave; a document with errors changes nothing.

type Api = ReturnType<typeof createApiClient>;

let source: TestApp;
let target: TestApp;
let sourceApi: Api;
let targetApi: Api;
let exported: ConfigDocument;
const password = 'a-policy-password';

async function furnish(api: Api, t: TestApp): Promise<{ labelled: HttpService }> {
  const ok = <T>(answer: { status: number; body: T }, status = 200): T => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    return answer.body;
  };
  ok(
    await api('POST', '/api/access/providers', {
      name: 'Keycloak',
      issuer: 'https://sso.example.test/realms/main',
      clientId: 'postern',
      clientSecret: 'not-to-be-exported',
      groupsClaim: 'groups',
    }),
    201,
  );
  const home = ok(await api<NodeCreated>('POST', '/api/nodes', { name: 'home' }), 201);
  ok(await api('POST', `/api/nodes/${home.id}/pats`, { name: 'ci', expireAt: '2027-01-01T00:00:00.000Z' }), 201);
  const old = ok(await api<{ id: number }>('POST', `/api/nodes/${home.id}/pats`, { name: 'old' }), 201);
  ok(await api('PATCH', `/api/nodes/${home.id}/pats/${old.id}/revoke`));
  const lan = ok(
    await api<NodeCreated>('POST', '/api/nodes', {
      name: 'lan',
      isGateway: true,
      gatewayNetwork: '192.168.50.0/24',
      allowTokenNetworks: true,
    }),
    201,
  );
  ok(await api(`PATCH`, `/api/nodes/${lan.id}/disable`));
  const app = ok(
    await api<{ id: number }>('POST', '/api/domains', { domain: 'app.example.test', ownerNodeId: home.id }),
    201,
  );
  ok(
    await api('PATCH', `/api/domains/${app.id}/access`, {
      mode: 'protected',
      providerId: 1,
      allowEmailDomains: ['example.test'],
      password,
    }),
  );
  ok(await api('POST', '/api/domains', { domain: 'plain.example.test' }), 201);
  const web = ok(
    await api<HttpService>('POST', `/api/services/${home.id}/http`, {
      name: 'web',
      domain: 'app.example.test',
      backendPort: 8080,
      allowedIps: ['10.1.0.0/16'],
    }),
    201,
  );
  ok(
    await api('PATCH', `/api/services/${home.id}/http/${web.id}/access`, {
      mode: 'protected',
      shareLinks: true,
      sessionSeconds: 3600,
    }),
  );
  ok(
    await api('POST', `/api/services/${home.id}/http`, {
      name: 'api',
      domain: 'app.example.test',
      pathLocation: '/api',
      backendProto: 'https',
      backendPort: 8443,
    }),
    201,
  );
  ok(
    await api('POST', `/api/services/${lan.id}/http`, {
      name: 'printer',
      domain: 'plain.example.test',
      backendHost: '192.168.50.7',
      backendPort: 631,
    }),
    201,
  );
  const mqtt = ok(
    await api<{ id: number }>('POST', `/api/services/${home.id}/tcp`, { name: 'mqtt', port: 30001, backendPort: 1883 }),
    201,
  );
  ok(await api('PATCH', `/api/services/${home.id}/tcp/${mqtt.id}/disable`));
  ok(
    await api('POST', `/api/services/${lan.id}/tcp`, {
      name: 'dns',
      proto: 'udp',
      port: 30002,
      backendHost: '192.168.50.1',
      backendPort: 53,
    }),
    201,
  );
  // A service a node's Docker labels made, through the node's token: the labels are its configuration.
  const labelled = await t.app.inject({
    method: 'POST',
    url: '/api/agent/services/http',
    headers: { authorization: `Bearer ${home.token}` },
    payload: {
      name: 'whoami',
      domain: 'app.example.test',
      pathLocation: '/whoami',
      backendPort: 41000,
      source: { kind: 'docker-labels', container: 'whoami-1', key: 'http', digest: 'a'.repeat(64) },
    },
  });
  expect(labelled.statusCode, labelled.body).toBe(201);
  return { labelled: labelled.json<HttpService>() };
}

beforeAll(async () => {
  source = await buildTestApp();
  target = await buildTestApp();
  sourceApi = createApiClient(source, await source.login());
  targetApi = createApiClient(target, await target.login());
  await furnish(sourceApi, source);
  exported = (await sourceApi<ConfigDocument>('GET', '/api/config/export')).body;
  // Two gateways and a furnished one: on PostgreSQL under load, longer than a hook's default 10 s.
}, 60_000);
afterAll(async () => {
  await source.cleanup();
  await target.cleanup();
});

describe('export', () => {
  test('describes nodes, tokens, domains, services and policies by name, without a secret', () => {
    const text = JSON.stringify(exported);
    for (const secret of [password, 'not-to-be-exported', 'pstn_', 'privateKey', 'tokenHash', 'Hash'])
      expect(text).not.toContain(secret);
    const home = exported.nodes.find((node) => node.name === 'home');
    expect(home?.tokens).toEqual([
      { name: 'ci', expireAt: '2027-01-01T00:00:00.000Z', revoked: false },
      { name: 'default', expireAt: null, revoked: false },
      { name: 'old', expireAt: null, revoked: true },
    ]);
    expect(home?.http.map((service) => `${service.domain ?? ''}${service.path}`)).toEqual([
      'app.example.test/',
      'app.example.test/api',
    ]);
    expect(home?.http[0]?.access).toMatchObject({ mode: 'protected', shareLinks: true, sessionSeconds: 3600 });
    expect(exported.domains.find((domain) => domain.domain === 'app.example.test')).toMatchObject({
      owner: 'home',
      access: { mode: 'protected', provider: 'Keycloak', allowEmailDomains: ['example.test'], passwordSet: true },
    });
    expect(exported.identityProviders).toEqual([expect.objectContaining({ name: 'Keycloak', clientSecretSet: true })]);
    // The service the labels made is the labels' business.
    expect(text).not.toContain('whoami');
  });

  test('is the same document every time', async () => {
    expect((await sourceApi<ConfigDocument>('GET', '/api/config/export')).body).toEqual(exported);
  });
});

describe('apply on an empty gateway', () => {
  let result: ConfigApplyResult;

  beforeAll(async () => {
    const answer = await targetApi<ConfigApplyResult>('POST', '/api/config/apply', { document: exported });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    result = answer.body;
  });

  test('creates every object, shows each new token once, and says what a document cannot carry', () => {
    expect(result.plan.errors).toEqual([]);
    expect(result.plan.changes.filter((change) => change.action !== 'create')).toEqual([]);
    expect(result.tokens.map(({ node, name }) => `${node}/${name}`).sort()).toEqual([
      'home/ci',
      'home/default',
      'lan/default',
    ]);
    for (const { token } of result.tokens) expect(token).toMatch(/^pstn_/);
    expect(result.plan.notes.join('\n')).toContain('a password cannot come from a document');
    expect(result.plan.notes.join('\n')).toContain('a client secret cannot come from a document');
  });

  test('then exports the same document, but for the secrets it could not set', async () => {
    const again = (await targetApi<ConfigDocument>('GET', '/api/config/export')).body;
    const withoutSecrets = structuredClone(exported);
    for (const provider of withoutSecrets.identityProviders) provider.clientSecretSet = false;
    for (const domain of withoutSecrets.domains) if (domain.access) domain.access.passwordSet = false;
    // A revoked token cannot be created: it is left out (the plan said so).
    for (const node of withoutSecrets.nodes) node.tokens = node.tokens.filter((token) => !token.revoked);
    expect(again).toEqual(withoutSecrets);
  });

  test('a second apply changes nothing', async () => {
    const second = await targetApi<ConfigApplyResult>('POST', '/api/config/apply', { document: exported });
    expect(second.status).toBe(200);
    expect(second.body.plan.changes).toEqual([]);
    expect(second.body.applied).toBe(0);
    expect(second.body.tokens).toEqual([]);
  });
});

describe('a plan against a changed gateway', () => {
  test('lists exactly the differences; --prune adds what the document does not name', async () => {
    const state = (await targetApi<ConfigDocument>('GET', '/api/config/export')).body;
    const document = structuredClone(state);
    const home = document.nodes.find((node) => node.name === 'home');
    if (!home?.http[1]) throw new Error('fixture');
    home.http[1].backendPort = 9443;
    home.http[1].allowedIps = ['10.2.0.0/16'];
    home.tcp = home.tcp.map((service) => ({ ...service, enabled: true }));
    document.domains = document.domains.filter((domain) => domain.domain !== 'plain.example.test');
    document.domains.push({ domain: 'new.example.test', ssl: 'self-signed', owner: null, access: null });
    const lan = document.nodes.find((node) => node.name === 'lan');
    if (!lan) throw new Error('fixture');
    lan.http = [];
    const plan = (await targetApi<ConfigPlan>('POST', '/api/config/plan', { document })).body;
    expect(plan.errors).toEqual([]);
    expect(plan.changes).toEqual([
      { action: 'create', kind: 'domain', name: 'new.example.test', fields: [] },
      {
        action: 'update',
        kind: 'httpService',
        name: 'app.example.test/api',
        fields: [
          { field: 'backendPort', before: 8443, after: 9443 },
          { field: 'allowedIps', before: [], after: ['10.2.0.0/16'] },
        ],
      },
      {
        action: 'update',
        kind: 'tcpService',
        name: 'tcp/30001',
        fields: [{ field: 'enabled', before: false, after: true }],
      },
    ]);
    const pruned = (await targetApi<ConfigPlan>('POST', '/api/config/plan', { document, prune: true })).body;
    expect(pruned.changes.filter((change) => change.action === 'delete')).toEqual([
      { action: 'delete', kind: 'domain', name: 'plain.example.test', fields: [] },
      { action: 'delete', kind: 'httpService', name: 'plain.example.test/', fields: [] },
    ]);
  });

  test('a document with an error changes nothing and says where', async () => {
    const document: ConfigDocumentInput = {
      version: 1,
      nodes: [{ name: 'fresh', http: [{ name: 'x', domain: 'x.example.test', backendPort: 80 }] }],
      domains: [
        { domain: 'x.example.test', owner: 'nobody', access: { mode: 'protected', allowEmails: ['not-mail'] } },
      ],
    };
    const before = (await targetApi<ConfigDocument>('GET', '/api/config/export')).body;
    const answer = await targetApi<{ errors: { body: { field: string; message: string }[] } }>(
      'POST',
      '/api/config/apply',
      { document },
    );
    expect(answer.status).toBe(422);
    expect(answer.body.errors.body).toEqual(
      expect.arrayContaining([
        {
          field: 'domains.0.owner',
          message: 'No node is named nobody',
          code: 'no_node_named',
          params: { name: 'nobody' },
        },
        expect.objectContaining({ field: 'domains.0.access.allowEmails.0' }),
      ]),
    );
    expect((await targetApi<ConfigDocument>('GET', '/api/config/export')).body).toEqual(before);
  });

  test('a service the labels made cannot be taken over by a document', async () => {
    const document: ConfigDocumentInput = {
      version: 1,
      nodes: [{ name: 'home', http: [{ name: 'mine', domain: 'app.example.test', path: '/whoami', backendPort: 1 }] }],
    };
    const plan = (await sourceApi<ConfigPlan>('POST', '/api/config/plan', { document })).body;
    expect(plan.errors).toEqual([
      {
        path: 'nodes.home.http.0',
        message:
          'app.example.test/whoami is published by the Docker labels of container whoami-1 on node home: change the labels instead',
      },
    ]);
  });
});
