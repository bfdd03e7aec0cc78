import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ruleMessages, type HttpService, type ListResponse } from '@postern/contract';
import { httpServices } from '../../db/schema.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { createApiClient, fieldMessage, insertNode } from './test-support.js';

// API tests for HTTP services: POST/GET/PATCH /api/services/:nodeId/http… and GET /api/services/http.

let t: TestApp;
let api: ReturnType<typeof createApiClient>;

beforeEach(async () => {
  t = await buildTestApp();
  api = createApiClient(t, await t.login());
});
afterEach(async () => {
  await t.cleanup();
});

const web = { name: 'web', domain: 'app.example.com', pathLocation: '/api', backendPort: 8080 };

describe('creating an HTTP service', () => {
  test('enabled: false creates it disabled: stored, not served until it is enabled', async () => {
    const node = await insertNode(t.deps);
    const { status, body } = await api<HttpService>('POST', `/api/services/${node.id}/http`, {
      ...web,
      enabled: false,
    });
    expect(status).toBe(201);
    expect(body.enabled).toBe(false);
    expect(t.fakeDataPlane.lastState?.http ?? []).not.toContainEqual(expect.objectContaining({ serviceId: body.id }));
    await api('PATCH', `/api/services/${node.id}/http/${body.id}/enable`);
    expect(t.fakeDataPlane.lastState?.http).toContainEqual(expect.objectContaining({ serviceId: body.id }));
  });

  test('stores every field it is given, as a fresh read and the stored row show them', async () => {
    const node = await insertNode(t.deps);
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const { status, body } = await api<HttpService>('POST', `/api/services/${node.id}/http`, {
      ...web,
      backendProto: 'https',
      allowedIps: ['10.0.0.0/8', '192.0.2.1'],
      blockedIps: ['10.1.0.0/16'],
      expiresAt,
      enabled: false,
    });
    expect(status).toBe(201);
    expect(body).toMatchObject({
      backendProto: 'https',
      allowedIps: ['10.0.0.0/8', '192.0.2.1'],
      blockedIps: ['10.1.0.0/16'],
      enabled: false,
    });
    expect(Date.parse(body.expiresAt ?? '')).toBe(Date.parse(expiresAt));
    expect((await api<HttpService>('GET', `/api/services/${node.id}/http/${body.id}`)).body).toEqual(body);
    const row = await t.db.select().from(httpServices).where(eq(httpServices.id, body.id)).get();
    expect(row).toMatchObject({ createdBy: 'admin', disabledBy: 'admin', expirySetBy: 'admin', source: null });
    // An edit writes the fields it was sent, and only those.
    const edit = { name: 'web2', allowedIps: ['172.16.0.0/12'], expiresAt: null };
    expect((await api('PATCH', `/api/services/${node.id}/http/${body.id}`, edit)).status).toBe(200);
    const edited = (await api<HttpService>('GET', `/api/services/${node.id}/http/${body.id}`)).body;
    expect({ ...edited, updated_at: null }).toEqual({ ...body, ...edit, expirySetBy: null, updated_at: null });
    const twice = { backendPort: 9443 };
    expect((await api('PATCH', `/api/services/${node.id}/http/${body.id}`, twice)).status).toBe(200);
    expect((await api<HttpService>('GET', `/api/services/${node.id}/http/${body.id}`)).body).toMatchObject({
      ...edit,
      ...twice,
      blockedIps: ['10.1.0.0/16'],
    });
  });

  test('answers 401 without a session token', async () => {
    const node = await insertNode(t.deps);
    const response = await t.app.inject({ method: 'POST', url: `/api/services/${node.id}/http`, payload: web });
    expect(response.statusCode).toBe(401);
  });

  test('exposes a regular node on its tunnel address and publishes the route', async () => {
    const node = await insertNode(t.deps);
    const before = t.fakeDataPlane.applyCount;
    const { status, body } = await api<HttpService>('POST', `/api/services/${node.id}/http`, {
      ...web,
      backendHost: '192.0.2.7',
    });
    expect(status).toBe(201);
    expect(body).toMatchObject({
      nodeId: node.id,
      name: 'web',
      domain: 'app.example.com',
      pathLocation: '/api',
      backendProto: 'http',
      backendHost: node.address,
      backendPort: 8080,
      enabled: true,
      ssl: 'self-signed',
      publicAccess: 'https://app.example.com/api',
      applyError: null,
    });
    expect(t.fakeDataPlane.applyCount).toBeGreaterThan(before);
    expect(t.fakeDataPlane.lastState?.http).toContainEqual(
      expect.objectContaining({
        serviceId: body.id,
        domain: 'app.example.com',
        backendHost: node.address,
        backendPort: 8080,
      }),
    );
  });

  test('creates the domain it names when it does not exist yet', async () => {
    const node = await insertNode(t.deps);
    await api('POST', `/api/services/${node.id}/http`, web);
    const domains = await api<ListResponse<{ domain: string; ssl: string }>>('GET', '/api/domains');
    expect(domains.body.data).toEqual([expect.objectContaining({ domain: 'app.example.com', ssl: 'self-signed' })]);
  });

  test("takes its ssl mode from the domain's certificate mode", async () => {
    const node = await insertNode(t.deps);
    await api('POST', '/api/domains', { domain: 'secure.example.com', ssl: 'certbot' });
    const { body } = await api<HttpService>('POST', `/api/services/${node.id}/http`, {
      ...web,
      domain: 'secure.example.com',
    });
    expect(body.ssl).toBe('certbot');
  });

  test("serves a path-only service on the public host's no-domain port, another origin than the console's", async () => {
    const node = await insertNode(t.deps);
    const { status, body } = await api<HttpService>('POST', `/api/services/${node.id}/http`, {
      name: 'app',
      pathLocation: '/app',
    });
    expect(status).toBe(201);
    expect(body).toMatchObject({ domain: null, ssl: 'self-signed', publicAccess: 'https://gateway.test:8443/app' });

    await t.cleanup();
    t = await buildTestApp({ env: { POSTERN_NO_DOMAIN_HTTPS_PORT: '9443' } });
    api = createApiClient(t, await t.login());
    const other = await insertNode(t.deps);
    const moved = await api<HttpService>('POST', `/api/services/${other.id}/http`, {
      name: 'app',
      pathLocation: '/app',
    });
    expect(moved.body.publicAccess).toBe('https://gateway.test:9443/app');
  });

  test('answers 422 with the spec messages for missing and malformed fields', async () => {
    const node = await insertNode(t.deps);
    const missing = await api('POST', `/api/services/${node.id}/http`, {});
    expect(missing.status).toBe(422);
    expect(fieldMessage(missing.body, 'name')).toBe('This field is required');

    const badDomain = await api('POST', `/api/services/${node.id}/http`, { ...web, domain: 'not a domain' });
    expect(fieldMessage(badDomain.body, 'domain')).toBe('This field must contain a valid domain name');

    const neither = await api('POST', `/api/services/${node.id}/http`, { name: 'x', domain: '', pathLocation: '' });
    expect(fieldMessage(neither.body, 'pathLocation')).toBe('Either a domain or a path is required');

    const badPort = await api('POST', `/api/services/${node.id}/http`, { ...web, backendPort: 70000 });
    expect(fieldMessage(badPort.body, 'backendPort')).toBe('This field must be less than or equal to 65535');
  });

  test('refuses a second service on the same domain and path, trailing slash or not', async () => {
    const node = await insertNode(t.deps);
    const other = await insertNode(t.deps);
    expect((await api('POST', `/api/services/${node.id}/http`, web)).status).toBe(201);
    const clash = await api('POST', `/api/services/${other.id}/http`, { ...web, name: 'copy', pathLocation: '/api/' });
    expect(clash.status).toBe(422);
    expect(fieldMessage(clash.body, 'pathLocation')).toBe(
      'The path /api on app.example.com is already used by the service "web"',
    );
    const elsewhere = await api('POST', `/api/services/${other.id}/http`, {
      ...web,
      name: 'other',
      pathLocation: '/other',
    });
    expect(elsewhere.status).toBe(201);
  });

  test('refuses a path that differs from another on the domain only in letter case, or has a part ending in a dot', async () => {
    const node = await insertNode(t.deps);
    const admin = await api<HttpService>('POST', `/api/services/${node.id}/http`, { ...web, pathLocation: '/adm' });
    expect(admin.status).toBe(201);
    await api('POST', `/api/services/${node.id}/http`, { ...web, name: 'docs', pathLocation: '/docs/api' });
    const refused = async (pathLocation: string) => {
      const answer = await api('POST', `/api/services/${node.id}/http`, { ...web, name: 'x', pathLocation });
      expect(answer.status, pathLocation).toBe(422);
      return fieldMessage(answer.body, 'pathLocation');
    };
    expect(await refused('/ADM')).toBe(
      'The path /ADM on app.example.com differs only in letter case from /adm (the service "web"): the gateway cannot tell such paths apart',
    );
    expect(await refused('/Adm/x/')).toContain('differs only in letter case from /adm');
    expect(await refused('/Docs')).toContain('differs only in letter case from /docs/api');
    expect(await refused('/adm.')).toBe("No part of this path may end with '.'");
    expect(await refused('/x./adm')).toBe("No part of this path may end with '.'");
    const edit = await api('PATCH', `/api/services/${node.id}/http/${admin.body.id}`, { pathLocation: '/Docs/API' });
    expect(fieldMessage(edit.body, 'pathLocation')).toContain('differs only in letter case from /docs/api');
    // Case below an exact prefix, another domain, and a name that only starts alike are not in the way.
    for (const [domain, pathLocation] of [
      ['app.example.com', '/adm/X'],
      ['app.example.com', '/ADMIN'],
      ['app.example.com', '/docs/API2'],
      ['other.example.com', '/ADM'],
    ] as const) {
      const answer = await api('POST', `/api/services/${node.id}/http`, {
        ...web,
        name: pathLocation,
        domain,
        pathLocation,
      });
      expect(answer.status, `${domain}${pathLocation}`).toBe(201);
    }
    // Nor is a service's own path; but /adm/X now is: /Adm would leave it between two spellings.
    const recased = await api('PATCH', `/api/services/${node.id}/http/${admin.body.id}`, { pathLocation: '/Adm' });
    expect(fieldMessage(recased.body, 'pathLocation')).toContain('differs only in letter case from /adm/X');
  });

  test('a stored pair the data plane cannot tell apart serves the older one and sets the newer aside, with its reason', async () => {
    const node = await insertNode(t.deps);
    const older = await api<HttpService>('POST', `/api/services/${node.id}/http`, { ...web, pathLocation: '/adm' });
    // Rows stored before these rules: written directly, as an upgrade finds them.
    const stored = await t.deps.db.write(
      async (tx) =>
        await tx
          .insert(httpServices)
          .values([
            {
              nodeId: node.id,
              name: 'recased',
              domain: 'app.example.com',
              pathLocation: '/ADM',
              backendHost: node.address,
            },
            {
              nodeId: node.id,
              name: 'dotted',
              domain: 'app.example.com',
              pathLocation: '/adm.',
              backendHost: node.address,
            },
          ])
          .returning({ id: httpServices.id })
          .all(),
    );
    const another = await api<HttpService>('POST', `/api/services/${node.id}/http`, {
      ...web,
      name: 'another',
      pathLocation: '/other',
    });
    const applyError = async (id: number) =>
      (await api<HttpService>('GET', `/api/services/${node.id}/http/${id}`)).body.applyError;
    expect(await applyError(older.body.id)).toBeNull();
    expect(await applyError(stored[0]?.id ?? 0)).toBe(
      '/ADM differs only in letter case from /adm, which another service serves on app.example.com',
    );
    expect(await applyError(stored[1]?.id ?? 0)).toBe('invalid path: "/adm."');
    const served = JSON.parse(t.fakeDataPlane.proxy.routes.get('app.example.com') ?? '[]') as { s: number }[];
    expect(served.map((route) => route.s).sort()).toEqual([older.body.id, another.body.id].sort());
  });

  test('answers 404 for an unknown node', async () => {
    const { status, body } = await api('POST', '/api/services/9999/http', web);
    expect(status).toBe(404);
    expect(body).toEqual({ message: 'Node not found', code: 'not_found', messageCode: 'node_not_found' });
  });
});

