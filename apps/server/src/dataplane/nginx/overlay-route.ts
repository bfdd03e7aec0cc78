import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { OverlayRoute, RouteIndex } from './overlay.js';

// The routing decision for a host in the overlay (overlay.ts), made by the control plane for nginx's
// `auth_request`: the same longest-prefix match and allow/deny semantics as the static locations.

export type RouteDecision =
  | { kind: 'proxy'; serviceId: number; upstream: string }
  | { kind: 'denied' }
  | { kind: 'none' };

interface CompiledRoute {
  prefix: string;
  serviceId: number;
  upstream: string;
  allowed: BlockList | null;
  blocked: BlockList | null;
}

/** Compiled routes per host, per index: an index is immutable, so its entries are compiled once, on first use. */
const compiled = new WeakMap<RouteIndex, Map<string, CompiledRoute[]>>();

function toBlockList(entries: string[]): BlockList | null {
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
    if (family === null) continue; // validated when indexed; never reached
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

function compile(route: OverlayRoute): CompiledRoute {
  return { prefix: route.p, serviceId: route.s, upstream: route.u, allowed: toBlockList(route.a), blocked: toBlockList(route.b) };
}

function routesFor(index: RouteIndex, host: string): CompiledRoute[] {
  let byHost = compiled.get(index);
  if (!byHost) {
    byHost = new Map();
    compiled.set(index, byHost);
  }
  let routes = byHost.get(host);
  if (!routes) {
    const json = index.hosts.get(host)?.json;
    routes = json === undefined ? [] : (JSON.parse(json) as OverlayRoute[]).map(compile).sort((a, b) => b.prefix.length - a.prefix.length);
    byHost.set(host, routes);
  }
  return routes;
}

/**
 * nginx's URI normalisation (ngx_http_parse_complex_uri) of a raw request target: the query goes, and so does
 * everything from a raw `#` (nginx ends the path there; `%23` stays a literal), %XX is decoded (to bytes, kept as
 * latin1 so every byte is one char), `//` merges, `.` and `..` segments resolve.
 * null: a `..` above the root, which nginx answers with 400.
 */
export function normalizePath(requestUri: string): string | null {
  const raw = requestUri.split(/[?#]/, 1)[0] ?? '';
  const decoded = raw.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const segments: string[] = [];
  for (const segment of decoded.split('/').slice(1)) {
    if (segment === '.' ) continue;
    if (segment === '..') {
      if (segments.pop() === undefined) return null;
      continue;
    }
    if (segment === '' ) continue;
    segments.push(segment);
  }
  const trailing = decoded.endsWith('/') || decoded.endsWith('/.') || decoded.endsWith('/..');
  return `/${segments.join('/')}${trailing && segments.length > 0 ? '/' : ''}`;
}

function matches(prefix: string, path: string): boolean {
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
}

function isIn(list: BlockList, address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return list.check(mapped, 'ipv4');
  if (isIPv4(address)) return list.check(address, 'ipv4');
  return isIPv6(address) && list.check(address, 'ipv6');
}

export interface RouteRequest {
  host: string;
  requestUri: string;
  clientAddress: string;
}

/** Where the newest desired state sends this request. */
export function decideRoute(index: RouteIndex, request: RouteRequest): RouteDecision {
  // A host that is no domain (any more) gets the default host's routes, as in the static config.
  const host = request.host !== '' && index.domainIds.has(request.host) ? request.host : '';
  const path = normalizePath(request.requestUri);
  if (path === null) return { kind: 'none' };
  const route = routesFor(index, host).find((candidate) => matches(candidate.prefix, path));
  if (!route) return { kind: 'none' };
  // nginx's `deny <blocked>; allow <allowed>; deny all;`, first match wins.
  if (route.blocked && isIn(route.blocked, request.clientAddress)) return { kind: 'denied' };
  if (route.allowed && !isIn(route.allowed, request.clientAddress)) return { kind: 'denied' };
  return { kind: 'proxy', serviceId: route.serviceId, upstream: route.upstream };
}
