import { describe, expect, it } from 'vitest';
import { isWildcardDomainName, wildcardOf } from '@postern/contract';
import { streamKey } from '../model/desired-state.js';
import { createScopedWorld, EMPTY_STATE, httpRoute, streamRoute } from './test-support.js';
import type { ApplyScope, DesiredState, DesiredStreamRoute, ScopedState } from './types.js';

// A domain's delete and rename as scoped runs (README "Scoped applies"): the hosts they leave and join, the
// certificate of the name that is gone, and the TCP/UDP instances serving the domain; the result is what a full run
// would make of the same rows.

const domain = (domainId: number, name: string) => ({ domainId, domain: name, ssl: 'self-signed' as const });
const tls = (serviceId: number, port: number, name: string): DesiredStreamRoute =>
  streamRoute({ serviceId, port, ssl: true, domain: name });

/** What db/desired-state.ts `loadScopedState` reads, from a state in memory (its own test checks it against SQL). */
function scopedOf(state: DesiredState, scope: ApplyScope): ScopedState {
  const hosts = new Set(scope.hosts);
  for (const host of scope.hosts) {
    if (host === '' || isWildcardDomainName(host)) continue;
    const wildcard = wildcardOf(host);
    if (wildcard !== null) hosts.add(wildcard);
  }
  const keys = new Set(scope.streams ?? []);
  const stream = state.stream.filter((route) => keys.has(streamKey(route.proto, route.port)));
  const names = new Set(stream.flatMap((route) => (route.ssl && route.domain ? [route.domain] : [])));
  return {
    hosts: [...hosts],
    http: state.http.filter((route) => hosts.has(route.domain ?? '')),
    domains: state.domains.filter((d) => hosts.has(d.domain)),
    streams: [...keys],
    stream,
    streamDomains: state.domains.filter((d) => names.has(d.domain)),
  };
}

function setup(initial: DesiredState) {
  const world = createScopedWorld(initial, scopedOf, (scope) => [...scope.hosts].sort().join(','));
  return {
    ...world,
    full: world.plan,
    running: () => new Map([...world.proxy.streams].map(([key, want]) => [key, want.conf])),
  };
}

describe("scoped runs of a domain's delete and rename", () => {
  const base: DesiredState = {
    ...EMPTY_STATE,
    domains: [domain(1, 'x.test'), domain(2, 'old.test'), domain(3, 'empty.test')],
    http: [httpRoute({ serviceId: 1, domain: 'x.test' }), httpRoute({ serviceId: 2, domain: 'old.test' })],
    stream: [tls(11, 30001, 'old.test'), tls(12, 30002, 'x.test')],
  };

  it('a deleted domain loses its certificate alone; nothing else is pushed', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    expect(t.certs.infos.has('empty.test')).toBe(true);
    t.set({ ...base, domains: base.domains.filter((d) => d.domain !== 'empty.test') });
    expect(await t.reconciler.apply({ hosts: ['empty.test'], http: [] })).toMatchObject({ ok: true });
    expect(t.runs).toEqual(['full', 'scoped empty.test']);
    expect(t.certs.infos.has('empty.test')).toBe(false);
    expect(t.proxy.certificates.has('empty.test')).toBe(false);
    expect([...t.certs.infos.keys()].sort()).toEqual(['old.test', 'x.test']);
    expect(t.proxy.routes).toEqual(t.full().routes.hosts);
    expect(t.proxy.patches.at(-1)).toEqual({ set: [], del: [] });
    expect(t.proxy.routeSyncs).toBe(1);
  });

  it('a renamed domain moves its routes, certificate and TCP/UDP instances to the new name, as a full run would', async () => {
    const t = setup(base);
    await t.reconciler.apply();
    const x = t.running().get('tcp-30002');
    t.set({
      ...base,
      domains: [domain(1, 'x.test'), domain(2, 'new.test'), domain(3, 'empty.test')],
      http: [httpRoute({ serviceId: 1, domain: 'x.test' }), httpRoute({ serviceId: 2, domain: 'new.test' })],
      stream: [tls(11, 30001, 'new.test'), tls(12, 30002, 'x.test')],
    });
    const result = await t.reconciler.apply({
      hosts: ['old.test', 'new.test'],
      http: [],
      streams: ['tcp-30001'],
      tcp: [11],
    });
    expect(result).toMatchObject({ ok: true, scopedHttp: new Set([2]), scopedTcp: new Set([11]) });
    expect(t.proxy.patches.at(-1)).toEqual({ set: ['new.test'], del: ['old.test'] });
    expect(t.proxy.routes).toEqual(t.full().routes.hosts);
    expect(t.proxy.streamPatches.at(-1)).toEqual({ started: ['tcp-30001'], stopped: [] });
    expect(t.running()).toEqual(new Map([...t.full().streams.wanted].map(([key, want]) => [key, want.conf])));
    // The other domain's instance was not replaced.
    expect(t.running().get('tcp-30002')).toBe(x);
    expect([...t.certs.infos.keys()].sort()).toEqual(['empty.test', 'new.test', 'x.test']);
    expect(t.proxy.certificates.has('old.test')).toBe(false);
    // Service 2's connections were looked at (its revision changed with its host).
    expect(t.proxy.cutScopes.at(-1)).toEqual([2]);
    expect(t.proxy.routeSyncs).toBe(1);
    expect(t.proxy.streamSyncs).toBe(1);
  });
});