describe('backend host rules', () => {
  test('a gateway node needs a host inside its network (or its own address)', async () => {
    const gateway = await insertNode(t.deps, { isGateway: true, gatewayNetwork: '192.168.10.0/24' });
    const missing = await api('POST', `/api/services/${gateway.id}/http`, web);
    expect(fieldMessage(missing.body, 'backendHost')).toBe('This field is required');

    const outside = await api('POST', `/api/services/${gateway.id}/http`, { ...web, backendHost: '192.168.11.5' });
    expect(outside.status).toBe(422);
    expect(fieldMessage(outside.body, 'backendHost')).toContain('192.168.10.0/24');

    const inside = await api<HttpService>('POST', `/api/services/${gateway.id}/http`, {
      ...web,
      backendHost: '192.168.10.5',
    });
    expect(inside.status).toBe(201);
    expect(inside.body.backendHost).toBe('192.168.10.5');
  });

  test('the local node proxies to any host, which is required', async () => {
    const local = (await api<ListResponse<{ id: number; isLocal: boolean }>>('GET', '/api/nodes')).body.data.find(
      (n) => n.isLocal,
    );
    expect(local).toBeDefined();
    const missing = await api('POST', `/api/services/${local?.id}/http`, web);
    expect(fieldMessage(missing.body, 'backendHost')).toBe('This field is required');
    const created = await api<HttpService>('POST', `/api/services/${local?.id}/http`, {
      ...web,
      backendHost: 'localhost',
    });
    expect(created.status).toBe(201);
    expect(created.body.backendHost).toBe('localhost');
  });
});

