import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountMessages,
  isRoleRefusal,
  ruleMessages,
  type Account,
  type CurrentAccount,
  type Role,
} from '@postern/contract';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';
import { callAs, inviteAccount } from '../test/accounts.js';
import { connectSse } from '../test/sse-client.js';

// Accounts limited to some nodes (docs/api.md "Node scope"): an operator whose scope is node A tries, every way the
// API offers, to see or change node B and what hangs off it. Outside the scope a node is a 404 exactly like one that
// does not exist; the services overview, lists and search, the domains list, figures and a service's log show only
// node A's things; routes that would show or change other nodes' things (a domain's settings or log, the audit log,
// the gateway's status) are refused with the policy's 403. One app for the file.

let t: TestApp;
let base: string;
let owner: string;
let names = 0;
let nodeA: { id: number };
let nodeB: { id: number; token: string };
let serviceA: number;
let serviceB: number;
let tokenB: number;

const call = <T = Record<string, unknown>>(method: string, url: string, token: string | null, body?: object) =>
  callAs<T>(t, method, url, token, body);

/** An account of `role` made through an invite, limited to `nodes` if given (a narrowing ends sessions), signed in. */
async function account(role: Role, nodes?: number[]): Promise<{ id: number; session: string }> {
  const username = `scoped-${++names}@example.test`;
  return await inviteAccount(t, owner, { username, password: `password-of-${names}`, role, nodes });
}

/** An account of `role` whose scope is node A. */
const scoped = (role: Role) => account(role, [nodeA.id]);

/** A domain's id, as the owner sees it. */
async function domainIdOf(name: string): Promise<number> {
  const list = await call<{ data: { id: number; domain: string }[] }>('GET', `/api/domains?search=${name}`, owner);
  const id = list.body.data.find((row) => row.domain === name)?.id;
  expect(id, name).toBeDefined();
  return id ?? 0;
}

const NODE_NOT_FOUND = {
  status: 404,
  body: { code: 'not_found', message: 'Node not found', messageCode: 'node_not_found' },
};

beforeAll(async () => {
  t = await buildTestApp();
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  owner = await t.login();
  nodeA = (await call<{ id: number }>('POST', '/api/nodes', owner, { name: 'scope-a' })).body;
  nodeB = (await call<{ id: number; token: string }>('POST', '/api/nodes', owner, { name: 'scope-b-secret-name' }))
    .body;
  const web = (node: number, host: string) =>
    call<{ id: number }>('POST', `/api/services/${node}/http`, owner, { name: 'web', domain: host, backendPort: 80 });
  serviceA = (await web(nodeA.id, 'a.scope.example.test')).body.id;
  serviceB = (await web(nodeB.id, 'b.scope.example.test')).body.id;
  tokenB = (await call<{ id: number }>('POST', `/api/nodes/${nodeB.id}/pats`, owner, { name: 'b-token' })).body.id;
});
afterAll(() => t.cleanup());

