import { describe, expect, it } from 'vitest';
import { pathLocationsDifferInCase } from '@postern/contract';
import { httpRoute } from '../test-support.js';
import type { DesiredHttpRoute } from '../types.js';
import { buildRouteTable, routePrefix } from './routes.js';

// The planner's per-host path checks (a path taken, or a case variant of one taken) against the way they were
// written before they became set and map look-ups: every new path compared with every accepted path of its host.

const domains = [
  { domainId: 1, domain: 'a.example.com', ssl: 'self-signed' as const },
  { domainId: 2, domain: 'b.example.com', ssl: 'self-signed' as const },
];

/** The reference: the rejections of the path checks, scanning the host's accepted paths in order. */
function referenceRejections(routes: readonly DesiredHttpRoute[]): [number, string][] {
  const accepted = new Map<string, string[]>();
  const rejected: [number, string][] = [];
  for (const route of [...routes].sort((x, y) => x.serviceId - y.serviceId)) {
    const host = route.domain ?? '';
    let p: string;
    try {
      p = routePrefix(route.pathLocation);
    } catch (err) {
      rejected.push([route.serviceId, (err as Error).message]);
      continue;
    }
    const list = accepted.get(host) ?? [];
    const where = host === '' ? '' : ` on ${host}`;
    const clash = list.find((other) => pathLocationsDifferInCase(other, p));
    if (list.includes(p)) rejected.push([route.serviceId, `another service already serves ${p}${where}`]);
    else if (clash !== undefined)
      rejected.push([
        route.serviceId,
        `${p} differs only in letter case from ${clash}, which another service serves${where}`,
      ]);
    else accepted.set(host, [...list, p]);
  }
  return rejected;
}

/** A small deterministic generator (mulberry32): the same inputs on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Paths from few segments in both cases, nested, some with a trailing slash: many duplicates and case clashes. */
function generated(seed: number, count: number): DesiredHttpRoute[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const segments = ['a', 'A', 'ab', 'aB', 'Ab', 'b', 'api', 'API', 'x', 'x.y', 'X.y'];
  return Array.from({ length: count }, (_, i) => {
    const depth = Math.floor(next() * 4);
    const path = depth === 0 ? '/' : Array.from({ length: depth }, () => `/${pick(segments)}`).join('');
    return httpRoute({
      // Not in id order: the planner takes the lowest id first.
      serviceId: ((i * 7919) % count) + 1,
      domain: pick(['a.example.com', 'b.example.com', null]),
      pathLocation: next() < 0.2 && path !== '/' ? `${path}/` : path,
    });
  });
}

describe('the route table: a host’s path checks', () => {
  it('rejects the same services with the same messages, in the same order, as the scan of every accepted path', () => {
    // A host's first few paths are scanned, the rest looked up: few rows per host and many.
    for (const [seed, count] of Array.from({ length: 60 }, (_, i) => [i + 1, i % 2 === 0 ? 24 : 300] as const)) {
      const routes = generated(seed, count);
      const table = buildRouteTable(routes, domains);
      expect([...table.rejected]).toEqual(referenceRejections(routes));
      // Every service is either served or set aside.
      const served = [...table.hosts.values()].flatMap((json) => (JSON.parse(json) as { s: number }[]).map((r) => r.s));
      expect(served.length + table.rejected.size).toBe(routes.length);
    }
  });

  it('names the first accepted path a case variant clashes with, above or below it', () => {
    const routes = [
      httpRoute({ serviceId: 1, domain: 'a.example.com', pathLocation: '/Docs/api/v1' }),
      httpRoute({ serviceId: 2, domain: 'a.example.com', pathLocation: '/docs/API' }),
      httpRoute({ serviceId: 3, domain: 'a.example.com', pathLocation: '/DOCS' }),
      httpRoute({ serviceId: 4, domain: 'a.example.com', pathLocation: '/docs/x/y' }),
      httpRoute({ serviceId: 5, domain: 'a.example.com', pathLocation: '/docs/X' }),
      httpRoute({ serviceId: 6, domain: 'a.example.com', pathLocation: '/' }),
      httpRoute({ serviceId: 7, domain: 'a.example.com', pathLocation: '/Docs/api/v1/z' }),
    ];
    const table = buildRouteTable(routes, domains);
    expect([...table.rejected]).toEqual(referenceRejections(routes));
    expect(Object.fromEntries(table.rejected)).toEqual({
      2: '/docs/API differs only in letter case from /Docs/api/v1, which another service serves on a.example.com',
      3: '/DOCS differs only in letter case from /Docs/api/v1, which another service serves on a.example.com',
      5: '/docs/X differs only in letter case from /docs/x/y, which another service serves on a.example.com',
    });
  });

  it('plans thousands of paths on one host', () => {
    // 20,000 paths on one host, half of them case variants above the other half: the scan of every accepted path
    // took minutes; set look-ups take milliseconds. Not timed (the machine is shared): the scan's cost would make
    // this test run past vitest's time-out.
    const routes = Array.from({ length: 20_000 }, (_, i) =>
      httpRoute({
        serviceId: i + 1,
        domain: 'a.example.com',
        pathLocation: i < 10_000 ? `/s${i}/x` : `/S${i - 10_000}`,
      }),
    );
    const table = buildRouteTable(routes, domains);
    expect(table.rejected.size).toBe(10_000);
    expect(table.rejected.get(20_000)).toBe(
      '/S9999 differs only in letter case from /s9999/x, which another service serves on a.example.com',
    );
    expect(JSON.parse(table.hosts.get('a.example.com') ?? '[]')).toHaveLength(10_000);
  });
});
