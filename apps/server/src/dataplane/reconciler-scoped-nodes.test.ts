import { describe, expect, it } from 'vitest';
import { streamKey } from '../model/desired-state.js';
import { createScopedWorld, EMPTY_STATE, httpRoute, streamRoute } from './test-support.js';
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

function setup(initial: DesiredState) {
  const world = createScopedWorld(initial, scopedOf, (scope) => `nodes ${(scope.nodes ?? []).join(',')}`);
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

  it('a node scope waits for the next full run when subnets set by a token must be checked, or beside a full run', async () => {
    const t = setup({ ...base, peers: [peer(2), peer(3, { networksByToken: true })] });
    await t.reconciler.apply();
    await t.reconciler.apply(nodeChange(base, 2));
    expect(t.runs).toEqual(['full', 'full']);
    expect(t.wireguard.peerPatches).toEqual([]);

    const u = setup(base);
    await u.reconciler.apply();
    let release = (): void => undefined;
    u.holdFullRuns(new Promise((resolve) => (release = resolve)));
    const full = u.reconciler.apply();
    await new Promise((resolve) => setImmediate(resolve));
    const next = without(base, 2);
    u.set(next);
    const change = u.reconciler.apply(nodeChange(next, 2, base));
    await new Promise((resolve) => setImmediate(resolve));
    // The full run in flight read node 2's old peer: the change is not patched beside it, it waits for the next.
    expect(u.wireguard.peerPatches).toEqual([]);
    u.holdFullRuns(null);
    release();
    await Promise.all([full, change]);
    expect(u.runs.filter((run) => run === 'full')).toHaveLength(3);
    expect(u.held()).toEqual(u.full(next));
  });
});
