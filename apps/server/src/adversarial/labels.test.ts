import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';

// Services made from a container's Docker labels (docs/LABELS.md), from the attacker's side: the `source` a node's
// agent sends is a note, never a right. It reaches nothing of another node, cannot be set by the console's calls,
// takes only well-formed values, and a label-made service is bound by the operator's decisions like any other.

let t: TestApp;
let admin: string;
let nodeA: { id: number; token: string };
let nodeB: { id: number; token: string };

type Method = NonNullable<InjectOptions['method']>;
interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function call(token: string, method: Method, url: string, payload?: object): Promise<Answer> {
  const response = await t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload ? { payload } : {}),
  });
  return { status: response.statusCode, body: response.body ? response.json<Record<string, unknown>>() : {} };
}

const source = (container: string) => ({ kind: 'docker-labels', container, key: 'http', digest: 'a'.repeat(64) });
const labelled = (domain: string, container: string) => ({
  name: container,
  domain,
  backendPort: 8080,
  source: source(container),
});

beforeAll(async () => {
  t = await buildTestApp();
  admin = await t.login();
  nodeA = (await call(admin, 'POST', '/api/nodes', { name: 'a' })).body as typeof nodeA;
  nodeB = (await call(admin, 'POST', '/api/nodes', { name: 'b' })).body as typeof nodeB;
});
afterAll(() => t.cleanup());

