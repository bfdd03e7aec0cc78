import { describe, expect, it } from 'vitest';
import type { DesiredDomain, DesiredHttpRoute } from '../types.js';
import { indexRoutes, type OverlayRoute, type RouteIndex } from './overlay.js';
import { decideRoute, normalizePath, type RouteRequest } from './overlay-route.js';

const route = (over: Partial<DesiredHttpRoute>): DesiredHttpRoute => ({
  serviceId: 1, nodeId: 1, domain: null, pathLocation: '/', backendProto: 'http', backendHost: '10.44.0.2', backendPort: 8080,
  allowedIps: [], blockedIps: [], ...over,
});
const domain = (id: number, name: string): DesiredDomain => ({ domainId: id, domain: name, ssl: 'self-signed' });

const upstream = (serviceId: number): string => `http://10.44.0.${serviceId}:8080`;
const service = (serviceId: number, over: Partial<DesiredHttpRoute> = {}): DesiredHttpRoute =>
  route({ serviceId, backendHost: `10.44.0.${serviceId}`, ...over });

const index = indexRoutes([
  service(1),
  service(2, { domain: 'a.example.com', pathLocation: '/api' }),
  service(3, { domain: 'a.example.com', pathLocation: '/api/v2/' }),
  service(4, { domain: 'a.example.com', pathLocation: '/public' }),
  service(5, { domain: 'a.example.com', pathLocation: '/admin', allowedIps: ['192.0.2.0/24', '203.0.113.64/26'] }),
  service(6, { domain: 'a.example.com', pathLocation: '/mixed', allowedIps: ['192.0.2.0/24'], blockedIps: ['192.0.2.7'] }),
  service(7, { domain: 'b.example.com', blockedIps: ['198.51.100.0/24'] }),
], [domain(1, 'a.example.com'), domain(2, 'b.example.com')]);

const ask = (over: Partial<RouteRequest>) => decideRoute(index, {
  host: 'a.example.com', requestUri: '/', clientAddress: '192.0.2.10', ...over,
});
const proxy = (serviceId: number) => ({ kind: 'proxy', serviceId, upstream: upstream(serviceId) });

describe('normalizePath', () => {
  it('drops the query', () => {
    expect(normalizePath('/a/b?x=1&y=/../..')).toBe('/a/b');
    expect(normalizePath('/?q')).toBe('/');
  });

  it('ends the path at a raw `#`, as nginx does, but keeps an encoded one', () => {
    expect(normalizePath('/admin#/../public')).toBe('/admin');
    expect(normalizePath('/a/..#/x')).toBe('/');
    expect(normalizePath('/a?b#c')).toBe('/a');
    expect(normalizePath('/a%23/../b')).toBe('/b');
    expect(normalizePath('/a%23b')).toBe('/a#b');
  });

  it('decodes %XX, including an encoded slash, before resolving segments', () => {
    expect(normalizePath('/a%20b/%41')).toBe('/a b/A');
    expect(normalizePath('/a%2Fb')).toBe('/a/b');
    expect(normalizePath('/a/%2e%2E/b')).toBe('/b');
  });

  it('merges slashes and resolves `.` and `..`', () => {
    expect(normalizePath('//a///b')).toBe('/a/b');
    expect(normalizePath('/a/./b/../c')).toBe('/a/c');
    expect(normalizePath('/a/b/..')).toBe('/a/');
    expect(normalizePath('/a/..')).toBe('/');
  });

  it('refuses a `..` above the root, as nginx does with 400', () => {
    expect(normalizePath('/..')).toBeNull();
    expect(normalizePath('/a/../../b')).toBeNull();
    expect(normalizePath('/%2E%2E/etc')).toBeNull();
  });

  it('keeps a trailing slash', () => {
    expect(normalizePath('/a/b/')).toBe('/a/b/');
    expect(normalizePath('/a/.')).toBe('/a/');
    expect(normalizePath('/')).toBe('/');
  });
});

