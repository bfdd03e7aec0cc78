import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';

// A tenant's burst of changes must not hold up another tenant's change (dataplane/README.md "Scoped applies"):
// changes arriving while the data plane applies are merged into its next run, so a change waits for at most the run
// in flight and its own, however many changes another node's token sends at once.

let t: TestApp;

async function createService(token: string, name: string, domain: string) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/agent/services/http',
    headers: { authorization: `Bearer ${token}` },
    payload: { name, domain, backendPort: 80 },
  });
  return { status: response.statusCode, body: response.json<{ id: number; message?: string }>() };
}

/** A node made by the operator (`admin`'s session), with its token. */
async function createNode(admin: string, name: string) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/nodes',
    headers: { authorization: `Bearer ${admin}` },
    payload: { name },
  });
  return response.json<{ id: number; token: string }>();
}

describe("a node token's burst of changes", () => {
  beforeEach(async () => {
    t = await buildTestApp({ env: { POSTERN_NODE_MAX_SERVICES: '100', POSTERN_NODE_MAX_DOMAINS: '100' } });
  });
  afterEach(() => t.cleanup());

  it("cannot starve another tenant's change: it is served after at most two runs", async () => {
    const admin = await t.login();
    const newNode = (name: string) => createNode(admin, name);
    const noisy = await newNode('noisy');
    const quiet = await newNode('quiet');
    // The first change after the start is a full run; the burst below is what scoped runs see.
    expect((await createService(noisy.token, 'warm', 'warm.noisy.test')).status).toBe(201);
    // nginx taking a few milliseconds per push, so that changes pile up behind the run in flight.
    const plane = t.fakeDataPlane;
    const push = plane.proxy.patchRoutes.bind(plane.proxy);
    plane.proxy.patchRoutes = async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return push(...args);
    };
    // How many runs the quiet tenant's change waited for, from its apply call to its answer.
    const apply = plane.apply.bind(plane);
    let runsWaited = -1;
    (plane as { apply: typeof plane.apply }).apply = async (scope) => {
      const before = plane.applyCount;
      const result = await apply(scope);
      if (scope?.hosts.includes('shop.quiet.test')) runsWaited = plane.applyCount - before;
      return result;
    };

    const burst = Array.from({ length: 60 }, (_, i) => createService(noisy.token, `n${i}`, `n${i}.noisy.test`));
    const own = await createService(quiet.token, 'shop', 'shop.quiet.test');
    expect(own.status).toBe(201);
    expect(plane.proxy.routes.get('shop.quiet.test')).toContain(`"s":${own.body.id}`);
    expect(runsWaited).toBeGreaterThan(0);
    expect(runsWaited).toBeLessThanOrEqual(2);

    const answers = await Promise.all(burst);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
    for (let i = 0; i < 60; i++) expect(plane.proxy.routes.has(`n${i}.noisy.test`)).toBe(true);
  });
});

describe("a node token's TCP/UDP changes", () => {
  beforeEach(async () => {
    t = await buildTestApp({ env: { POSTERN_TCP_PORT_RANGE: '30000-30100' } });
  });
  afterEach(() => t.cleanup());

  it("start and stop its own instance alone: another node's keeps running, untouched and out of its reach", async () => {
    const admin = await t.login();
    const newNode = (name: string) => createNode(admin, name);
    const agent = async (token: string, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) => {
      const response = await t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${token}` },
        ...(payload ? { payload } : {}),
      });
      const body = response.body === '' ? {} : response.json<object>();
      return { status: response.statusCode, body: body as { id: number; port: number } };
    };
    const noisy = await newNode('noisy');
    const quiet = await newNode('quiet');
    const mine = await agent(quiet.token, 'POST', '/api/agent/services/tcp', { name: 'db', backendPort: 5432 });
    expect(mine.status).toBe(201);
    const plane = t.fakeDataPlane;
    const quietKey = `tcp-${mine.body.port}`;
    const quietInstance = plane.proxy.streams.get(quietKey);
    expect(quietInstance).toBeDefined();
    const patchesBefore = plane.proxy.streamPatches.length;
    const syncsBefore = plane.proxy.streamSyncs;

    const theirs = await agent(noisy.token, 'POST', '/api/agent/services/tcp', { name: 'mq', backendPort: 1883 });
    expect(theirs.status).toBe(201);
    const noisyKey = `tcp-${theirs.body.port}`;
    const url = `/api/agent/services/tcp/${theirs.body.id}`;
    expect((await agent(noisy.token, 'PATCH', `${url}/disable`)).status).toBe(200);
    expect((await agent(noisy.token, 'PATCH', `${url}/enable`)).status).toBe(200);
    expect((await agent(noisy.token, 'DELETE', url)).status).toBe(204);
    // Another node's service is out of reach: nothing is stopped.
    const foreign = `/api/agent/services/tcp/${mine.body.id}`;
    expect((await agent(noisy.token, 'PATCH', `${foreign}/disable`)).status).toBe(404);
    expect((await agent(noisy.token, 'DELETE', foreign)).status).toBe(404);

    // Each change started or stopped the noisy node's instance alone; no full sync of every instance ran.
    expect(plane.proxy.streamPatches.slice(patchesBefore)).toEqual([
      { started: [noisyKey], stopped: [] },
      { started: [], stopped: [noisyKey] },
      { started: [noisyKey], stopped: [] },
      { started: [], stopped: [noisyKey] },
    ]);
    expect(plane.proxy.streamSyncs).toBe(syncsBefore);
    // The quiet node's instance is the one started at first (never replaced, so its sessions were never cut).
    expect(plane.proxy.streams.get(quietKey)).toBe(quietInstance);
    expect([...plane.proxy.streams.keys()]).toEqual([quietKey]);
  });
});
