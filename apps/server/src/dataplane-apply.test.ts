import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { sqliteClientOf } from './db/client.js';
import { VALUES_PER_QUERY } from './db/parts.js';
import { httpServices, nodes } from './db/schema.js';
import { applyChanges } from './dataplane-apply.js';
import { insertNode } from './modules/services/test-support.js';
import { buildTestApp, type TestApp } from './test/build-test-app.js';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await t.cleanup();
});

/** The variables of each statement the embedded engine runs from now on (none counted on PostgreSQL). */
function countStatements(): number[] {
  const variables: number[] = [];
  if (t.db.engine !== 'sqlite') return variables;
  const statement = Object.getPrototypeOf(sqliteClientOf(t.db).prepare('select 1')) as Record<
    'all' | 'get' | 'run',
    (...params: unknown[]) => unknown
  >;
  for (const method of ['all', 'get', 'run'] as const) {
    const original = statement[method];
    vi.spyOn(statement, method).mockImplementation(function (this: unknown, ...params: unknown[]) {
      variables.push(params.length);
      return original.apply(this, params);
    });
  }
  return variables;
}

test("a burst's run speaking for thousands of services clears a stored rejection among them, in bounded queries", async () => {
  const node = await insertNode(t.deps);
  const [row] = await t.db.write(
    async (tx) =>
      await tx
        .insert(httpServices)
        .values({ nodeId: node.id, name: 'web', domain: 'a.example.com', backendHost: 'x', applyError: 'refused' })
        .returning({ id: httpServices.id })
        .all(),
  );
  const id = row?.id ?? 0;
  // Merged from 1,200 changes: the service with a stored reason last, in the third part.
  const scopedHttp = new Set([...Array.from({ length: 1200 }, (_, i) => 100_000 + i), id]);
  t.fakeDataPlane.apply = () =>
    Promise.resolve({ ok: true, rejected: { http: new Map(), tcp: new Map(), nodes: new Map() }, scopedHttp });
  const variables = countStatements();
  await applyChanges(t.deps, undefined, { hosts: ['a.example.com'], http: [id] });
  vi.restoreAllMocks();
  const stored = await t.db
    .select({ applyError: httpServices.applyError })
    .from(httpServices)
    .where(eq(httpServices.id, id))
    .get();
  expect(stored?.applyError).toBeNull();
  if (t.db.engine === 'sqlite') {
    expect(Math.max(...variables)).toBeLessThanOrEqual(VALUES_PER_QUERY + 2);
    // The look-up (three parts) and the clearing update (three parts).
    expect(variables.filter((count) => count > 100)).toHaveLength(6);
  }
});

test("a change's run clears the stored rejection of its service and of its node (short lists, each its own table)", async () => {
  const node = await insertNode(t.deps);
  const [row] = await t.db.write(async (tx) => {
    await tx.update(nodes).set({ applyError: 'peer refused' }).where(eq(nodes.id, node.id)).run();
    return await tx
      .insert(httpServices)
      .values({ nodeId: node.id, name: 'web', domain: 'a.example.com', backendHost: 'x', applyError: 'refused' })
      .returning({ id: httpServices.id })
      .all();
  });
  const id = row?.id ?? 0;
  const rejected = { http: new Map(), tcp: new Map(), nodes: new Map() };
  // The node's run first (its lookup prepared before the service's of the same length), then the service's.
  t.fakeDataPlane.apply = () =>
    Promise.resolve({ ok: true, rejected, scopedHttp: new Set<number>(), scopedNodes: new Set([node.id]) });
  await applyChanges(t.deps, undefined, { hosts: [], http: [], nodes: [node.id] });
  t.fakeDataPlane.apply = () => Promise.resolve({ ok: true, rejected, scopedHttp: new Set([id]) });
  await applyChanges(t.deps, undefined, { hosts: ['a.example.com'], http: [id] });
  const service = await t.db.select().from(httpServices).where(eq(httpServices.id, id)).get();
  const stored = await t.db.select().from(nodes).where(eq(nodes.id, node.id)).get();
  expect({ service: service?.applyError, node: stored?.applyError }).toEqual({ service: null, node: null });
});

test("a full run's verdict leaves alone the rows a scoped run that read after it spoke for (its rows are newer)", async () => {
  const node = await insertNode(t.deps);
  const other = await insertNode(t.deps, { address: '10.44.0.9' });
  const [newer, older] = await t.db.write(async (tx) => {
    // What the scoped run stored: the node's new subnet refused, its service served.
    await tx.update(nodes).set({ applyError: 'peer refused' }).where(eq(nodes.id, node.id)).run();
    await tx.update(nodes).set({ applyError: 'stale' }).where(eq(nodes.id, other.id)).run();
    return await tx
      .insert(httpServices)
      .values([
        { nodeId: node.id, name: 'web', domain: 'a.example.com', backendHost: 'x' },
        { nodeId: other.id, name: 'old', domain: 'b.example.com', backendHost: 'y', applyError: 'stale' },
      ])
      .returning({ id: httpServices.id })
      .all();
  });
  const newerId = newer?.id ?? 0;
  // The full run read the rows before: it saw the node served and the service refused; of the others it is the newest.
  t.fakeDataPlane.apply = () =>
    Promise.resolve({
      ok: true,
      rejected: { http: new Map([[newerId, 'no room']]), tcp: new Map(), nodes: new Map() },
      newerVerdicts: () => ({ http: new Set([newerId]), tcp: new Set(), nodes: new Set([node.id]) }),
    });
  await applyChanges(t.deps);
  const node1 = await t.db.select({ e: nodes.applyError }).from(nodes).where(eq(nodes.id, node.id)).get();
  const node2 = await t.db.select({ e: nodes.applyError }).from(nodes).where(eq(nodes.id, other.id)).get();
  const stored = await t.db.select({ id: httpServices.id, e: httpServices.applyError }).from(httpServices).all();
  expect(node1?.e).toBe('peer refused');
  expect(stored).toEqual([
    { id: newerId, e: null },
    { id: older?.id, e: null },
  ]);
  // Its verdict on the rows no newer run spoke for still holds.
  expect(node2?.e).toBeNull();
});
