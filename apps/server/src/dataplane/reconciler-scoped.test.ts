import { describe, expect, it } from 'vitest';
import { isWildcardDomainName, wildcardOf } from '@postern/contract';
import { createRecordingReconciler } from './offline.js';
import { createScopedWorld, EMPTY_STATE, gate, httpRoute, TEST_RENDER_OPTIONS, until } from './test-support.js';
import type { ApplyScope, DesiredHttpRoute, DesiredState, ScopedState } from './types.js';

// Scoped runs (README "Scoped applies"): a change loads, plans and pushes only the hosts it touches, and what nginx
// then holds is exactly what a full run would have made of the same rows.

const http = (serviceId: number, domain: string | null, over: Partial<DesiredHttpRoute> = {}): DesiredHttpRoute =>
  httpRoute({ serviceId, domain, ...over });
const domain = (domainId: number, name: string) => ({ domainId, domain: name, ssl: 'self-signed' as const });

/** What db/desired-state.ts `loadScopedState` reads, from a state in memory (its own test checks it against SQL). */
function scopedOf(state: DesiredState, scope: ApplyScope): ScopedState {
  const hosts = new Set(scope.hosts);
  for (const host of scope.hosts) {
    if (host === '') continue;
    if (isWildcardDomainName(host)) {
      for (const d of state.domains) if (wildcardOf(d.domain) === host) hosts.add(d.domain);
    } else {
      const wildcard = wildcardOf(host);
      if (wildcard !== null) hosts.add(wildcard);
    }
  }
  return {
    hosts: [...hosts],
    http: state.http.filter((route) => hosts.has(route.domain ?? '')),
    domains: state.domains.filter((d) => hosts.has(d.domain)),
    tokenNetworks: state.peers.some((peer) => peer.networksByToken === true),
  };
}

function setup(initial: DesiredState) {
  const world = createScopedWorld(
    initial,
    scopedOf,
    (scope) => `${[...scope.hosts].sort().join(',')} ${[...scope.http].sort((a, b) => a - b).join(',')}`,
  );
  return {
    ...world,
    /** What a full run would make nginx hold now. */
    full: () => world.plan().routes.hosts,
    lastPatch: () => world.proxy.patches.at(-1),
  };
}

const ids = (json: string | undefined): number[] => (JSON.parse(json ?? '[]') as { s: number }[]).map((r) => r.s);