describe('label-made services', () => {
  it("a label naming another node's service (its container, its domain) reaches nothing of it", async () => {
    const own = await call(nodeA.token, 'POST', '/api/agent/services/http', labelled('a-labels.example.test', 'web'));
    expect(own.status).toBe(201);
    expect(own.body.source).toEqual(source('web'));
    // Node B's agent sends the same source, and then A's domain.
    const same = await call(nodeB.token, 'POST', '/api/agent/services/http', labelled('b-labels.example.test', 'web'));
    expect(same.status).toBe(201);
    const onA = await call(nodeB.token, 'POST', '/api/agent/services/http', labelled('a-labels.example.test', 'web'));
    expect(onA.status).toBeGreaterThanOrEqual(400);
    // B's agent sees only B's services, and cannot disable or delete A's by its id.
    const list = (await call(nodeB.token, 'GET', '/api/agent/services/http?limit=100')).body.data as { id: number }[];
    expect(list.map((service) => service.id)).toEqual([same.body.id]);
    expect((await call(nodeB.token, 'PATCH', `/api/agent/services/http/${String(own.body.id)}/disable`)).status).toBe(
      404,
    );
    expect((await call(nodeB.token, 'DELETE', `/api/agent/services/http/${String(own.body.id)}`)).status).toBe(404);
    const after = await call(admin, 'GET', `/api/services/${nodeA.id}/http/${String(own.body.id)}`);
    expect(after.body).toMatchObject({ enabled: true, nodeId: nodeA.id, source: source('web') });
  });

  it('the console cannot mark a service as label-made (only a node’s agent says so)', async () => {
    const made = await call(admin, 'POST', `/api/services/${nodeA.id}/http`, labelled('console.example.test', 'x'));
    // Refused as an unknown field, or created without it: never stored.
    if (made.status === 201) expect(made.body.source ?? null).toBeNull();
    else expect(made.status).toBe(422);
  });

  it.each([
    ['a path in the container name', { ...source('web'), container: '../etc' }],
    ['a newline in the container name', { ...source('web'), container: 'web\nX-Injected: 1' }],
    ['a huge container name', { ...source('web'), container: 'w'.repeat(100_000) }],
    ['an unknown key', { ...source('web'), key: 'http.$(reboot)' }],
    ['a digest that is no digest', { ...source('web'), digest: 'z'.repeat(64) }],
    ['an extra field', { ...source('web'), admin: true }],
    ['another kind', { ...source('web'), kind: 'console' }],
  ])('a hostile source is refused (%s), nothing created', async (what, hostile) => {
    const before = (await call(nodeA.token, 'GET', '/api/agent/services/http?limit=100')).body.total;
    const answer = await call(nodeA.token, 'POST', '/api/agent/services/http', {
      ...labelled(`hostile-${what.replace(/[^a-z]/g, '')}.example.test`, 'web'),
      source: hostile,
    });
    expect(answer.status).toBe(422);
    expect((await call(nodeA.token, 'GET', '/api/agent/services/http?limit=100')).body.total).toBe(before);
  });

  it("cannot claim another node's public port, nor take a route of the operator's", async () => {
    const tcp = (name: string, port: number) => ({
      name,
      port,
      backendPort: 5432,
      source: { ...source(name), key: 'tcp' },
    });
    const own = await call(nodeA.token, 'POST', '/api/agent/services/tcp', tcp('pg', 30_077));
    expect(own.status).toBe(201);
    const claim = await call(nodeB.token, 'POST', '/api/agent/services/tcp', tcp('pg', 30_077));
    expect(claim.status).toBe(422);
    expect(JSON.stringify(claim.body)).not.toContain(String(nodeA.id));
    const operators = await call(admin, 'POST', `/api/services/${nodeA.id}/http`, {
      name: 'site',
      domain: 'operator-route.example.test',
      backendPort: 80,
    });
    expect(operators.status).toBe(201);
    const route = await call(
      nodeA.token,
      'POST',
      '/api/agent/services/http',
      labelled('operator-route.example.test', 'grab'),
    );
    expect(route.status).toBe(422);
    // The labels made nothing of the other node's, and the operator's service is as it was.
    const bServices = (await call(nodeB.token, 'GET', '/api/agent/services/tcp?limit=100')).body.data as unknown[];
    expect(bServices).toEqual([]);
    expect(
      (await call(admin, 'GET', `/api/services/${nodeA.id}/http/${String(operators.body.id)}`)).body,
    ).toMatchObject({ name: 'site', source: null });
  });

  it("cannot point a label-made service at the gateway's own addresses", async () => {
    const aAddress = (await call(admin, 'GET', `/api/nodes/${nodeA.id}`)).body.address as string;
    // A regular node's backend is always its own tunnel address, whatever the labels ask.
    const regular = await call(nodeA.token, 'POST', '/api/agent/services/http', {
      ...labelled('loopback-a.example.test', 'loop'),
      backendHost: '127.0.0.1',
    });
    expect(regular.status).toBe(201);
    expect(regular.body.backendHost).toBe(aAddress);
    // A gateway node chooses a host, but only its own address or inside its network.
    const gw = (
      await call(admin, 'POST', '/api/nodes', { name: 'gw', isGateway: true, gatewayNetwork: '172.30.9.0/24' })
    ).body as { id: number; token: string };
    for (const host of ['127.0.0.1', '0.0.0.0', 'localhost', '169.254.169.254', aAddress, '10.0.0.1', '::1']) {
      const answer = await call(gw.token, 'POST', '/api/agent/services/http', {
        ...labelled(`gw-${host.replace(/[^0-9a-z]/g, '')}.example.test`, 'gwapp'),
        backendHost: host,
      });
      expect(answer.status, host).toBe(422);
    }
    expect((await call(gw.token, 'GET', '/api/agent/services/http?limit=100')).body.total).toBe(0);
    const inside = await call(gw.token, 'POST', '/api/agent/services/http', {
      ...labelled('gw-inside.example.test', 'gwapp'),
      backendHost: '172.30.9.20',
    });
    expect(inside.status).toBe(201);
  });

  // What reaches nginx is refused by the gateway whatever the agent checked (the agent also refuses names the
  // gateway takes, such as one with a newline: apps/cli/src/docker/labels.test.ts).
  it.each([
    ['a newline in the domain', 'domain', { domain: 'evil.example.test\nserver_name x' }],
    ['nginx syntax in the path', 'pathLocation', { pathLocation: '/a;} location / { proxy_pass http://127.0.0.1; }' }],
    ['a very long domain', 'domain', { domain: `${'a'.repeat(70_000)}.example.test` }],
    ['a very long path', 'pathLocation', { pathLocation: `/${'p'.repeat(70_000)}` }],
    ['a port beyond 65535', 'backendPort', { backendPort: 70_000 }],
  ])('a hostile label value is refused (%s), nothing created', async (what, field, hostile) => {
    const before = (await call(nodeA.token, 'GET', '/api/agent/services/http?limit=100')).body.total;
    const answer = await call(nodeA.token, 'POST', '/api/agent/services/http', {
      ...labelled(`hostile-${what.replace(/[^a-z]/g, '')}.example.test`, 'web'),
      ...hostile,
    });
    expect(answer.status).toBe(422);
    expect((answer.body.errors as { body: { field: string }[] }).body.map((error) => error.field)).toEqual([field]);
    expect((await call(nodeA.token, 'GET', '/api/agent/services/http?limit=100')).body.total).toBe(before);
  });

  it("binds a label-made service by the operator's decisions: disabled by the operator, the token can neither enable nor delete it", async () => {
    const made = await call(nodeA.token, 'POST', '/api/agent/services/http', labelled('decided.example.test', 'db'));
    expect(made.status).toBe(201);
    const id = String(made.body.id);
    expect((await call(admin, 'PATCH', `/api/services/${nodeA.id}/http/${id}/disable`)).status).toBe(200);
    expect((await call(nodeA.token, 'PATCH', `/api/agent/services/http/${id}/enable`)).status).toBe(403);
    expect((await call(nodeA.token, 'DELETE', `/api/agent/services/http/${id}`)).status).toBe(403);
    expect((await call(admin, 'GET', `/api/services/${nodeA.id}/http/${id}`)).body).toMatchObject({
      enabled: false,
      disabledBy: 'admin',
    });
  });

  it("a node's report of its label problems is its own node's, one printable line each, and bounded", async () => {
    const problems = [
      { container: 'blog', key: 'http', message: 'postern.http.domain: This field must contain a valid domain name' },
      { container: 'odd', message: 'unknown label postern.foo' },
    ];
    const report = (token: string, body: object) => call(token, 'PATCH', '/api/agent/node/label-problems', body);
    expect((await report(nodeA.token, { problems })).status).toBe(204);
    const shown = await call(admin, 'GET', `/api/nodes/${nodeA.id}/label-problems`);
    expect(shown.body).toMatchObject({ checkedAt: expect.any(String), problems });
    // Node B's report is B's: nothing in it names a node, and A's stays.
    expect((await report(nodeB.token, { problems: [{ container: 'x', message: 'y' }] })).status).toBe(204);
    expect((await call(admin, 'GET', `/api/nodes/${nodeA.id}/label-problems`)).body.problems).toEqual(problems);

    for (const hostile of [
      { problems: [{ container: 'blog', message: 'line\n<script>alert(1)</script>' }] },
      { problems: [{ container: 'blog\r\nX-Injected: 1', message: 'm' }] },
      { problems: [{ container: 'blog', message: 'm'.repeat(100_000) }] },
      { problems: [{ container: 'blog', key: 'http.$(reboot)', message: 'm' }] },
      { problems: [{ container: 'blog', message: 'm', nodeId: nodeB.id }] },
      { problems: Array.from({ length: 201 }, () => ({ container: 'c', message: 'm' })) },
      { problems, nodeId: nodeB.id },
    ]) {
      expect((await report(nodeA.token, hostile)).status).toBe(422);
    }
    expect((await call(admin, 'GET', `/api/nodes/${nodeA.id}/label-problems`)).body.problems).toEqual(problems);
    // A node whose agent never reported: nothing checked yet.
    const quiet = (await call(admin, 'POST', '/api/nodes', { name: 'quiet' })).body as { id: number };
    expect((await call(admin, 'GET', `/api/nodes/${quiet.id}/label-problems`)).body).toEqual({
      checkedAt: null,
      problems: [],
    });
  });
});