describe('reading and editing HTTP services', () => {
  test('pages a node’s services and counts them all', async () => {
    const node = await insertNode(t.deps);
    for (let i = 0; i < 7; i++) await api('POST', `/api/services/${node.id}/http`, { ...web, pathLocation: `/p${i}` });
    const { status, body } = await api<ListResponse<HttpService>>(
      'GET',
      `/api/services/${node.id}/http?page=2&limit=5`,
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ page: 2, limit: 5, total: 7 });
    expect(body.data.map((s) => s.pathLocation)).toEqual(['/p5', '/p6']);
  });

  test('filters all HTTP services by domain', async () => {
    const node = await insertNode(t.deps);
    await api('POST', `/api/services/${node.id}/http`, web);
    await api('POST', `/api/services/${node.id}/http`, { ...web, domain: 'other.example.com' });
    const { body } = await api<ListResponse<HttpService>>('GET', '/api/services/http?domain=other.example.com');
    expect(body.total).toBe(1);
    expect(body.data[0]?.domain).toBe('other.example.com');
    const all = await api<ListResponse<HttpService>>('GET', '/api/services/http');
    expect(all.body.total).toBe(2);
  });

  test('q finds services by name, domain or path, case-insensitively, within the node or domain asked for', async () => {
    const node = await insertNode(t.deps);
    const other = await insertNode(t.deps);
    await api('POST', `/api/services/${node.id}/http`, { ...web, name: 'Grafana' });
    await api('POST', `/api/services/${node.id}/http`, { ...web, name: 'api', pathLocation: '/grafana-api' });
    await api('POST', `/api/services/${node.id}/http`, { ...web, name: 'shop', domain: 'shop.example.com' });
    await api('POST', `/api/services/${other.id}/http`, { ...web, name: 'grafana2', domain: 'g.example.com' });
    const names = async (url: string) =>
      (await api<ListResponse<HttpService>>('GET', url)).body.data.map((s) => s.name);
    expect(await names(`/api/services/${node.id}/http?q=GRAF`)).toEqual(['Grafana', 'api']);
    expect(await names(`/api/services/${node.id}/http?q=shop.example`)).toEqual(['shop']);
    expect(await names('/api/services/http?q=grafana')).toEqual(['Grafana', 'api', 'grafana2']);
    expect(await names('/api/services/http?q=grafana&domain=g.example.com')).toEqual(['grafana2']);
    // Wildcards are plain text.
    expect(await names('/api/services/http?q=%25')).toEqual([]);
    expect((await api<ListResponse<HttpService>>('GET', '/api/services/http?q=a&limit=1&page=2')).body).toMatchObject({
      total: 4,
      page: 2,
    });
  });

  test('sort orders by name or status, either way, ties by creation; absent, the list stays by id', async () => {
    const node = await insertNode(t.deps);
    const other = await insertNode(t.deps);
    const make = async (name: string, path: string) =>
      (await api<HttpService>('POST', `/api/services/${node.id}/http`, { ...web, name, pathLocation: path })).body;
    const beta = await make('beta', '/b');
    await make('Alpha', '/a');
    const gamma = await make('gamma', '/g');
    await api('POST', `/api/services/${other.id}/http`, { ...web, name: 'aaa-elsewhere', pathLocation: '/x' });
    await api('PATCH', `/api/services/${node.id}/http/${beta.id}/disable`);
    await t.deps.db.write(
      async (tx) =>
        await tx.update(httpServices).set({ applyError: 'port taken' }).where(eq(httpServices.id, gamma.id)).run(),
    );
    const names = async (url: string) =>
      (await api<ListResponse<HttpService>>('GET', url)).body.data.map((s) => s.name);
    const base = `/api/services/${node.id}/http`;
    expect(await names(base)).toEqual(['beta', 'Alpha', 'gamma']);
    expect(await names(`${base}?sort=name`)).toEqual(['Alpha', 'beta', 'gamma']);
    expect(await names(`${base}?sort=name&order=desc`)).toEqual(['gamma', 'beta', 'Alpha']);
    // Public first, then set aside by the data plane, then switched off.
    expect(await names(`${base}?sort=status`)).toEqual(['Alpha', 'gamma', 'beta']);
    expect(await names(`${base}?sort=status&order=desc`)).toEqual(['beta', 'gamma', 'Alpha']);
    expect(await names(`${base}?sort=name&q=a&limit=2&page=2`)).toEqual(['gamma']);
    expect(await names('/api/services/http?domain=app.example.com&sort=name')).toEqual([
      'aaa-elsewhere',
      'Alpha',
      'beta',
      'gamma',
    ]);
    expect((await api('GET', `${base}?sort=port`)).status).toBe(422);
  });

  test('gets one service, and 404s for an unknown id, another node’s service or an unknown type', async () => {
    const node = await insertNode(t.deps);
    const other = await insertNode(t.deps);
    const { body: created } = await api<HttpService>('POST', `/api/services/${node.id}/http`, web);
    expect((await api('GET', `/api/services/${node.id}/http/${created.id}`)).body).toEqual(created);
    expect((await api('GET', `/api/services/${node.id}/http/9999`)).status).toBe(404);
    expect((await api('GET', `/api/services/${other.id}/http/${created.id}`)).status).toBe(404);
    expect((await api('GET', `/api/services/${node.id}/ftp/${created.id}`)).status).toBe(404);
    expect((await api('GET', `/api/services/abc/http/${created.id}`)).status).toBe(404);
  });

  test('edits fields and keeps domain + path unique', async () => {
    const node = await insertNode(t.deps);
    const { body: first } = await api<HttpService>('POST', `/api/services/${node.id}/http`, web);
    await api('POST', `/api/services/${node.id}/http`, { ...web, name: 'docs', pathLocation: '/docs' });
    const edited = await api<HttpService>('PATCH', `/api/services/${node.id}/http/${first.id}`, {
      name: 'web2',
      pathLocation: '/v2',
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      name: 'web2',
      pathLocation: '/v2',
      publicAccess: 'https://app.example.com/v2',
    });
    const clash = await api('PATCH', `/api/services/${node.id}/http/${first.id}`, { pathLocation: '/docs' });
    expect(fieldMessage(clash.body, 'pathLocation')).toBe(
      'The path /docs on app.example.com is already used by the service "docs"',
    );
    const invalid = await api('PATCH', `/api/services/${node.id}/http/${first.id}`, { backendProto: 'ftp' });
    expect(fieldMessage(invalid.body, 'backendProto')).toBe('This field must be one of http, https');
  });
});