describe('scoped runs', () => {
  const base: DesiredState = {
    ...EMPTY_STATE,
    domains: [domain(1, 'x.test'), domain(2, 'y.test')],
    http: [http(1, 'x.test'), http(2, 'y.test'), http(3, null, { pathLocation: '/z' })],
  };

  it('a change to a service on host x pushes x alone, as a full run would have it, loading nothing else', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    t.set({ ...base, http: [http(1, 'x.test', { backendPort: 81 }), ...base.http.slice(1)] });
    const result = await t.reconciler.apply({ hosts: ['x.test'], http: [1] });
    expect(result).toMatchObject({ ok: true });
    expect(t.runs).toEqual(['full', 'scoped x.test 1']);
    expect(t.lastPatch()).toEqual({ set: ['x.test'], del: [] });
    expect(t.proxy.routeSyncs).toBe(1);
    expect(t.proxy.routes).toEqual(t.full());
    // Its connections, and only its host's services', are looked at.
    expect(t.proxy.cutScopes.at(-1)).toEqual([1]);
  });

  it("a new service asks nginx for no live requests (none can be stale); a changed or deleted one's are looked at", async () => {
    const t = setup(base);
    await t.reconciler.apply();
    const cuts = () => t.proxy.cutScopes.length;
    const afterBoot = cuts();
    // Created on a served host and on a new one (a burst's creates): x.test's service 1 is served as it was.
    let state: DesiredState = {
      ...base,
      domains: [...base.domains, domain(3, 'n.test')],
      http: [...base.http, http(4, 'x.test', { pathLocation: '/four' }), http(5, 'n.test')],
    };
    t.set(state);
    expect(await t.reconciler.apply({ hosts: ['x.test', 'n.test'], http: [4, 5] })).toMatchObject({ ok: true });
    expect(t.proxy.routes).toEqual(t.full());
    expect(cuts()).toBe(afterBoot);
    // The new service changed: it was served, so its requests are looked at.
    state = { ...state, http: state.http.map((r) => (r.serviceId === 5 ? { ...r, backendPort: 81 } : r)) };
    t.set(state);
    await t.reconciler.apply({ hosts: ['n.test'], http: [5] });
    expect(t.proxy.cutScopes.at(-1)).toEqual([5]);
    // Deleted: looked at (its requests are all stale).
    const withoutFour = { ...state, http: state.http.filter((r) => r.serviceId !== 4) };
    t.set(withoutFour);
    const beforeDelete = cuts();
    await t.reconciler.apply({ hosts: ['x.test'], http: [4] });
    expect(cuts()).toBe(beforeDelete + 1);
    // A cut that fails leaves nothing known: the next run looks, even at a new service.
    const cutStale = t.proxy.cutStale.bind(t.proxy);
    t.proxy.cutStale = () => Promise.reject(new Error('ss: cannot open netlink socket'));
    t.set({ ...withoutFour, http: withoutFour.http.map((r) => (r.serviceId === 2 ? { ...r, backendPort: 82 } : r)) });
    expect(await t.reconciler.apply({ hosts: ['y.test'], http: [2] })).toMatchObject({ ok: false });
    t.proxy.cutStale = cutStale;
    t.set({
      ...withoutFour,
      domains: [...withoutFour.domains, domain(4, 'm.test')],
      http: [...withoutFour.http, http(6, 'm.test')],
    });
    const beforeNew = cuts();
    await t.reconciler.apply({ hosts: ['m.test'], http: [6] });
    expect(cuts()).toBe(beforeNew + 1);
  });

  it('moving a service pushes both hosts; deleting the last service of a host removes its key', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    t.set({ ...base, http: [http(1, 'y.test', { pathLocation: '/one' }), ...base.http.slice(1)] });
    await t.reconciler.apply({ hosts: ['x.test', 'y.test'], http: [1] });
    expect(t.lastPatch()).toEqual({ set: ['y.test'], del: ['x.test'] });
    expect(ids(t.proxy.routes.get('y.test'))).toEqual([1, 2]);
    expect(t.proxy.routes).toEqual(t.full());
    t.set({ ...base, http: [http(1, 'y.test', { pathLocation: '/one' }), http(3, null, { pathLocation: '/z' })] });
    await t.reconciler.apply({ hosts: ['y.test'], http: [2] });
    t.set({ ...base, http: [http(3, null, { pathLocation: '/z' })] });
    await t.reconciler.apply({ hosts: ['y.test'], http: [1] });
    expect(t.lastPatch()).toEqual({ set: [], del: ['y.test'] });
    expect(t.proxy.routes.has('y.test')).toBe(false);
    expect(t.proxy.routes).toEqual(t.full());
    expect(t.proxy.routeSyncs).toBe(1);
  });

  it("a wildcard's first service gives its exact names below it an empty list, and its last takes it away", async () => {
    const wild: DesiredState = {
      ...EMPTY_STATE,
      domains: [domain(1, '*.w.test'), domain(2, 'own.w.test'), domain(3, 'other.test')],
      http: [http(5, 'other.test')],
    };
    const t = setup(wild);
    await t.reconciler.apply();
    expect(t.proxy.routes.has('own.w.test')).toBe(false);
    t.set({ ...wild, http: [...wild.http, http(6, '*.w.test')] });
    await t.reconciler.apply({ hosts: ['*.w.test'], http: [6] });
    expect(t.runs.at(-1)).toBe('scoped *.w.test 6');
    expect(t.proxy.routes.get('own.w.test')).toBe('[]');
    expect(t.lastPatch()).toEqual({ set: ['*.w.test', 'own.w.test'], del: [] });
    expect(t.proxy.routes).toEqual(t.full());
    // The exact name gets a service of its own, then loses it: the wildcard (loaded with it) keeps it at [].
    t.set({ ...wild, http: [...wild.http, http(6, '*.w.test'), http(7, 'own.w.test')] });
    await t.reconciler.apply({ hosts: ['own.w.test'], http: [7] });
    expect(ids(t.proxy.routes.get('own.w.test'))).toEqual([7]);
    t.set({ ...wild, http: [...wild.http, http(6, '*.w.test')] });
    await t.reconciler.apply({ hosts: ['own.w.test'], http: [7] });
    expect(t.proxy.routes.get('own.w.test')).toBe('[]');
    t.set(wild);
    await t.reconciler.apply({ hosts: ['*.w.test'], http: [6] });
    expect(t.lastPatch()).toEqual({ set: [], del: ['*.w.test', 'own.w.test'] });
    expect(t.proxy.routes).toEqual(t.full());
  });

  it("a scoped run's rejections speak for its hosts' services only; a path taken on the host is set aside", async () => {
    const t = setup(base);
    await t.reconciler.apply();
    t.set({ ...base, http: [...base.http, http(4, 'x.test')] });
    const result = await t.reconciler.apply({ hosts: ['x.test'], http: [4] });
    expect(Object.fromEntries(result.rejected.http)).toEqual({ 4: 'another service already serves / on x.test' });
    expect(result.scopedHttp).toEqual(new Set([1, 4]));
    expect(t.proxy.routes).toEqual(t.full());
  });

  it('scopes arriving during a full run go beside it, merged, and a queued full run goes after it', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    const held = gate();
    t.holdFullRuns(held.opened);
    const inFlight = t.reconciler.apply();
    const queuedFull = t.reconciler.apply();
    t.set({
      ...base,
      http: [http(1, 'x.test', { backendPort: 82 }), http(2, 'y.test', { backendPort: 82 }), base.http[2] as never],
    });
    const first = t.reconciler.apply({ hosts: ['x.test'], http: [1] });
    const second = t.reconciler.apply({ hosts: ['y.test'], http: [3] });
    const third = t.reconciler.apply({ hosts: ['y.test'], http: [2] });
    // Served while the full run is held.
    await Promise.all([first, second, third]);
    expect(t.runs).toEqual(['full', 'full', 'scoped x.test 1', 'scoped y.test 2,3']);
    expect(t.proxy.routes).toEqual(t.full());
    t.holdFullRuns(null);
    held.open();
    await Promise.all([inFlight, queuedFull]);
    expect(t.runs).toEqual(['full', 'full', 'scoped x.test 1', 'scoped y.test 2,3', 'full']);
    expect(t.proxy.routes).toEqual(t.full());
  });

  it('a change during a slow full run (the boot) is served before it ends; the full run keeps what it pushed', async () => {
    const t = setup(base);
    const held = gate();
    t.holdFullRuns(held.opened);
    // The boot's full run: nginx serves its snapshot meanwhile (here: what it held before).
    const boot = t.reconciler.apply();
    // Service 1 changes its backend; a new domain z.test gets service 4.
    t.set({
      ...base,
      domains: [...base.domains, domain(3, 'z.test')],
      http: [http(1, 'x.test', { backendPort: 81 }), ...base.http.slice(1), http(4, 'z.test')],
    });
    const result = await t.reconciler.apply({ hosts: ['x.test', 'z.test'], http: [1, 4] });
    expect(result).toMatchObject({ ok: true });
    expect(t.proxy.routes.get('x.test')).toEqual(t.full().get('x.test'));
    expect(t.proxy.routes.get('z.test')).toEqual(t.full().get('z.test'));
    held.open();
    // The boot read the rows before the change: it leaves x.test and z.test as the change pushed them, keeps z.test's
    // certificate and does not count service 1's connections as stale.
    expect(await boot).toMatchObject({ ok: true });
    expect(t.runs).toEqual(['full', 'scoped x.test,z.test 1,4']);
    expect(t.proxy.routes).toEqual(t.full());
    expect(t.certs.infos.has('z.test')).toBe(true);
    const { revisions } = t.plan().routes;
    expect(t.proxy.lastFullCut?.get(1)).toBe(revisions.get(1));
    expect(t.proxy.lastFullCut?.get(4)).toBe(revisions.get(4));
  });

  it("a change during the boot's walk of the PEMs on disk is pushed without waiting for it; the walk keeps its PEM", async () => {
    const t = setup(base);
    // The boot's prune lists every PEM on disk (100,000 files at the supported size): held here until the change is in.
    const walk = gate();
    const list = t.certs.listPems.bind(t.certs);
    let walks = 0;
    t.certs.listPems = async () => {
      walks++;
      await walk.opened;
      return list();
    };
    const boot = t.reconciler.apply();
    await until(() => walks === 1);
    t.set({ ...base, domains: [...base.domains, domain(3, 'z.test')], http: [...base.http, http(4, 'z.test')] });
    let isServed = false;
    const change = t.reconciler.apply({ hosts: ['z.test'], http: [4] }).then((result) => {
      isServed = true;
      return result;
    });
    await until(() => isServed);
    expect(await change).toMatchObject({ ok: true });
    expect(t.proxy.routes.get('z.test')).toEqual(t.full().get('z.test'));
    walk.open();
    expect(await boot).toMatchObject({ ok: true });
    expect(t.runs).toEqual(['full', 'scoped z.test 4']);
    expect(t.proxy.routes).toEqual(t.full());
    // Made by the change after the boot read its rows: neither the walk nor the boot's prune takes it away.
    expect(t.certs.infos.has('z.test')).toBe(true);
    expect(t.proxy.certificates.has('z.test')).toBe(true);
  });

  it('a full run queued behind a burst of scoped ones runs after the next scoped run, not after the burst', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    const held = gate();
    t.holdScopedRuns(held.opened);
    const burst: Promise<unknown>[] = [t.reconciler.apply({ hosts: ['x.test'], http: [1] })];
    await until(() => t.runs.length === 2);
    t.holdScopedRuns(null);
    burst.push(t.reconciler.apply(), t.reconciler.apply({ hosts: ['y.test'], http: [2] }));
    held.open();
    await Promise.all(burst);
    expect(t.runs).toEqual(['full', 'scoped x.test 1', 'full', 'scoped y.test 2']);
  });

  it('changes arriving together share one scoped run', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    t.set({ ...base, http: [http(1, 'x.test', { backendPort: 81 }), http(2, 'y.test', { backendPort: 81 })] });
    const results = await Promise.all([
      t.reconciler.apply({ hosts: ['x.test'], http: [1] }),
      t.reconciler.apply({ hosts: ['y.test'], http: [2] }),
      t.reconciler.apply({ hosts: [''], http: [3] }),
    ]);
    expect(results.every((result) => result.ok)).toBe(true);
    expect(t.runs).toEqual(['full', 'scoped ,x.test,y.test 1,2,3']);
    expect(t.proxy.routes).toEqual(t.full());
  });

  it('N changes during one slow scoped run are served by one more run, every one of them', async () => {
    const many: DesiredState = {
      ...base,
      domains: Array.from({ length: 40 }, (_, i) => domain(i + 1, `h${i}.test`)),
      http: Array.from({ length: 40 }, (_, i) => http(i + 1, `h${i}.test`)),
    };
    const t = setup(many);
    await t.reconciler.apply();
    const held = gate();
    t.holdScopedRuns(held.opened);
    const edited = (upTo: number) =>
      many.http.map((route, i) => (i <= upTo ? { ...route, backendPort: 9000 + i } : route));
    t.set({ ...many, http: edited(0) });
    const calls = [t.reconciler.apply({ hosts: ['h0.test'], http: [1] })];
    await until(() => t.runs.length === 2);
    // 39 more changes, each committed before it asks, while the first run is held.
    for (let i = 1; i < 40; i++) {
      t.set({ ...many, http: edited(i) });
      calls.push(t.reconciler.apply({ hosts: [`h${i}.test`], http: [i + 1] }));
    }
    t.holdScopedRuns(null);
    held.open();
    const results = await Promise.all(calls);
    expect(results.every((result) => result.ok)).toBe(true);
    expect(t.runs).toHaveLength(3);
    expect(t.proxy.routes).toEqual(t.full());
  });

  it('a scoped run that fails leaves its scope owed: the next run takes it along, none is lost', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    t.set({ ...base, http: [http(1, 'x.test', { backendPort: 81 }), ...base.http.slice(1)] });
    const patchRoutes = t.proxy.patchRoutes.bind(t.proxy);
    t.proxy.patchRoutes = () => Promise.reject(new Error('nginx: connection refused'));
    expect(await t.reconciler.apply({ hosts: ['x.test'], http: [1] })).toMatchObject({ ok: false });
    expect(t.proxy.routes.get('x.test')).not.toEqual(t.full().get('x.test'));
    t.proxy.patchRoutes = patchRoutes;
    // Another change, on another host: its run serves x.test too.
    t.set({
      ...base,
      http: [http(1, 'x.test', { backendPort: 81 }), http(2, 'y.test', { backendPort: 81 }), base.http[2] as never],
    });
    expect(await t.reconciler.apply({ hosts: ['y.test'], http: [2] })).toMatchObject({ ok: true });
    expect(t.runs.at(-1)).toBe('scoped x.test,y.test 1,2');
    expect(t.proxy.routes).toEqual(t.full());
    // Settled: the next run carries nothing along.
    await t.reconciler.apply({ hosts: ['y.test'], http: [2] });
    expect(t.runs.at(-1)).toBe('scoped y.test 2');
  });

  it('a scope owed by a failed run is settled by a full run that starts after it; after a failed one, all is applied', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    const cutStale = t.proxy.cutStale.bind(t.proxy);
    // Fails midway: the routes were pushed, the cut-off (of service 1, served otherwise now) was not.
    t.proxy.cutStale = () => Promise.reject(new Error('ss: cannot open netlink socket'));
    t.set({ ...base, http: [http(1, 'x.test', { backendPort: 82 }), ...base.http.slice(1)] });
    expect(await t.reconciler.apply({ hosts: ['x.test'], http: [1] })).toMatchObject({ ok: false });
    t.proxy.cutStale = cutStale;
    expect(await t.reconciler.apply()).toMatchObject({ ok: true });
    await t.reconciler.apply({ hosts: ['y.test'], http: [2] });
    expect(t.runs.at(-1)).toBe('scoped y.test 2');
    // A full run that fails settles nothing: the next change applies everything.
    const unreadable = Promise.reject(new Error('database is locked'));
    unreadable.catch(() => undefined);
    t.holdFullRuns(unreadable);
    expect(await t.reconciler.apply()).toMatchObject({ ok: false });
    t.holdFullRuns(null);
    t.set({ ...base, http: [http(1, 'x.test', { backendPort: 83 }), ...base.http.slice(1)] });
    expect(await t.reconciler.apply({ hosts: ['y.test'], http: [2] })).toMatchObject({ ok: true });
    expect(t.runs.slice(-3)).toEqual(['scoped y.test 2', 'full', 'full']);
    expect(t.proxy.routes).toEqual(t.full());
  });

  it('before a full run has succeeded, and with services set aside for lack of room, a scope applies everything', async () => {
    const t = setup(base);
    await t.reconciler.apply({ hosts: ['x.test'], http: [1] });
    expect(t.runs).toEqual(['full']);
    t.proxy.noRoomFor.add('x.test');
    t.set({ ...base, http: [http(1, 'x.test', { pathLocation: '/bigger' }), ...base.http.slice(1)] });
    const result = await t.reconciler.apply({ hosts: ['x.test'], http: [1] });
    expect(t.runs).toEqual(['full', 'scoped x.test 1', 'full']);
    expect(result.scopedHttp).toBeUndefined();
    expect(result.rejected.http.get(1)).toMatch(/^nginx has no room for/);
  });

  it("while a node's token set subnets (checked against every backend), every change applies everything", async () => {
    const withToken: DesiredState = {
      ...base,
      peers: [
        {
          nodeId: 2,
          publicKey: 'K',
          presharedKey: null,
          address: '10.44.0.2',
          allowedIps: ['10.44.0.2/32', '10.30.0.0/24'],
          networksByToken: true,
        },
      ],
    };
    const t = setup(withToken);
    await t.reconciler.apply();
    await t.reconciler.apply({ hosts: ['x.test'], http: [1] });
    expect(t.runs).toEqual(['full', 'full']);
    // Beside a full run in flight (the boot's), the scope's rows say so.
    const held = gate();
    t.holdFullRuns(held.opened);
    const inFlight = t.reconciler.apply();
    const beside = t.reconciler.apply({ hosts: ['x.test'], http: [1] });
    t.holdFullRuns(null);
    held.open();
    await Promise.all([inFlight, beside]);
    expect(t.runs).toEqual(['full', 'full', 'full', 'scoped x.test 1', 'full']);
    t.set(base);
    await t.reconciler.apply();
    await t.reconciler.apply({ hosts: ['x.test'], http: [1] });
    expect(t.runs.slice(5)).toEqual(['full', 'scoped x.test 1']);
  });
});

describe('a run that cannot read the rows', () => {
  it('speaks for no row, full or scoped: what is stored of every row stays', async () => {
    const none = { scopedHttp: new Set(), scopedTcp: new Set(), scopedNodes: new Set() };
    const failing = () => Promise.reject(new Error('database is locked'));
    const { reconciler } = createRecordingReconciler({
      loadDesiredState: failing,
      loadScopedState: failing,
      render: TEST_RENDER_OPTIONS,
    });
    const full = await reconciler.apply();
    expect(full).toMatchObject({ ok: false, message: 'database is locked', ...none });
    const scoped = await reconciler.apply({ hosts: ['x.test'], http: [1], nodes: [2] });
    expect(scoped).toMatchObject({ ok: false, message: 'database is locked', ...none });
  });
});
