import { describe, expect, it } from 'vitest';
import { streamKey } from '../model/desired-state.js';
import { createScopedWorld, EMPTY_STATE, httpRoute, streamRoute } from './test-support.js';
import type { ApplyScope, DesiredState, DesiredStreamRoute, ScopedState } from './types.js';

// Scoped runs of TCP/UDP services (README "Scoped applies"): a change starts, replaces or stops the instances of the
// service's keys alone, and the instances then running are exactly those a full run would have made of the same rows.

const stream = (serviceId: number, port: number, over: Partial<DesiredStreamRoute> = {}): DesiredStreamRoute =>
  streamRoute({ serviceId, port, ...over });
const domain = (domainId: number, name: string) => ({ domainId, domain: name, ssl: 'self-signed' as const });

/** What db/desired-state.ts `loadScopedState` reads, from a state in memory (its own test checks it against SQL). */
function scopedOf(state: DesiredState, scope: ApplyScope): ScopedState {
  const keys = new Set(scope.streams ?? []);
  const routes = state.stream.filter((route) => keys.has(streamKey(route.proto, route.port)));
  const names = new Set(routes.flatMap((route) => (route.ssl && route.domain ? [route.domain] : [])));
  return {
    hosts: [...scope.hosts],
    http: state.http.filter((route) => scope.hosts.includes(route.domain ?? '')),
    domains: state.domains.filter((d) => scope.hosts.includes(d.domain)),
    tokenNetworks: state.peers.some((peer) => peer.networksByToken === true),
    streams: [...keys],
    stream: routes,
    streamDomains: state.domains.filter((d) => names.has(d.domain)),
  };
}

function setup(initial: DesiredState) {
  const world = createScopedWorld(initial, scopedOf, (scope) => [...(scope.streams ?? [])].sort().join(','));
  return {
    ...world,
    /** The instances a full run would make run now, as key → config. */
    full: () => new Map([...world.plan().streams.wanted].map(([key, want]) => [key, want.conf])),
    /** The instances running, as key → config. */
    running: () => new Map([...world.proxy.streams].map(([key, want]) => [key, want.conf])),
    lastPatch: () => world.proxy.streamPatches.at(-1),
  };
}

/** A TCP/UDP service's change, as modules/services gives it: its id and its instance before and after. */
const change = (id: number, ...streams: string[]): ApplyScope => ({ hosts: [], http: [], streams, tcp: [id] });