describe('what a change costs the data plane', () => {
  test('creating, moving, disabling and deleting a service push its hosts only, never the whole table', async () => {
    const node = await insertNode(t.deps);
    await api('POST', `/api/services/${node.id}/http`, { ...web, name: 'other', domain: 'other.example.com' });
    const proxy = t.fakeDataPlane.proxy;
    const syncs = proxy.routeSyncs;
    const { body } = await api<HttpService>('POST', `/api/services/${node.id}/http`, web);
    expect(proxy.patches.at(-1)).toEqual({ set: ['app.example.com'], del: [] });
    await api('PATCH', `/api/services/${node.id}/http/${body.id}`, { domain: 'moved.example.com' });
    expect(proxy.patches.at(-1)).toEqual({ set: ['moved.example.com'], del: ['app.example.com'] });
    await api('PATCH', `/api/services/${node.id}/http/${body.id}/disable`);
    expect(proxy.patches.at(-1)).toEqual({ set: [], del: ['moved.example.com'] });
    await api('PATCH', `/api/services/${node.id}/http/${body.id}/enable`);
    expect(proxy.patches.at(-1)).toEqual({ set: ['moved.example.com'], del: [] });
    await api('DELETE', `/api/services/${node.id}/http/${body.id}`);
    expect(proxy.patches.at(-1)).toEqual({ set: [], del: ['moved.example.com'] });
    expect(proxy.routeSyncs).toBe(syncs);
    // What nginx holds is what a full run makes of the database.
    await t.fakeDataPlane.checkDrift();
    expect(t.fakeDataPlane.lastDrift()?.differences).toEqual([]);
    expect([...proxy.routes.keys()]).toEqual(['other.example.com']);
  });
});

