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
});