describe('scoped runs of TCP/UDP services', () => {
  const base: DesiredState = {
    ...EMPTY_STATE,
    domains: [domain(1, 'x.test')],
    http: [httpRoute({ serviceId: 1, domain: 'x.test' })],
    stream: [
      stream(11, 30001),
      stream(12, 30002, { ssl: true, domain: 'x.test' }),
      stream(13, 30003, { proto: 'udp' }),
    ],
  };

  it('each change starts, replaces or stops its own instances alone, and ends where a full run would', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    expect(t.running()).toEqual(t.full());
    const steps: { next: DesiredStreamRoute[]; scope: ApplyScope; started: string[]; stopped: string[] }[] = [
      // An edit (another backend port) replaces its instance.
      {
        next: [stream(11, 30001, { backendPort: 6543 }), ...base.stream.slice(1)],
        scope: change(11, 'tcp-30001'),
        started: ['tcp-30001'],
        stopped: [],
      },
      // A move to another port: the old instance stops, the new one starts.
      {
        next: [
          stream(11, 30001, { backendPort: 6543 }),
          stream(12, 30004, { ssl: true, domain: 'x.test' }),
          base.stream[2]!,
        ],
        scope: change(12, 'tcp-30004', 'tcp-30002'),
        started: ['tcp-30004'],
        stopped: ['tcp-30002'],
      },
      // Disabled (or deleted): its row is no longer served.
      {
        next: [stream(11, 30001, { backendPort: 6543 }), stream(12, 30004, { ssl: true, domain: 'x.test' })],
        scope: change(13, 'udp-30003'),
        started: [],
        stopped: ['udp-30003'],
      },
      // A new one, on the port the moved one left.
      {
        next: [
          stream(11, 30001, { backendPort: 6543 }),
          stream(12, 30004, { ssl: true, domain: 'x.test' }),
          stream(14, 30002),
        ],
        scope: change(14, 'tcp-30002'),
        started: ['tcp-30002'],
        stopped: [],
      },
      // Saved unchanged: nothing restarts.
      {
        next: [
          stream(11, 30001, { backendPort: 6543 }),
          stream(12, 30004, { ssl: true, domain: 'x.test' }),
          stream(14, 30002),
        ],
        scope: change(14, 'tcp-30002'),
        started: [],
        stopped: [],
      },
    ];
    for (const [index, { next, scope, started, stopped }] of steps.entries()) {
      t.set({ ...base, stream: next });
      const result = await t.reconciler.apply(scope);
      expect(result, `step ${index}`).toMatchObject({ ok: true });
      expect(t.lastPatch(), `step ${index}`).toEqual({ started, stopped });
      // The equivalence: the instances a full run of the same rows would run, config for config.
      expect(t.running(), `step ${index}`).toEqual(t.full());
    }
    expect(t.runs).toEqual([
      'full',
      ...steps.map(({ scope }) => `scoped ${[...(scope.streams ?? [])].sort().join(',')}`),
    ]);
    // No full sync of the instances, nothing pushed to the HTTP instance: its routes and cut-off were not looked at.
    expect(t.proxy.streamSyncs).toBe(1);
    expect(t.proxy.routeSyncs).toBe(1);
    expect(t.proxy.patches).toEqual([]);
    expect(t.proxy.cutScopes).toEqual([null]);
  });

  it("a TLS service's domain certificate is ensured with it; its rejections speak for its own services only", async () => {
    const t = setup(base);
    await t.reconciler.apply();
    t.set({
      ...base,
      domains: [...base.domains, domain(2, 'new.test')],
      stream: [...base.stream, stream(15, 30006, { ssl: true, domain: 'new.test' }), stream(16, 30007)],
    });
    t.proxy.streamFailures.set('tcp-30007', 'port 30007/tcp is in use by another program on the gateway');
    const result = await t.reconciler.apply({
      hosts: [],
      http: [],
      streams: ['tcp-30006', 'tcp-30007'],
      tcp: [15, 16],
    });
    expect(t.certs.ensured.at(-1)).toBe('new.test:self-signed');
    expect(Object.fromEntries(result.rejected.tcp)).toEqual({
      16: 'port 30007/tcp is in use by another program on the gateway',
    });
    expect(result.scopedTcp).toEqual(new Set([15, 16]));
    expect(result.scopedHttp).toEqual(new Set());
    expect(t.running()).toEqual(new Map([...t.full()].filter(([key]) => key !== 'tcp-30007')));
  });

  it('a change during a slow full run (the boot) is served before it ends; the full run keeps what it made', async () => {
    const t = setup(base);
    let open: () => void = () => undefined;
    t.holdFullRuns(
      new Promise<void>((resolve) => {
        open = resolve;
      }),
    );
    // The boot reads the rows before the change: 11 on 30001, 12 on 30002, 13 on udp 30003.
    const boot = t.reconciler.apply();
    // 11 deleted, 13 moved to udp 30008.
    t.set({ ...base, stream: [base.stream[1]!, stream(13, 30008, { proto: 'udp' })] });
    const deleted = t.reconciler.apply(change(11, 'tcp-30001'));
    const moved = t.reconciler.apply(change(13, 'udp-30008', 'udp-30003'));
    await Promise.all([deleted, moved]);
    expect([...t.proxy.streams.keys()].sort()).toEqual(['udp-30008']);
    open();
    expect(await boot).toMatchObject({ ok: true });
    // The boot's plan still had 11 and udp-30003: what the scoped runs made stands.
    expect(t.running()).toEqual(t.full());
    expect(t.runs).toEqual(['full', 'scoped tcp-30001', 'scoped udp-30003,udp-30008']);
  });
});
