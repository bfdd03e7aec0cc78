import { describe, expect, it } from 'vitest';
import { streamKey } from '../model/desired-state.js';
import { createScopedWorld, EMPTY_STATE, gate, httpRoute, streamRoute, until } from './test-support.js';
import type { GuardedState } from './reconcile/network-guard.js';
import type { ApplyScope, DesiredPeer, DesiredState, ScopedState } from './types.js';

// Scoped runs of node changes (README "Scoped applies"): a node's change sets, changes or removes its own WireGuard
// peer alone and re-plans the hosts and instances of its own services; the result is what a full run of the same rows
// makes, peers included.

const key = (c: string): string => `${c.repeat(43)}=`;
const peer = (nodeId: number, over: Partial<DesiredPeer> = {}): DesiredPeer => ({
  nodeId,
  publicKey: key(String.fromCharCode(64 + nodeId)),
  presharedKey: null,
  address: `10.44.0.${String(nodeId)}`,
  allowedIps: [`10.44.0.${String(nodeId)}/32`],
  allowInternet: false,
  ...over,
});
const domain = (domainId: number, name: string) => ({ domainId, domain: name, ssl: 'self-signed' as const });

/** What db/desired-state.ts `loadScopedState` reads, from a state in memory (its own test checks it against SQL). */
function scopedOf(state: DesiredState, scope: ApplyScope): ScopedState {
  const keys = new Set(scope.streams ?? []);
  const nodes = new Set(scope.nodes ?? []);
  return {
    hosts: [...scope.hosts],
    http: state.http.filter((route) => scope.hosts.includes(route.domain ?? '')),
    domains: state.domains.filter((d) => scope.hosts.includes(d.domain)),
    tokenNetworks: state.peers.some((p) => p.networksByToken === true),
    streams: [...keys],
    stream: state.stream.filter((route) => keys.has(streamKey(route.proto, route.port))),
    streamDomains: [],
    ...(nodes.size > 0 ? { nodes: [...nodes], peers: state.peers.filter((p) => nodes.has(p.nodeId)) } : {}),
  };
}

function setup(initial: DesiredState, guardNetworks?: (state: DesiredState) => Promise<GuardedState>) {
  const world = createScopedWorld(
    initial,
    scopedOf,
    (scope) => `nodes ${(scope.nodes ?? []).join(',')}`,
    guardNetworks,
  );
  return {
    ...world,
    /** What the host holds now, and what a full run of the same rows would make: routes, instances, peers. */
    held: () => ({
      routes: new Map(world.proxy.routes),
      streams: new Map([...world.proxy.streams].map(([k, want]) => [k, want.conf])),
      peers: world.wireguard.peers,
    }),
    full: (state: DesiredState) => {
      const plan = world.plan();
      return {
        routes: new Map(plan.routes.hosts),
        streams: new Map([...plan.streams.wanted].map(([k, want]) => [k, want.conf])),
        peers: state.peers,
      };
    },
  };
}

/** A node's change as modules/nodes gives it (dataplane-apply.ts `nodeScope`): its peer, its services' hosts, keys. */
function nodeChange(state: DesiredState, nodeId: number, before: DesiredState = state): ApplyScope {
  const http = [...before.http, ...state.http].filter((route) => route.nodeId === nodeId);
  const stream = [...before.stream, ...state.stream].filter((route) => route.nodeId === nodeId);
  return {
    hosts: [...new Set(http.map((route) => route.domain ?? ''))],
    http: [...new Set(http.map((route) => route.serviceId))],
    streams: [...new Set(stream.map((route) => streamKey(route.proto, route.port)))],
    tcp: [...new Set(stream.map((route) => route.serviceId))],
    nodes: [nodeId],
  };
}

/** The rows without node `nodeId` (disabled or deleted): no peer, its services not served. */
const without = (state: DesiredState, nodeId: number): DesiredState => ({
  ...state,
  peers: state.peers.filter((p) => p.nodeId !== nodeId),
  http: state.http.filter((route) => route.nodeId !== nodeId),
  stream: state.stream.filter((route) => route.nodeId !== nodeId),
});