describe('decideRoute', () => {
  it('sends a request to the longest matching prefix', () => {
    expect(ask({ requestUri: '/api/v2/items' })).toEqual(proxy(3));
    expect(ask({ requestUri: '/api/v1/items' })).toEqual(proxy(2));
    expect(ask({ requestUri: '/api/v2' })).toEqual(proxy(3));
  });

  it('matches a prefix as a whole path segment: `/api` takes `/api` and `/api/x`, not `/apix`', () => {
    expect(ask({ requestUri: '/api' })).toEqual(proxy(2));
    expect(ask({ requestUri: '/api/' })).toEqual(proxy(2));
    expect(ask({ requestUri: '/api/x?y=1' })).toEqual(proxy(2));
    expect(ask({ requestUri: '/apix' })).toEqual({ kind: 'none' });
    expect(ask({ requestUri: '/api/v2x' })).toEqual(proxy(2));
  });

  it('answers none when no route matches, and a root route takes every path', () => {
    expect(ask({ requestUri: '/' })).toEqual({ kind: 'none' });
    expect(ask({ requestUri: '/other' })).toEqual({ kind: 'none' });
    expect(ask({ host: 'b.example.com', requestUri: '/anything/at/all', clientAddress: '203.0.113.1' })).toEqual(proxy(7));
    expect(ask({ host: 'b.example.com', requestUri: '/', clientAddress: '203.0.113.1' })).toEqual(proxy(7));
  });

  it('answers none for a path nginx refuses', () => {
    expect(ask({ requestUri: '/api/../..' })).toEqual({ kind: 'none' });
  });

  it('routes an encoded traversal by the path it resolves to', () => {
    expect(ask({ requestUri: '/public/..%2Fadmin', clientAddress: '203.0.113.1' })).toEqual({ kind: 'denied' });
    expect(ask({ requestUri: '/public/..%2Fadmin' })).toEqual(proxy(5));
    expect(ask({ requestUri: '/public/%2e%2e/api/x' })).toEqual(proxy(2));
  });

  it('does not let a raw `#` move a request out of a restricted route', () => {
    // nginx's $uri (and so the static locations) stops at the `#`: this request is for /admin.
    expect(ask({ requestUri: '/admin#/../public', clientAddress: '203.0.113.1' })).toEqual({ kind: 'denied' });
  });

  it('lets only the allowed IPv4 networks in', () => {
    expect(ask({ requestUri: '/admin', clientAddress: '192.0.2.200' })).toEqual(proxy(5));
    expect(ask({ requestUri: '/admin', clientAddress: '203.0.113.127' })).toEqual(proxy(5));
    expect(ask({ requestUri: '/admin', clientAddress: '203.0.113.63' })).toEqual({ kind: 'denied' });
    expect(ask({ requestUri: '/admin', clientAddress: '192.0.3.1' })).toEqual({ kind: 'denied' });
    expect(ask({ requestUri: '/admin', clientAddress: '2001:db8::1' })).toEqual({ kind: 'denied' });
    expect(ask({ requestUri: '/admin', clientAddress: '' })).toEqual({ kind: 'denied' });
  });

  it('matches an IPv6 client against IPv6 networks', () => {
    // The input validators accept IPv4 lists only today; the router must still get IPv6 right if that widens.
    const routes: OverlayRoute[] = [{ p: '', s: 8, u: upstream(8), a: ['2001:db8::/32', '192.0.2.1'], b: ['2001:db8:bad::/48'] }];
    const v6: RouteIndex = {
      hosts: new Map([['', { json: JSON.stringify(routes), upstreams: new Map(), hasDuplicatePath: false }]]),
      domainIds: new Map(),
      upstreams: new Map(),
    };
    const from = (clientAddress: string) =>
      decideRoute(v6, { host: '', requestUri: '/', clientAddress });
    expect(from('2001:db8:1::5')).toEqual(proxy(8));
    expect(from('2001:db9::5')).toEqual({ kind: 'denied' });
    expect(from('2001:db8:bad::1')).toEqual({ kind: 'denied' });
    expect(from('192.0.2.1')).toEqual(proxy(8));
    expect(from('::ffff:192.0.2.1')).toEqual(proxy(8));
  });

  it('treats an IPv4-mapped IPv6 client as its IPv4 address', () => {
    expect(ask({ requestUri: '/admin', clientAddress: '::ffff:192.0.2.9' })).toEqual(proxy(5));
    expect(ask({ requestUri: '/admin', clientAddress: '::FFFF:192.0.3.9' })).toEqual({ kind: 'denied' });
    expect(ask({ host: 'b.example.com', clientAddress: '::ffff:198.51.100.4' })).toEqual({ kind: 'denied' });
  });

  it('lets a blocked address win over an allowed network', () => {
    expect(ask({ requestUri: '/mixed', clientAddress: '192.0.2.7' })).toEqual({ kind: 'denied' });
    expect(ask({ requestUri: '/mixed', clientAddress: '192.0.2.8' })).toEqual(proxy(6));
    expect(ask({ host: 'b.example.com', clientAddress: '198.51.100.4' })).toEqual({ kind: 'denied' });
  });

  it('finds a domain of the index by name, whatever id the static map gave it', () => {
    // A domain added after the static generation arrives as the default host; its own routes still apply.
    expect(ask({ host: 'b.example.com', clientAddress: '203.0.113.1' })).toEqual(proxy(7));
  });

  it('gives any host that is no domain the default host routes, as the static config does', () => {
    expect(ask({ host: 'gateway.example.net', requestUri: '/x' })).toEqual(proxy(1));
    expect(ask({ host: '', requestUri: '/x' })).toEqual(proxy(1));
    // A domain the static config still knows but the DB no longer has is such a host now.
    expect(ask({ host: 'gone.example.com', requestUri: '/x' })).toEqual(proxy(1));
  });
});