describe('paths and hosts the gateway keeps for itself', () => {
  test('refuses reserved paths for the admin too: ACME and internal everywhere, /api without a domain', async () => {
    const node = await insertNode(t.deps);
    const cases: [string | null, string, string][] = [
      [null, '/api', '/api'],
      [null, '/API', '/api'],
      [null, '/api/', '/api'],
      [null, '/api/auth/login', '/api'],
      [null, '/.well-known/acme-challenge', '/.well-known/acme-challenge'],
      ['app.example.com', '/.well-known/acme-challenge/x', '/.well-known/acme-challenge'],
      ['app.example.com', '/_postern/', '/_postern'],
    ];
    for (const [domain, pathLocation, prefix] of cases) {
      const refused = await api('POST', `/api/services/${node.id}/http`, { name: 'r', domain, pathLocation });
      expect(refused.status, `${domain} ${pathLocation}`).toBe(422);
      expect(fieldMessage(refused.body, 'pathLocation'), `${domain} ${pathLocation}`).toMatch(
        new RegExp(`^This field must not be ${prefix.replace(/\./g, '\\.')} or a path below it`),
      );
    }
    // `//api` is not a path at all (nginx would merge the slashes into /api).
    expect(
      fieldMessage(
        (await api('POST', `/api/services/${node.id}/http`, { name: 'r', pathLocation: '//api' })).body,
        'pathLocation',
      ),
    ).toMatch(/^This field must start with/);
    for (const [domain, pathLocation] of [
      ['app.example.com', '/api'],
      [null, '/apis'],
      [null, '/v1/api'],
    ]) {
      expect(
        (await api('POST', `/api/services/${node.id}/http`, { name: 'ok', domain, pathLocation })).status,
        `${domain} ${pathLocation}`,
      ).toBe(201);
    }
  });

  test('an edit that would land on a reserved path is refused, also by dropping the domain', async () => {
    const node = await insertNode(t.deps);
    const { body } = await api<HttpService>('POST', `/api/services/${node.id}/http`, {
      name: 'x',
      domain: 'app.example.com',
      pathLocation: '/api',
    });
    const dropped = await api('PATCH', `/api/services/${node.id}/http/${body.id}`, { domain: null });
    expect(dropped.status).toBe(422);
    expect(fieldMessage(dropped.body, 'pathLocation')).toMatch(/^This field must not be \/api or a path below it/);
    expect(
      (await api('PATCH', `/api/services/${node.id}/http/${body.id}`, { pathLocation: '/_postern/x' })).status,
    ).toBe(422);
    expect((await api<HttpService>('GET', `/api/services/${node.id}/http/${body.id}`)).body).toMatchObject({
      domain: 'app.example.com',
      pathLocation: '/api',
    });
  });

  test("refuses the console's host name as a service's domain, HTTP and TCP", async () => {
    const node = await insertNode(t.deps);
    const http = await api('POST', `/api/services/${node.id}/http`, {
      name: 'x',
      domain: 'Gateway.Test',
      pathLocation: '/',
    });
    expect(fieldMessage(http.body, 'domain')).toBe(ruleMessages.consoleHost);
    const tcp = await api('POST', `/api/services/${node.id}/tcp`, {
      name: 'x',
      domain: 'gateway.test',
      backendPort: 22,
    });
    expect(fieldMessage(tcp.body, 'domain')).toBe(ruleMessages.consoleHost);
  });

  test('a service stored on a reserved path by an earlier version is not enabled again until it is moved', async () => {
    const node = await insertNode(t.deps);
    const legacy = await t.db.write(
      async (tx) =>
        await tx
          .insert(httpServices)
          .values({
            nodeId: node.id,
            name: 'legacy',
            domain: '',
            pathLocation: '/api/auth/login',
            backendHost: node.address,
            enabled: false,
          })
          .returning()
          .get(),
    );
    const refused = await api('PATCH', `/api/services/${node.id}/http/${legacy.id}/enable`);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      message: "The service's path /api/auth/login is reserved (/api and below): change its path before enabling it",
      code: 'bad_request',
      messageCode: 'service_reserved_path',
      params: { path: '/api/auth/login', reserved: '/api' },
    });
    await api('PATCH', `/api/services/${node.id}/http/${legacy.id}`, { pathLocation: '/login' });
    expect((await api<HttpService>('PATCH', `/api/services/${node.id}/http/${legacy.id}/enable`)).body.enabled).toBe(
      true,
    );
  });
});