describe('scoped runs of node changes', () => {
  const base: DesiredState = {
    ...EMPTY_STATE,
    peers: [peer(2), peer(3)],
    domains: [domain(1, 'a.test'), domain(2, 'b.test')],
    http: [
      httpRoute({ serviceId: 1, nodeId: 2, domain: 'a.test' }),
      httpRoute({ serviceId: 2, nodeId: 3, domain: 'b.test', backendHost: '10.44.0.3' }),
    ],
    stream: [
      streamRoute({ serviceId: 7, nodeId: 2, port: 30000 }),
      streamRoute({ serviceId: 8, nodeId: 3, port: 30001, backendHost: '10.44.0.3' }),
    ],
  };

  it("a node disabled removes its peer and stops its services alone: the other node's peer, host and instance stay", async () => {
    const t = setup(base);
    await t.reconciler.apply();
    const before = t.held();
    const syncs = t.wireguard.peerSyncs;
    const next = without(base, 2);
    t.set(next);
    const result = await t.reconciler.apply(nodeChange(next, 2, base));
    expect(result.ok).toBe(true);
    expect(t.runs.at(-1)).toBe('scoped nodes 2');
    // WireGuard: one patch of node 2's peer, no full sync.
    expect(t.wireguard.peerSyncs).toBe(syncs);
    expect(t.wireguard.peerPatches).toEqual([[2]]);
    expect(t.wireguard.peers).toEqual([peer(3)]);
    // nginx: node 2's host deleted, its instance stopped; node 3's route and instance are the very same.
    expect(t.proxy.patches.at(-1)).toEqual({ set: [], del: ['a.test'] });
    expect(t.proxy.streamPatches.at(-1)).toEqual({ started: [], stopped: ['tcp-30000'] });
    const after = t.held();
    expect(after.routes.get('b.test')).toBe(before.routes.get('b.test'));
    expect(after.streams.get('tcp-30001')).toBe(before.streams.get('tcp-30001'));
    expect(t.proxy.cutScopes.at(-1)).toEqual([1]);
    expect(after).toEqual(t.full(next));
  });

  it('each step (create, disable, enable, edit subnets, rotate key, delete) ends where a full run of the same rows would', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    let state = base;
    const gateway = peer(4, { allowedIps: ['10.44.0.4/32', '192.168.40.0/24'] });
    const withNode4: DesiredState = {
      ...base,
      peers: [...base.peers, gateway],
      domains: [...base.domains, domain(3, 'c.test')],
      http: [...base.http, httpRoute({ serviceId: 3, nodeId: 4, domain: 'c.test', backendHost: '192.168.40.7' })],
      stream: [...base.stream, streamRoute({ serviceId: 9, nodeId: 4, port: 30002, backendHost: '192.168.40.7' })],
    };
    const edited: DesiredState = {
      ...withNode4,
      peers: [...base.peers, { ...gateway, allowedIps: ['10.44.0.4/32', '192.168.41.0/24'] }],
      http: withNode4.http.map((r) => (r.nodeId === 4 ? { ...r, backendHost: '192.168.41.7' } : r)),
    };
    const rotated = peer(2, { publicKey: key('Z'), presharedKey: key('Y') });
    const steps: [string, DesiredState, number][] = [
      // Created (with no services), then its services added as their own changes would (here with the node's scope).
      ['create', { ...base, peers: [...base.peers, gateway] }, 4],
      ['services', withNode4, 4],
      ['disable', without(withNode4, 4), 4],
      ['enable', withNode4, 4],
      ['edit subnets', edited, 4],
      ['rotate key', { ...edited, peers: edited.peers.map((p) => (p.nodeId === 2 ? rotated : p)) }, 2],
      ['delete', without({ ...edited, peers: edited.peers.map((p) => (p.nodeId === 2 ? rotated : p)) }, 3), 3],
    ];
    for (const [what, next, nodeId] of steps) {
      t.set(next);
      const result = await t.reconciler.apply(nodeChange(next, nodeId, state));
      state = next;
      expect(result.ok, what).toBe(true);
      expect(t.held(), what).toEqual(t.full(next));
      expect(t.wireguard.peerPatches.at(-1), what).toEqual([nodeId]);
    }
    // One full run, the boot's: every step went alone.
    expect(t.runs.filter((run) => run === 'full')).toHaveLength(1);
  });

  it('a node scope waits for the next full run when subnets set by a token must be checked, beside a full run too', async () => {
    const withToken: DesiredState = { ...base, peers: [peer(2), peer(3, { networksByToken: true })] };
    const t = setup(withToken);
    await t.reconciler.apply();
    await t.reconciler.apply(nodeChange(base, 2));
    expect(t.runs).toEqual(['full', 'full']);
    expect(t.wireguard.peerPatches).toEqual([]);
    // Beside a full run in flight the scope's rows say so too: the change goes with the next full run.
    const held = gate();
    t.holdFullRuns(held.opened);
    const inFlight = t.reconciler.apply();
    await until(() => t.runs.length === 3);
    const next = without(withToken, 2);
    t.set(next);
    const change = t.reconciler.apply(nodeChange(next, 2, withToken));
    await until(() => t.runs.length === 4);
    t.holdFullRuns(null);
    held.open();
    await Promise.all([inFlight, change]);
    expect(t.runs).toEqual(['full', 'full', 'full', 'scoped nodes 2', 'full']);
    expect(t.wireguard.peerPatches).toEqual([]);
    expect(t.held()).toEqual(t.full(next));
  });

  describe('beside a full run in flight (it read the rows before the change)', () => {
    it('a node disabled is removed at once, and the full run does not add its peer back', async () => {
      const t = setup(base);
      await t.reconciler.apply();
      const held = gate();
      t.holdFullRuns(held.opened);
      const inFlight = t.reconciler.apply();
      await until(() => t.runs.length === 2);
      // The host could not route node 2's subnet: the full run's sync of its old peer would say so again.
      t.wireguard.routeFailures.set(2, 'cannot route 192.168.50.0/24 into the tunnel');
      const next = without(base, 2);
      t.set(next);
      // Served while the full run that read node 2 enabled is still held.
      expect(await t.reconciler.apply(nodeChange(next, 2, base))).toMatchObject({ ok: true });
      expect(t.wireguard.peers).toEqual([peer(3)]);
      expect(t.proxy.routes.has('a.test')).toBe(false);
      held.open();
      const full = await inFlight;
      expect(full.ok).toBe(true);
      // The newer patch wins: node 2 stays disconnected, its services unserved; node 3's peer is as it was.
      expect(t.wireguard.peers).toEqual([peer(3)]);
      expect(full.rejected.nodes.has(2)).toBe(false);
      // The scoped run's verdict on node 2 and its services is newer: the full run's is not stored over it.
      expect(full.newerVerdicts?.()).toEqual({ http: new Set([1]), tcp: new Set([7]), nodes: new Set([2]) });
      expect(t.held()).toEqual(t.full(next));
      expect(t.runs).toEqual(['full', 'full', 'scoped nodes 2']);
      // The next full run read after it: it speaks for every row again.
      expect((await t.reconciler.apply()).newerVerdicts?.()).toEqual({
        http: new Set(),
        tcp: new Set(),
        nodes: new Set(),
      });
    });

    it("a node created (and another's key rotated) is not dropped by the full run, nor is any other peer", async () => {
      const t = setup(base);
      await t.reconciler.apply();
      const held = gate();
      t.holdFullRuns(held.opened);
      const inFlight = t.reconciler.apply();
      await until(() => t.runs.length === 2);
      const created: DesiredState = {
        ...base,
        peers: [...base.peers, peer(4, { allowedIps: ['10.44.0.4/32', '192.168.40.0/24'] })],
        domains: [...base.domains, domain(3, 'c.test')],
        http: [...base.http, httpRoute({ serviceId: 3, nodeId: 4, domain: 'c.test', backendHost: '192.168.40.7' })],
      };
      t.set(created);
      expect(await t.reconciler.apply(nodeChange(created, 4, base))).toMatchObject({ ok: true });
      const rotated: DesiredState = {
        ...created,
        peers: created.peers.map((p) =>
          p.nodeId === 3 ? peer(3, { publicKey: key('Z'), presharedKey: key('Y') }) : p,
        ),
      };
      t.set(rotated);
      expect(await t.reconciler.apply(nodeChange(rotated, 3, created))).toMatchObject({ ok: true });
      expect(t.wireguard.peerPatches).toEqual([[4], [3]]);
      held.open();
      expect(await inFlight).toMatchObject({ ok: true });
      expect(t.wireguard.peers).toEqual(rotated.peers);
      expect(t.held()).toEqual(t.full(rotated));
      // The next full run reads the same rows: nothing left for it to take back or add.
      const syncs = t.wireguard.peerSyncs;
      await t.reconciler.apply();
      expect(t.wireguard.peers).toEqual(rotated.peers);
      expect(t.wireguard.peerSyncs).toBe(syncs + 1);
    });

    it("a node changed while the full run's peer sync is under way waits for it, then ends as patched", async () => {
      const t = setup(base);
      await t.reconciler.apply();
      // The full run's `wg syncconf` of its old rows, held midway (on a real host: the process and the routes).
      const held = gate();
      const syncPeers = t.wireguard.syncPeers.bind(t.wireguard);
      let isSyncing = false;
      t.wireguard.syncPeers = async (peers) => {
        isSyncing = true;
        await held.opened;
        return syncPeers(peers);
      };
      const inFlight = t.reconciler.apply();
      await until(() => isSyncing);
      const next = without(base, 2);
      t.set(next);
      let isServed = false;
      const change = t.reconciler.apply(nodeChange(next, 2, base)).then((result) => {
        isServed = true;
        return result;
      });
      // Its rows are read and planned, but its patch waits for the sync in progress: they never interleave.
      await until(() => t.runs.length === 3);
      for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(t.wireguard.peerPatches).toEqual([]);
      expect(isServed).toBe(false);
      held.open();
      expect(await change).toMatchObject({ ok: true });
      expect(await inFlight).toMatchObject({ ok: true });
      expect(t.wireguard.peers).toEqual([peer(3)]);
      expect(t.held()).toEqual(t.full(next));
      expect(t.runs).toEqual(['full', 'full', 'scoped nodes 2']);
    });

    it("a node whose token's subnets the operator replaced: the full run's verdict on the old ones is not reported", async () => {
      // The network guard as the real one answers a token's subnet the gateway needs: left out, the node told why.
      const why = "Not routed (set by the node's token; the gateway needs it): 10.30.0.0/24";
      const guard = (state: DesiredState): Promise<GuardedState> => {
        const rejected = new Map(state.peers.filter((p) => p.networksByToken === true).map((p) => [p.nodeId, why]));
        return Promise.resolve({ state, rejected });
      };
      const byToken: DesiredState = {
        ...base,
        peers: [peer(2, { allowedIps: ['10.44.0.2/32', '10.30.0.0/24'], networksByToken: true }), peer(3)],
      };
      const t = setup(byToken, guard);
      expect((await t.reconciler.apply()).rejected.nodes.get(2)).toBe(why);
      const held = gate();
      t.holdFullRuns(held.opened);
      const inFlight = t.reconciler.apply();
      await until(() => t.runs.length === 2);
      // The operator sets node 2's subnets: no token's subnets are left, so the change goes beside the full run.
      const next: DesiredState = {
        ...base,
        peers: [peer(2, { allowedIps: ['10.44.0.2/32', '10.31.0.0/24'] }), peer(3)],
      };
      t.set(next);
      const change = await t.reconciler.apply(nodeChange(next, 2, byToken));
      expect(change).toMatchObject({ ok: true, scopedNodes: new Set([2]) });
      expect(change.rejected.nodes.has(2)).toBe(false);
      held.open();
      const full = await inFlight;
      // The full run read the token's subnets and its guard set them aside; node 2's row is the change's now.
      expect(full.rejected.nodes.has(2)).toBe(false);
      expect(t.wireguard.peers).toEqual(next.peers);
    });

    it("at boot, before the first peer sync, a node change is made by the boot's sync, not by a full run after it", async () => {
      const t = setup(base);
      const held = gate();
      t.holdFullRuns(held.opened);
      // The boot's full run reads 100,000 services meanwhile; nothing was synced since the interface was made.
      const boot = t.reconciler.apply();
      await until(() => t.runs.length === 1);
      const next = without(base, 2);
      t.set(next);
      let isServed = false;
      const change = t.reconciler.apply(nodeChange(next, 2, base)).then((result) => {
        isServed = true;
        return result;
      });
      await until(() => t.runs.length === 2);
      held.open();
      // Answered once the boot's sync made its peer (before the boot's pushes end), with no full run of its own.
      await until(() => isServed);
      expect(await change).toMatchObject({ ok: true, scopedNodes: new Set([2]) });
      expect(t.wireguard.peers).toEqual([peer(3)]);
      expect(await boot).toMatchObject({ ok: true });
      expect(t.runs).toEqual(['full', 'scoped nodes 2']);
      expect(t.wireguard.peerSyncs).toBe(1);
      expect(t.held()).toEqual(t.full(next));
    });

    it('a boot that cannot read the rows fails the node change handed to its sync: its scope is owed, then served', async () => {
      const t = setup(base);
      let failRead = (): void => undefined;
      t.holdFullRuns(
        new Promise<void>((_, reject) => {
          failRead = () => reject(new Error('database is locked'));
        }),
      );
      const boot = t.reconciler.apply();
      await until(() => t.runs.length === 1);
      const next = without(base, 2);
      t.set(next);
      const change = t.reconciler.apply(nodeChange(next, 2, base));
      await until(() => t.runs.length === 2);
      failRead();
      expect(await boot).toMatchObject({ ok: false });
      expect(await change).toMatchObject({ ok: false, message: 'WireGuard: database is locked' });
      t.holdFullRuns(null);
      // The supervisor's retry: a full run settles what is owed.
      expect(await t.reconciler.apply()).toMatchObject({ ok: true });
      expect(t.held()).toEqual(t.full(next));
    });
  });
});
