import type { DesiredDomain, DesiredHttpRoute } from '../types.js';
import { assertHostname, assertIPv4OrCidr, assertPathPrefix, assertPositiveInt } from '../validate.js';
import { formatDomainId, DEFAULT_HOST_ID, upstreamName, upstreamTarget, upstreamUrl } from './render-http.js';
import { assertFilePath } from './syntax.js';

// The routing overlay: how an HTTP routing change is served without an nginx reload (docs/ARCHITECTURE.md, "Data
// plane in short"; dataplane/README.md). The static generation routes every domain it knows; for each host whose
// routes now differ from that generation, a marker file in the generation's overlay dir (holding the host's routes,
// for people reading it) makes nginx (one stat per request) ask the control plane's router (`overlay-router.ts`)
// through `auth_request`. A background reload later folds the overlay into a new static generation.

/** One route as the router decides with it. Every value passed the same validators as the static renderer's. */
export interface OverlayRoute {
  /** Path prefix without trailing slash; '' is `/`. */
  p: string;
  /** Service id (access log attribution). */
  s: number;
  /** Upstream URL: scheme://ip:port, or scheme://<named upstream> for host-name backends. */
  u: string;
  /** Allowed and blocked addresses or CIDRs (nginx's allow/deny semantics). */
  a: string[];
  b: string[];
  /** A named upstream's `host:port` (not used for routing: it makes a changed target count as a change). */
  t?: string;
}

interface HostRoutes {
  /** The routes as the overlay file holds them (sorted: the text compares equal iff the routing is equal). */
  json: string;
  /** Named upstreams these routes proxy to, with their `host:port`: only a reload can add one. */
  upstreams: ReadonlyMap<string, string>;
  /** Two services on one path: nginx refuses that, so the overlay must not serve it either. */
  hasDuplicatePath: boolean;
}

/** The HTTP routing of one desired state, by host ('' is the gateway's default host). */
export interface RouteIndex {
  hosts: Map<string, HostRoutes>;
  /** The static `map $host` ids: known hosts reach their own overlay file, the others the default one. */
  domainIds: Map<string, string>;
  /** Named upstreams the static config defines. */
  upstreams: Map<string, string>;
}

export const DEFAULT_HOST_FILE = formatDomainId(DEFAULT_HOST_ID);
const EMPTY_ROUTES = '[]';

function toOverlayRoute(route: DesiredHttpRoute, target: string | null): OverlayRoute {
  return {
    p: assertPathPrefix(route.pathLocation, 'path').replace(/\/+$/, ''),
    s: assertPositiveInt(route.serviceId, 'service id'),
    u: upstreamUrl(route),
    a: route.allowedIps.map((ip) => assertIPv4OrCidr(ip, 'allowed IP')),
    b: route.blockedIps.map((ip) => assertIPv4OrCidr(ip, 'blocked IP')),
    ...(target === null ? {} : { t: target }),
  };
}

interface IndexedRoute {
  route: OverlayRoute;
  json: string;
  upstream: [name: string, target: string] | null;
}

function indexRoute(route: DesiredHttpRoute): IndexedRoute {
  const target = upstreamTarget(route);
  const overlayRoute = toOverlayRoute(route, target);
  return { route: overlayRoute, json: JSON.stringify(overlayRoute), upstream: target === null ? null : [upstreamName(route), target] };
}

const NO_UPSTREAMS: ReadonlyMap<string, string> = new Map();

export function indexRoutes(http: DesiredHttpRoute[], domains: DesiredDomain[]): RouteIndex {
  const byHost = new Map<string, IndexedRoute[]>();
  const upstreams = new Map<string, string>();
  const domainIds = new Map<string, string>();
  for (const domain of domains) {
    domainIds.set(assertHostname(domain.domain, 'domain'), formatDomainId(domain.domainId));
    byHost.set(domain.domain, []);
  }
  byHost.set('', []);
  for (const route of http) {
    const entries = byHost.get(route.domain ?? '');
    if (entries === undefined) throw new Error(`service ${route.serviceId} uses domain ${JSON.stringify(route.domain)} that has no domain entry`);
    const entry = indexRoute(route);
    entries.push(entry);
    if (entry.upstream) upstreams.set(...entry.upstream);
  }
  const hosts = new Map<string, HostRoutes>();
  for (const [host, entries] of byHost) {
    if (entries.length > 1) entries.sort((x, y) => (x.route.p < y.route.p ? -1 : x.route.p > y.route.p ? 1 : x.route.s - y.route.s));
    const hasDuplicatePath = entries.some((entry, i) => i > 0 && entries[i - 1]?.route.p === entry.route.p);
    const named = entries.filter((entry) => entry.upstream !== null);
    const hostUpstreams = named.length === 0 ? NO_UPSTREAMS : new Map(named.map((entry) => entry.upstream as [string, string]));
    hosts.set(host, { json: `[${entries.map((entry) => entry.json).join(',')}]`, upstreams: hostUpstreams, hasDuplicatePath });
  }
  return { hosts, domainIds, upstreams };
}

export interface OverlayPlan {
  /** File name in the overlay dir → content. */
  files: Map<string, string>;
  /** False when some host's change needs a reload (a new named upstream, a path nginx would refuse). */
  isComplete: boolean;
}

function overlayFile(routesJson: string): string {
  return `{"routes":${routesJson}}\n`;
}

/**
 * What a host gets in an index: its own routes when it is a domain there, else the default host's, as nginx
 * serves any host its `map $host` does not know.
 */
function effectiveRoutes(index: RouteIndex, host: string): HostRoutes | undefined {
  return index.hosts.get(host !== '' && index.domainIds.has(host) ? host : '');
}

/** The overlay that makes a static generation built from `base` serve `desired`. */
export function planOverlay(base: RouteIndex, desired: RouteIndex): OverlayPlan {
  const files = new Map<string, string>();
  let isComplete = true;
  let hasNewHost = false;
  const hosts = new Set(['', ...base.domainIds.keys(), ...desired.domainIds.keys()]);
  for (const host of hosts) {
    const want = effectiveRoutes(desired, host);
    const wantJson = want?.json ?? EMPTY_ROUTES;
    if (wantJson === (effectiveRoutes(base, host)?.json ?? EMPTY_ROUTES)) continue;
    const isServable = want === undefined
      || (!want.hasDuplicatePath && [...want.upstreams].every(([name, target]) => base.upstreams.get(name) === target));
    if (!isServable) {
      isComplete = false;
      continue;
    }
    if (host === '') files.set(DEFAULT_HOST_FILE, overlayFile(wantJson));
    else {
      const id = base.domainIds.get(host);
      if (id === undefined) hasNewHost = true;
      files.set(id ?? `host.${host}`, overlayFile(wantJson));
    }
  }
  // Hosts the static map does not know arrive as the default host: once one of them is in the overlay, the
  // default host's own routes must be there too.
  if (hasNewHost && !files.has(DEFAULT_HOST_FILE)) {
    files.set(DEFAULT_HOST_FILE, overlayFile(desired.hosts.get('')?.json ?? EMPTY_ROUTES));
  }
  return { files, isComplete };
}

export function isSameRouting(a: RouteIndex, b: RouteIndex): boolean {
  if (a.hosts.size !== b.hosts.size) return false;
  for (const [host, routes] of a.hosts) if (b.hosts.get(host)?.json !== routes.json) return false;
  return true;
}

/** `overlay.conf`, included in the TLS server: where this generation's overlay lives. */
export function renderOverlayConf(dir: string): string {
  return `set $gw_ovl "${assertFilePath(dir)}/$gw_dom";\n`;
}