describe('an owner sets the nodes an account may see', () => {
  it('through PATCH /api/accounts/{id}; an id that is no node is a 422 and changes nothing; null is every node', async () => {
    const { id } = await account('operator');
    const unknown = await call<{ errors: { body: object[] } }>('PATCH', `/api/accounts/${id}`, owner, {
      nodes: [nodeA.id, 999_999],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.body).toEqual([
      {
        field: 'nodes',
        message: accountMessages.unknownNodes([999_999]),
        code: 'unknown_nodes',
        params: { ids: '999999' },
      },
    ]);
    const listed = async () =>
      (await call<{ data: Account[] }>('GET', '/api/accounts?limit=100', owner)).body.data.find((a) => a.id === id);
    expect((await listed())?.nodes).toBeNull();

    const set = await call<Account>('PATCH', `/api/accounts/${id}`, owner, { nodes: [nodeB.id, nodeA.id, nodeA.id] });
    expect(set.body.nodes).toEqual([nodeA.id, nodeB.id].sort((x, y) => x - y));
    expect((await listed())?.nodes).toEqual(set.body.nodes);
    for (const nodes of [null, []])
      expect((await call<Account>('PATCH', `/api/accounts/${id}`, owner, { nodes })).body.nodes).toBeNull();
  });

  it('is the owners’ alone: a scoped operator cannot widen its own scope', async () => {
    const operator = await scoped('operator');
    const widened = await call('PATCH', `/api/accounts/${operator.id}`, operator.session, { nodes: null });
    expect(widened.status).toBe(403);
    expect((await call('GET', `/api/nodes/${nodeB.id}`, operator.session)).status).toBe(404);
  });
});

describe('an operator limited to node A', () => {
  let session: string;
  beforeAll(async () => {
    session = (await scoped('operator')).session;
  });

  it('lists node A only: the plain list, a search and a sorted list', async () => {
    for (const query of ['', '?q=scope', '?sort=name&order=desc', '?q=secret']) {
      const list = await call<{ data: { id: number; name: string }[]; total: number }>(
        'GET',
        `/api/nodes${query}`,
        session,
      );
      expect(list.status, query).toBe(200);
      expect(
        list.body.data.map((n) => n.id),
        query,
      ).toEqual(query === '?q=secret' ? [] : [nodeA.id]);
      expect(list.body.total, query).toBe(query === '?q=secret' ? 0 : 1);
    }
  });

  it('gets node B by id exactly as a node that does not exist, for every route under it', async () => {
    expect((await call('GET', `/api/nodes/${nodeA.id}`, session)).status).toBe(200);
    const tokensOfB = async () => (await call<{ data: object[] }>('GET', `/api/nodes/${nodeB.id}/pats`, owner)).body;
    const tokensBefore = await tokensOfB();
    expect(JSON.stringify(tokensBefore)).toContain(`"id":${tokenB}`);
    const attempts: [string, string, object?][] = [
      ['GET', `/api/nodes/${nodeB.id}`],
      ['PATCH', `/api/nodes/${nodeB.id}`, { name: 'taken-over' }],
      ['DELETE', `/api/nodes/${nodeB.id}`],
      ['PATCH', `/api/nodes/${nodeB.id}/disable`],
      ['GET', `/api/nodes/${nodeB.id}/label-problems`],
      ['GET', `/api/nodes/${nodeB.id}/download`],
      ['GET', `/api/nodes/${nodeB.id}/pats`],
      ['POST', `/api/nodes/${nodeB.id}/pats`, { name: 'mine-now' }],
      ['PATCH', `/api/nodes/${nodeB.id}/pats/${tokenB}/revoke`],
      ['DELETE', `/api/nodes/${nodeB.id}/pats/${tokenB}`],
    ];
    for (const [method, url, body] of attempts) {
      expect(await call(method, url, session, body), `${method} ${url}`).toEqual(NODE_NOT_FOUND);
      expect(await call(method, url.replace(String(nodeB.id), '999999'), session, body)).toEqual(NODE_NOT_FOUND);
    }
    // Nothing changed: node B, its name and its token are as they were.
    expect((await call<{ name: string; enabled: boolean }>('GET', `/api/nodes/${nodeB.id}`, owner)).body).toMatchObject(
      { name: 'scope-b-secret-name', enabled: true },
    );
    expect(await tokensOfB()).toEqual(tokensBefore);
  });

  it("works with node A's tokens and config", async () => {
    expect((await call('GET', `/api/nodes/${nodeA.id}/pats`, session)).status).toBe(200);
    expect((await call('POST', `/api/nodes/${nodeA.id}/pats`, session, { name: 'a-token' })).status).toBe(201);
    const config = await t.app.inject({
      method: 'GET',
      url: `/api/nodes/${nodeA.id}/download`,
      headers: { authorization: `Bearer ${session}` },
    });
    expect(config.statusCode).toBe(200);
  });

  it("neither sees nor changes node B's services, and creates none on it", async () => {
    expect((await call('GET', `/api/services/${nodeA.id}/http/${serviceA}`, session)).status).toBe(200);
    const attempts: [string, string, object?][] = [
      ['GET', `/api/services/${nodeB.id}/http`],
      ['GET', `/api/services/${nodeB.id}/http/${serviceB}`],
      ['PATCH', `/api/services/${nodeB.id}/http/${serviceB}`, { backendPort: 81 }],
      ['PATCH', `/api/services/${nodeB.id}/http/${serviceB}/disable`],
      ['DELETE', `/api/services/${nodeB.id}/http/${serviceB}`],
      ['GET', `/api/services/${nodeB.id}/http/${serviceB}/access`],
      ['GET', `/api/services/${nodeB.id}/http/${serviceB}/share-links`],
      ['POST', `/api/services/${nodeB.id}/http`, { name: 'planted', domain: 'planted.example.test', backendPort: 80 }],
      ['POST', `/api/services/${nodeB.id}/tcp`, { name: 'planted', backendPort: 22 }],
    ];
    for (const [method, url, body] of attempts)
      expect(await call(method, url, session, body), `${method} ${url}`).toEqual(NODE_NOT_FOUND);
    const left = await call<{ data: { id: number; backendPort: number; enabled: boolean }[] }>(
      'GET',
      `/api/services/${nodeB.id}/http`,
      owner,
    );
    expect(left.body.data).toHaveLength(1);
    expect(left.body.data[0]).toMatchObject({ id: serviceB, backendPort: 80, enabled: true });
    expect((await call<{ data: object[] }>('GET', `/api/services/${nodeB.id}/tcp`, owner)).body.data).toEqual([]);
    // Its own node in the path and node B's service id: the service is looked up under the path's node, so none.
    for (const [method, url, body] of [
      ['GET', `/api/services/${nodeA.id}/http/${serviceB}`],
      ['PATCH', `/api/services/${nodeA.id}/http/${serviceB}`, { backendPort: 81 }],
      ['PATCH', `/api/services/${nodeA.id}/http/${serviceB}/disable`],
      ['DELETE', `/api/services/${nodeA.id}/http/${serviceB}`],
      ['GET', `/api/services/${nodeA.id}/http/${serviceB}/access`],
      ['PATCH', `/api/services/${nodeA.id}/http/${serviceB}/access`, { mode: 'public' }],
      ['GET', `/api/services/${nodeA.id}/http/${serviceB}/share-links`],
      ['GET', `/api/services/${nodeA.id}/http/${serviceB}/traffic`],
      ['PATCH', `/api/services/${nodeA.id}/http/${serviceB}/health-check`, { enabled: false }],
      ['PATCH', `/api/nodes/${nodeA.id}/pats/${tokenB}/revoke`],
      ['DELETE', `/api/nodes/${nodeA.id}/pats/${tokenB}`],
    ] as [string, string, object?][])
      expect((await call(method, url, session, body)).status, `${method} ${url}`).toBe(404);
    expect(
      (await call<{ enabled: boolean }>('GET', `/api/services/${nodeB.id}/http/${serviceB}`, owner)).body,
    ).toMatchObject({
      enabled: true,
      backendPort: 80,
    });
  });

  it('is told no name of node B’s service its own service collides with (a route or a public port)', async () => {
    const onB = await call<{ id: number }>('POST', `/api/services/${nodeB.id}/http`, owner, {
      name: 'b-secret-route-holder',
      domain: 'c.scope.example.test',
      backendPort: 80,
    });
    const tcpOnB = await call<{ id: number; port: number }>('POST', `/api/services/${nodeB.id}/tcp`, owner, {
      name: 'b-secret-port-holder',
      backendPort: 22,
    });
    expect([onB.status, tcpOnB.status]).toEqual([201, 201]);
    try {
      const mine = await call<{ id: number }>('POST', `/api/services/${nodeA.id}/tcp`, session, {
        name: 'a-tcp',
        backendPort: 23,
      });
      expect(mine.status).toBe(201);
      const collisions: [string, string, object][] = [
        ['POST', `/api/services/${nodeA.id}/http`, { name: 'x', domain: 'c.scope.example.test', backendPort: 80 }],
        ['PATCH', `/api/services/${nodeA.id}/http/${serviceA}`, { domain: 'c.scope.example.test' }],
        ['POST', `/api/services/${nodeA.id}/tcp`, { name: 'x', backendPort: 22, port: tcpOnB.body.port }],
        ['PATCH', `/api/services/${nodeA.id}/tcp/${mine.body.id}`, { port: tcpOnB.body.port }],
      ];
      for (const [method, url, body] of collisions) {
        const answer = await call(method, url, session, body);
        expect(answer.status, `${method} ${url} ${JSON.stringify(body)}`).toBe(422);
        expect(JSON.stringify(answer.body), `${method} ${url}`).not.toMatch(/b-secret|scope-b/);
      }
      // The owner, who sees every node, is told which service holds it.
      const told = await call('POST', `/api/services/${nodeA.id}/http`, owner, collisions[0]?.[2]);
      expect(JSON.stringify(told.body)).toContain('b-secret-route-holder');
      await call('DELETE', `/api/services/${nodeA.id}/tcp/${mine.body.id}`, owner);
    } finally {
      await call('DELETE', `/api/services/${nodeB.id}/http/${onB.body.id}`, owner);
      await call('DELETE', `/api/services/${nodeB.id}/tcp/${tcpOnB.body.id}`, owner);
    }
  });

  it('publishes on no domain another node uses or owns; a new domain or one of its own is fine', async () => {
    const servicesOfB = async () =>
      (await call<{ data: object[] }>('GET', `/api/services?nodeId=${nodeB.id}&limit=100`, owner)).body.data;
    const before = JSON.stringify(await servicesOfB());
    const notYours = {
      body: [{ field: 'domain', message: ruleMessages.domainOfOtherNodes, code: 'domain_of_other_nodes' }],
    };
    const onB = 'b.scope.example.test';
    const attempts: [string, string, object][] = [
      // A path of its own on B's domain would take that path of B's visitors.
      [
        'POST',
        `/api/services/${nodeA.id}/http`,
        { name: 'grab', domain: onB, pathLocation: '/login', backendPort: 80 },
      ],
      ['PATCH', `/api/services/${nodeA.id}/http/${serviceA}`, { domain: onB, pathLocation: '/login' }],
      ['POST', `/api/services/${nodeA.id}/tcp`, { name: 'grab', domain: onB, ssl: true, backendPort: 22 }],
    ];
    for (const [method, url, body] of attempts) {
      const answer = await call<{ errors: object }>(method, url, session, body);
      expect(answer.status, `${method} ${url}`).toBe(422);
      expect(answer.body.errors, `${method} ${url}`).toEqual(notYours);
    }
    // A domain node B owns and no service uses now (its token made it, then the service went).
    const ownedByB = 'only-owned-by-b.scope.example.test';
    const made = await call<{ id: number }>('POST', '/api/agent/services/http', nodeB.token, {
      name: 'gone',
      domain: ownedByB,
      backendPort: 80,
    });
    expect(made.status).toBe(201);
    expect((await call('DELETE', `/api/services/${nodeB.id}/http/${made.body.id}`, owner)).status).toBe(204);
    const onOwned = await call<{ errors: object }>('POST', `/api/services/${nodeA.id}/http`, session, {
      name: 'grab',
      domain: ownedByB,
      backendPort: 80,
    });
    expect([onOwned.status, onOwned.body.errors]).toEqual([422, notYours]);
    expect(JSON.stringify(await servicesOfB())).toBe(before);
    expect(
      (await call<{ domain: string }>('GET', `/api/services/${nodeA.id}/http/${serviceA}`, owner)).body,
    ).toMatchObject({ domain: 'a.scope.example.test', pathLocation: '/' });
    // Its own domain and a new one are its to use.
    const fresh = await call<{ id: number }>('POST', `/api/services/${nodeA.id}/http`, session, {
      name: 'fresh',
      domain: 'fresh-a.scope.example.test',
      backendPort: 80,
    });
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(201);
    const more = await call<{ id: number }>('POST', `/api/services/${nodeA.id}/http`, session, {
      name: 'more',
      domain: 'a.scope.example.test',
      pathLocation: '/more',
      backendPort: 80,
    });
    expect(more.status, JSON.stringify(more.body)).toBe(201);
    for (const id of [fresh.body.id, more.body.id]) await call('DELETE', `/api/services/${nodeA.id}/http/${id}`, owner);
  });

  it('is refused, with the policy’s 403, what would show or change other nodes’ things', async () => {
    const domainB = await domainIdOf('b.scope.example.test');
    for (const [method, url, body] of [
      ['GET', '/api/audit'],
      ['GET', '/api/system/status'],
      ['GET', '/api/system/attention'],
      ['GET', '/api/config/export'],
      ['POST', '/api/nodes', { name: 'outside-any-scope' }],
      // Domains are read-only for a scoped account: a domain's settings reach every service on it.
      ['POST', '/api/domains', { domain: 'planted.scope.example.test' }],
      ['PATCH', `/api/domains/${await domainIdOf('a.scope.example.test')}`, { ssl: 'none' }],
      ['PATCH', `/api/domains/${domainB}`, { ssl: 'none' }],
      ['DELETE', `/api/domains/${domainB}`],
      ['GET', `/api/domains/${domainB}/access`],
    ] as [string, string, object?][]) {
      const answer = await call<{ message: string }>(method, url, session, body);
      expect(answer.status, `${method} ${url}`).toBe(403);
      // The console keeps the session on the policy's refusals.
      expect(isRoleRefusal(answer.body.message), answer.body.message).toBe(true);
      expect(JSON.stringify(answer.body)).not.toContain('scope-b-secret-name');
    }
    expect((await call('GET', `/api/domains/${domainB}`, owner)).status).toBe(200);
  });

  it('sees only node A’s services in the overview, the type lists and the search: no id, name, domain or count of B', async () => {
    const lists: [string, number[]][] = [
      ['/api/services', [serviceA]],
      ['/api/services?sort=node&order=desc', [serviceA]],
      ['/api/services?status=public', [serviceA]],
      [`/api/services?nodeId=${nodeB.id}`, []],
      ['/api/services?q=b.scope', []],
      ['/api/services?domain=b.scope.example.test', []],
      ['/api/services/http', [serviceA]],
      ['/api/services/http?sort=name', [serviceA]],
      ['/api/services/http?q=scope', [serviceA]],
      ['/api/services/http?domain=b.scope.example.test', []],
      ['/api/services/tcp', []],
      ['/api/services/find', [serviceA]],
      ['/api/services/find?q=scope', [serviceA]],
      ['/api/services/find?q=b.scope', []],
    ];
    for (const [url, ids] of lists) {
      const answer = await call<{ data: { id?: number; service?: { id: number } }[]; total: number }>(
        'GET',
        url,
        session,
      );
      expect(answer.status, url).toBe(200);
      expect(
        answer.body.data.map((row) => row.service?.id ?? row.id),
        url,
      ).toEqual(ids);
      expect(answer.body.total, url).toBe(ids.length);
      // Ids are checked above (service ids) and here (node ids); names and domains anywhere in the answer.
      for (const row of answer.body.data as { node?: { id: number } }[])
        if (row.node) expect(row.node.id, url).toBe(nodeA.id);
      const text = JSON.stringify(answer.body);
      for (const secret of ['scope-b', 'b.scope.example.test', `"nodeId":${nodeB.id}`])
        expect(text, url).not.toContain(secret);
    }
    // The owner sees both, so the filter is the scope's.
    expect(
      (await call<{ total: number }>('GET', '/api/services?q=scope.example', owner)).body.total,
    ).toBeGreaterThanOrEqual(2);
  });

  it('sees only the domains that carry a service of node A, read-only; B’s domain is a 404', async () => {
    for (const url of ['/api/domains', '/api/domains?search=scope', '/api/domains?search=b.scope']) {
      const answer = await call<{ data: { domain: string }[]; total: number }>('GET', url, session);
      expect(answer.status, url).toBe(200);
      const expected = url.endsWith('b.scope') ? [] : ['a.scope.example.test'];
      expect(
        answer.body.data.map((row) => row.domain),
        url,
      ).toEqual(expected);
      expect(answer.body.total, url).toBe(expected.length);
    }
    const domainA = await domainIdOf('a.scope.example.test');
    expect((await call<{ domain: string }>('GET', `/api/domains/${domainA}`, session)).body.domain).toBe(
      'a.scope.example.test',
    );
    // A domain node B owns (its token made it) carries a service of node A too: its owner is B's, so it stays hidden.
    const owned = 'owned-by-b.scope.example.test';
    const made = await call('POST', '/api/agent/services/http', nodeB.token, {
      name: 'b',
      domain: owned,
      backendPort: 80,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const onIt = await call<{ id: number }>('POST', `/api/services/${nodeA.id}/http`, owner, {
      name: 'a-on-b',
      domain: owned,
      pathLocation: '/a',
      backendPort: 80,
    });
    expect(onIt.status, JSON.stringify(onIt.body)).toBe(201);
    try {
      const ownedId = await domainIdOf(owned);
      expect((await call<{ ownerNodeId: number }>('GET', `/api/domains/${ownedId}`, owner)).body.ownerNodeId).toBe(
        nodeB.id,
      );
      const listed = await call<{ data: { domain: string }[]; total: number }>('GET', '/api/domains', session);
      expect(listed.body.data.map((row) => row.domain)).toEqual(['a.scope.example.test']);
      expect(JSON.stringify(listed.body)).not.toContain('scope-b-secret-name');
      expect((await call('GET', `/api/domains/${ownedId}`, session)).status).toBe(404);
    } finally {
      await call('DELETE', `/api/services/${nodeA.id}/http/${onIt.body.id}`, owner);
    }
    const domainB = await domainIdOf('b.scope.example.test');
    const notFound = {
      status: 404,
      body: { code: 'not_found', message: 'Domain not found', messageCode: 'domain_not_found' },
    };
    expect(await call('GET', `/api/domains/${domainB}`, session)).toEqual(notFound);
    expect(await call('GET', '/api/domains/999999', session)).toEqual(notFound);
  });

  it('gets figures of node A’s services only', async () => {
    for (const url of [
      '/api/observe/services',
      `/api/observe/services?nodeId=${nodeB.id}`,
      `/api/observe/services?services=http:${serviceA},http:${serviceB}`,
    ]) {
      const answer = await call<{ data: { id: number; nodeId: number }[] }>('GET', url, session);
      expect(answer.status, url).toBe(200);
      expect(
        answer.body.data.map((row) => row.id),
        url,
      ).toEqual(url.includes('nodeId') ? [] : [serviceA]);
    }
  });

  it('follows the log of a service of node A; B’s service is a 404, a domain’s log a 403', async () => {
    const logsOf = async (query: string) => {
      const stream = await connectSse(`${base}/api/logs/stream?token=${session}&${query}`);
      stream.close();
      return stream.status;
    };
    expect(await logsOf(`type=http&id=${serviceA}`)).toBe(200);
    expect(await logsOf(`type=http&id=${serviceB}`)).toBe(404);
    expect(await logsOf('type=http&id=999999')).toBe(404);
    // A domain's lines include every service on it, whatever its node (and requests no service matched).
    expect(await logsOf('domain=a.scope.example.test')).toBe(403);
    expect(await logsOf('domain=b.scope.example.test')).toBe(403);
  });

  it('follows node A on the node stream and sees only A in the list stream; node B there is a 404', async () => {
    const streamOf = async (query: string) => {
      const stream = await connectSse(`${base}/api/nodes/stream?token=${session}${query}`);
      stream.close();
      return stream.status;
    };
    expect(await streamOf(`&id=${nodeA.id}`)).toBe(200);
    expect(await streamOf(`&id=${nodeB.id}`)).toBe(404);
    const list = await connectSse(`${base}/api/nodes/stream?token=${session}&format=page`);
    try {
      expect(list.status).toBe(200);
      const [first] = await list.waitForNamedEvents(1);
      expect((first?.data as { data: { id: number }[] }).data.map((node) => node.id)).toEqual([nodeA.id]);
      // A change of node B reaches no scoped list with B in it.
      await call('PATCH', `/api/nodes/${nodeB.id}`, owner, { name: 'scope-b-renamed-secret' });
      await call('PATCH', `/api/nodes/${nodeA.id}`, owner, { name: 'scope-a-renamed' });
      const deadline = Date.now() + 5000;
      while (!JSON.stringify(list.namedEvents).includes('scope-a-renamed') && Date.now() < deadline)
        await list.waitForNamedEvents(list.namedEvents.length + 1, deadline - Date.now());
      expect(JSON.stringify(list.namedEvents)).toContain('scope-a-renamed');
      expect(JSON.stringify(list.namedEvents)).not.toContain('scope-b');
    } finally {
      list.close();
      await call('PATCH', `/api/nodes/${nodeB.id}`, owner, { name: 'scope-b-secret-name' });
      await call('PATCH', `/api/nodes/${nodeA.id}`, owner, { name: 'scope-a' });
    }
  });
});

describe('the account answer', () => {
  it('carries the scope that counts: the nodes of a scoped account, null for an admin whatever it holds', async () => {
    const nodesOf = async (session: string) =>
      (await call<CurrentAccount & { nodes?: unknown }>('GET', '/api/auth/account', session)).body.nodes;
    expect(await nodesOf((await scoped('operator')).session)).toEqual([nodeA.id]);
    expect(await nodesOf((await scoped('viewer')).session)).toEqual([nodeA.id]);
    expect(await nodesOf((await scoped('admin')).session)).toBeNull();
    expect(await nodesOf(owner)).toBeNull();
    // The OpenAPI document says so.
    type Described = { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    const openapi = await call<{ paths: Record<string, Record<string, { responses: Record<string, Described> }>> }>(
      'GET',
      '/api/openapi.json',
      null,
    );
    const answer = openapi.body.paths['/api/auth/account']?.get?.responses['200']?.content['application/json'];
    expect(answer?.schema.properties.nodes).toMatchObject({ type: 'array', nullable: true });
  });
});

describe('the scope', () => {
  it('limits a viewer too; a wider scope counts from the next request, a narrower one ends its sessions and streams', async () => {
    const viewer = await scoped('viewer');
    expect(await call('GET', `/api/nodes/${nodeB.id}`, viewer.session)).toEqual(NODE_NOT_FOUND);
    await call('PATCH', `/api/accounts/${viewer.id}`, owner, { nodes: [nodeA.id, nodeB.id] });
    expect((await call('GET', `/api/nodes/${nodeB.id}`, viewer.session)).status).toBe(200);
    const stream = await connectSse(`${base}/api/nodes/stream?token=${viewer.session}&id=${nodeB.id}`);
    expect(stream.status).toBe(200);
    const ended = new Promise<'ended'>((resolve) => stream.onEnd(() => resolve('ended')));
    await call('PATCH', `/api/accounts/${viewer.id}`, owner, { nodes: [nodeA.id] });
    expect((await call('GET', `/api/nodes/${nodeA.id}`, viewer.session)).status).toBe(401);
    // Ended by the server, within the 1 s every gateway promises (the deadline only bounds a failure).
    const late = new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 5000).unref());
    expect(await Promise.race([ended, late])).toBe('ended');
    stream.close();
    // Every node again: a widening, the account's sessions were not touched by it.
    const again = await scoped('viewer');
    await call('PATCH', `/api/accounts/${again.id}`, owner, { nodes: null });
    expect((await call('GET', '/api/services', again.session)).status).toBe(200);
  });

  it('does not limit an admin (owners and admins see every node)', async () => {
    const admin = await scoped('admin');
    expect((await call('GET', `/api/nodes/${nodeB.id}`, admin.session)).status).toBe(200);
    expect((await call<{ total: number }>('GET', '/api/nodes', admin.session)).body.total).toBeGreaterThanOrEqual(2);
  });
});
