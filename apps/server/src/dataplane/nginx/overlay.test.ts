import { describe, expect, it } from 'vitest';
import type { DesiredDomain, DesiredHttpRoute } from '../types.js';
import { indexRoutes, isSameRouting, planOverlay } from './overlay.js';

const route = (over: Partial<DesiredHttpRoute>): DesiredHttpRoute => ({
  serviceId: 1, nodeId: 1, domain: null, pathLocation: '/', backendProto: 'http', backendHost: '10.44.0.2', backendPort: 8080,
  allowedIps: [], blockedIps: [], ...over,
});
const domain = (id: number, name: string): DesiredDomain => ({ domainId: id, domain: name, ssl: 'self-signed' });

const domains = [domain(1, 'a.example.com'), domain(2, 'b.example.com')];
const base = indexRoutes([
  route({ serviceId: 1 }),
  route({ serviceId: 2, domain: 'a.example.com', pathLocation: '/api/' }),
  route({ serviceId: 3, domain: 'b.example.com', backendHost: 'db.internal', backendPort: 5000 }),
], domains);

describe('indexRoutes', () => {
  it('groups the routes by host in the form the overlay router reads, with named upstreams for host names', () => {
    expect(base.hosts.get('a.example.com')?.json).toBe('[{"p":"/api","s":2,"u":"http://10.44.0.2:8080","a":[],"b":[]}]');
    expect(base.hosts.get('b.example.com')?.json).toBe('[{"p":"","s":3,"u":"http://gw_be_3","a":[],"b":[],"t":"db.internal:5000"}]');
    expect(base.hosts.get('')?.json).toBe('[{"p":"","s":1,"u":"http://10.44.0.2:8080","a":[],"b":[]}]');
    expect(base.domainIds.get('b.example.com')).toBe('000002');
    expect(base.upstreams).toEqual(new Map([['gw_be_3', 'db.internal:5000']]));
  });

  it('refuses what the static renderer refuses', () => {
    expect(() => indexRoutes([route({ pathLocation: '/a b' })], [])).toThrow('invalid path');
    expect(() => indexRoutes([route({ allowedIps: ['1.2.3.4; deny all'] })], [])).toThrow('invalid allowed IP');
    expect(() => indexRoutes([route({ domain: 'c.example.com' })], [])).toThrow('has no domain entry');
  });
});

describe('planOverlay', () => {
  it('is empty when nothing changed', () => {
    expect(planOverlay(base, base)).toEqual({ files: new Map(), isComplete: true });
    expect(isSameRouting(base, base)).toBe(true);
  });

  it('writes the whole route list of a changed known host under its static id', () => {
    const desired = indexRoutes([
      route({ serviceId: 1 }),
      route({ serviceId: 2, domain: 'a.example.com', pathLocation: '/api/', allowedIps: ['192.0.2.0/24'] }),
      route({ serviceId: 3, domain: 'b.example.com', backendHost: 'db.internal', backendPort: 5000 }),
    ], domains);
    expect(isSameRouting(base, desired)).toBe(false);
    expect(planOverlay(base, desired)).toEqual({
      files: new Map([['000001', '{"routes":[{"p":"/api","s":2,"u":"http://10.44.0.2:8080","a":["192.0.2.0/24"],"b":[]}]}\n']]),
      isComplete: true,
    });
  });

  it('serves a host the static map does not know by name, with the default host alongside', () => {
    const desired = indexRoutes([
      route({ serviceId: 1 }),
      route({ serviceId: 2, domain: 'a.example.com', pathLocation: '/api/' }),
      route({ serviceId: 3, domain: 'b.example.com', backendHost: 'db.internal', backendPort: 5000 }),
      route({ serviceId: 4, domain: 'new.example.com' }),
    ], [...domains, domain(3, 'new.example.com')]);
    const plan = planOverlay(base, desired);
    expect([...plan.files.keys()].sort()).toEqual(['000000', 'host.new.example.com']);
    expect(plan.files.get('000000')).toBe('{"routes":[{"p":"","s":1,"u":"http://10.44.0.2:8080","a":[],"b":[]}]}\n');
  });

  it('routes a deleted domain like any host that is no domain: with the default host routes', () => {
    const desired = indexRoutes([route({ serviceId: 1 }), route({ serviceId: 3, domain: 'b.example.com', backendHost: 'db.internal', backendPort: 5000 })], [domain(2, 'b.example.com')]);
    expect(planOverlay(base, desired).files).toEqual(new Map([['000001', '{"routes":[{"p":"","s":1,"u":"http://10.44.0.2:8080","a":[],"b":[]}]}\n']]));
  });

  it('answers 404 for a new domain without services, not with the default host routes', () => {
    const desired = indexRoutes([
      route({ serviceId: 1 }),
      route({ serviceId: 2, domain: 'a.example.com', pathLocation: '/api/' }),
      route({ serviceId: 3, domain: 'b.example.com', backendHost: 'db.internal', backendPort: 5000 }),
    ], [...domains, domain(3, 'empty.example.com')]);
    const plan = planOverlay(base, desired);
    expect(plan.files.get('host.empty.example.com')).toBe('{"routes":[]}\n');
    expect(plan.files.has('000000')).toBe(true);
  });

  it('leaves to a reload what only a reload can do: a new named upstream, or two services on one path', () => {
    const newUpstream = indexRoutes([
      route({ serviceId: 1 }),
      route({ serviceId: 2, domain: 'a.example.com', pathLocation: '/api/' }),
      route({ serviceId: 3, domain: 'b.example.com', backendHost: 'db2.internal', backendPort: 5000 }),
    ], domains);
    expect(planOverlay(base, newUpstream)).toEqual({ files: new Map(), isComplete: false });

    const duplicate = indexRoutes([
      route({ serviceId: 1 }),
      route({ serviceId: 5 }),
      route({ serviceId: 2, domain: 'a.example.com', pathLocation: '/api/' }),
      route({ serviceId: 3, domain: 'b.example.com', backendHost: 'db.internal', backendPort: 5000 }),
    ], domains);
    expect(planOverlay(base, duplicate).isComplete).toBe(false);
  });

  it('reuses a named upstream the static config already has', () => {
    const moved = indexRoutes([
      route({ serviceId: 1 }),
      route({ serviceId: 2, domain: 'a.example.com', pathLocation: '/api/' }),
      route({ serviceId: 3, domain: 'b.example.com', pathLocation: '/v2', backendHost: 'db.internal', backendPort: 5000 }),
    ], domains);
    const plan = planOverlay(base, moved);
    expect(plan.isComplete).toBe(true);
    expect(plan.files.get('000002')).toContain('"u":"http://gw_be_3"');
  });
});
