import { hash } from 'node:crypto';
// Imported, not the global: a test's fake timers replace the global setImmediate, and planning must keep going.
import { setImmediate } from 'node:timers';
import {
  cidrToInts,
  isWildcardDomainName,
  normalizePathLocation,
  pathLocationsDifferInCase,
  wildcardOf,
} from '@postern/contract';
import type { DesiredDomain, DesiredHttpRoute } from '../types.js';
import type { AccessTable } from './access-table.js';
import {
  assertHost,
  assertHostname,
  assertIPv4OrCidr,
  assertPathPrefix,
  assertPort,
  assertPositiveInt,
  isIPv4,
} from '../validate.js';

// The HTTP route table nginx's Lua module serves (lua/postern.lua): per host, the JSON of its routes, longest
// prefix first. Every value passes the data plane's validators here; a row that fails is set aside with a reason
// (and so is a second service on a path another one already serves, or on one that differs from it only in letter
// case, which the Lua module could not tell apart) while every other row is served.

/** The key of services without a domain (published on the no-domain port). */
export const NO_DOMAIN_HOST = '';

export interface RouteTable {
  /** Host ('' = no domain) → JSON array of its routes, as the Lua module reads it. */
  hosts: Map<string, string>;
  /** Service id → the revision of what it serves: a live connection of a service whose revision changed is cut. */
  revisions: Map<number, string>;
  /** Service id → why it is not served. */
  rejected: Map<number, string>;
}

interface LuaRoute {
  s: number;
  r: string;
  p: string;
  u: string;
  a?: [number, number][];
  b?: [number, number][];
  /** The protected access policy's ref in gw_access (lua/postern_access.lua); absent: public. */
  x?: string;
}

/** `10.0.0.0/8` → [network as a 32-bit number, 8]; a bare address is a /32. */
function toNetwork(entry: string, field: string): [number, number] {
  return cidrToInts(assertIPv4OrCidr(entry, field));
}

/** `/api/` and `/api` serve the same prefix; `/` stays `/`. */
export function routePrefix(pathLocation: string): string {
  return normalizePathLocation(assertPathPrefix(pathLocation, 'path'));
}

/** Backends named in /etc/hosts (e.g. `localhost`) become their address: nginx's resolver only asks DNS. */
export function upstreamUrl(route: DesiredHttpRoute, staticHosts: ReadonlyMap<string, string>): string {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the type says so; this guards the rendered config against any other value
  if (route.backendProto !== 'http' && route.backendProto !== 'https')
    throw new Error(`invalid backend protocol: ${String(route.backendProto)}`);
  const host = assertHost(route.backendHost, 'backend host');
  const address = isIPv4(host) ? host : (staticHosts.get(host.toLowerCase()) ?? host);
  return `${route.backendProto}://${address}:${assertPort(route.backendPort, 'backend port')}`;
}

/**
 * The ref of the access policy protecting a route, or undefined (public). A protected route whose policy nginx
 * cannot be given is set aside (thrown), never served unprotected; so is one without a domain (docs/ACCESS.md).
 */
function accessRefOf(route: DesiredHttpRoute, host: string, access: AccessTable | undefined): string | undefined {
  const policyId = route.accessPolicyId ?? null;
  if (policyId === null) return undefined;
  if (host === NO_DOMAIN_HOST) throw new Error('an access policy needs a domain: this service has none');
  const ref = access?.refOf.get(policyId);
  if (ref !== undefined) return ref;
  throw new Error(`its access policy cannot be served: ${access?.rejected.get(policyId) ?? 'not planned'}`);
}

function toLuaRoute(
  route: DesiredHttpRoute,
  host: string,
  staticHosts: ReadonlyMap<string, string>,
  access: AccessTable | undefined,
): LuaRoute {
  const p = routePrefix(route.pathLocation);
  const u = upstreamUrl(route, staticHosts);
  const a = route.allowedIps.map((ip) => toNetwork(ip, 'allowed IP'));
  const b = route.blockedIps.map((ip) => toNetwork(ip, 'blocked IP'));
  const x = accessRefOf(route, host, access);
  // One-shot hash(): a quarter of createHash()'s cost per call, 10,000 calls in every apply at 10,000 services. The
  // access ref is part of it: a service whose policy changed has its open connections cut (checked again on reconnect).
  const r = hash(
    'sha256',
    JSON.stringify(x === undefined ? [host, p, u, a, b] : [host, p, u, a, b, x]),
    'base64url',
  ).slice(0, 12);
  return {
    s: assertPositiveInt(route.serviceId, 'service id'),
    r,
    p,
    u,
    ...(a.length > 0 ? { a } : {}),
    ...(b.length > 0 ? { b } : {}),
    ...(x === undefined ? {} : { x }),
  };
}

/** A service's host: a host name, or a wildcard domain (`*.example.com`: names below it without routes of theirs). */
function assertServiceHost(domain: string): string {
  return isWildcardDomainName(domain) ? domain : assertHostname(domain, 'domain');
}

/** The routes of an exact domain that has none, below a wildcard that has some: nothing (404), never the wildcard's. */
const EXACT_WITHOUT_ROUTES = '[]';

const byLongestPrefix = (x: LuaRoute, y: LuaRoute): number => y.p.length - x.p.length || x.s - y.s;

type RouteTableOptions = {
  staticHosts?: ReadonlyMap<string, string>;
  reservedHosts?: readonly string[];
  access?: AccessTable;
};

/** Paths are ASCII (assertPathPrefix): lower case is contract's pathLocationsDifferInCase's folding. */
const fold = (path: string): string => path.toLowerCase();

/** The prefixes of a path below `/`, shortest first: `/a/b/c` → `/a`, `/a/b`, `/a/b/c`. */
function prefixesOf(path: string): string[] {
  const out: string[] = [];
  if (path === '/') return out;
  for (let i = path.indexOf('/', 1); i !== -1; i = path.indexOf('/', i + 1)) out.push(path.slice(0, i));
  out.push(path);
  return out;
}

/** Below this many routes a host's paths are scanned as they are (most hosts have one): no maps to make. */
const INDEX_PATHS_FROM = 8;

interface Accepted {
  p: string;
  /** Its place in the host's accepted routes. */
  at: number;
}

/**
 * One host's routes as they are accepted, with what answers "is this path taken, or a case variant of one taken?"
 * without looking at every route of the host (the planner did, which made 6,000 paths on one host seconds of CPU).
 * The answer is the one contract's pathLocationsDifferInCase gives against each accepted route in turn, and the
 * clash named is the first accepted one, as that scan found it.
 *
 * For a new path p (normalised), an accepted path o clashes when, once ASCII letters are folded, o lies at or below
 * p but not as written (o's first |p| characters are not p), or p lies below o but not as written (p's first |o|
 * characters are not o); `/` clashes with nothing. Accepted paths never clash with each other, so each folded path
 * has at most one accepted spelling (`exact`); below a folded prefix several spellings may lie (`/Adm/x`, `/adm/y`),
 * each with the first accepted route at or below it (`below`). A host with few routes is scanned instead.
 */
class HostPaths {
  readonly routes: LuaRoute[] = [];
  private hasRoot = false;
  /** Folded path → the accepted path that folds to it (made with the INDEX_PATHS_FROM-th route, as `below`). */
  private exact: Map<string, Accepted> | undefined;
  /** Folded prefix → its spellings as written → the first accepted path at or below that spelling. */
  private below: Map<string, Map<string, Accepted>> | undefined;

  /** Whether another route already serves `path` (normalised) as written. */
  has(path: string): boolean {
    if (path === '/') return this.hasRoot;
    if (this.exact === undefined) return this.routes.some((other) => other.p === path);
    return this.exact.get(fold(path))?.p === path;
  }

  add(route: LuaRoute): void {
    this.routes.push(route);
    if (route.p === '/') this.hasRoot = true;
    if (this.exact !== undefined) this.index(route.p, this.routes.length - 1);
    else if (this.routes.length >= INDEX_PATHS_FROM) this.routes.forEach((other, at) => this.index(other.p, at));
  }

  private index(p: string, at: number): void {
    if (p === '/') return;
    const entry = { p, at };
    (this.exact ??= new Map<string, Accepted>()).set(fold(p), entry);
    const below = (this.below ??= new Map<string, Map<string, Accepted>>());
    for (const prefix of prefixesOf(p)) {
      const folded = fold(prefix);
      let spellings = below.get(folded);
      if (spellings === undefined) below.set(folded, (spellings = new Map<string, Accepted>()));
      if (!spellings.has(prefix)) spellings.set(prefix, entry);
    }
  }

  /** The first accepted path that `path` differs from only in letter case, or undefined. */
  caseClash(path: string): string | undefined {
    if (this.exact === undefined) return this.routes.find((other) => pathLocationsDifferInCase(other.p, path))?.p;
    if (path === '/') return undefined;
    let first: Accepted | undefined;
    const consider = (entry: Accepted) => {
      if (first === undefined || entry.at < first.at) first = entry;
    };
    // Accepted paths at or below `path` once folded, whose spelling of it differs.
    for (const [spelling, entry] of this.below?.get(fold(path)) ?? []) if (spelling !== path) consider(entry);
    // Accepted paths above `path` once folded, not spelled as `path` spells them.
    const prefixes = prefixesOf(path);
    for (let i = 0; i < prefixes.length - 1; i++) {
      const prefix = prefixes[i] as string;
      const entry = this.exact.get(fold(prefix));
      if (entry !== undefined && entry.p !== prefix) consider(entry);
    }
    return first?.p;
  }
}

/** Rows planned between two turns of the event loop by the sliced planner (buildRouteTableSliced). */
export const PLAN_SLICE_ROWS = 2000;

/** The next turn of the event loop: what every API request and every change waiting meanwhile runs in. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Rows already in service-id order (loadDesiredState reads them so) are not copied and sorted again. */
function byServiceId(routes: readonly DesiredHttpRoute[]): readonly DesiredHttpRoute[] {
  for (let i = 1; i < routes.length; i++)
    if ((routes[i - 1] as DesiredHttpRoute).serviceId > (routes[i] as DesiredHttpRoute).serviceId)
      return [...routes].sort((x, y) => x.serviceId - y.serviceId);
  return routes;
}

/**
 * The route table, built in steps: it yields after every `sliceRows` rows (routes planned, hosts serialized, domains
 * looked at), so buildRouteTableSliced can give the event loop back between them. One code path for both planners:
 * the sliced table is the one-turn table, only spread over turns.
 */
function* routeTableSteps(
  routes: readonly DesiredHttpRoute[],
  domains: readonly DesiredDomain[],
  options: RouteTableOptions,
  sliceRows: number,
): Generator<void, RouteTable> {
  const staticHosts = options.staticHosts ?? new Map<string, string>();
  const known = new Set(domains.map((d) => d.domain));
  const reserved = new Set(options.reservedHosts ?? []);
  const byHost = new Map<string, HostPaths>();
  const revisions = new Map<number, string>();
  const rejected = new Map<number, string>();
  let done = 0;
  // Lowest id first: when two rows claim one path, the older one keeps it.
  for (const route of byServiceId(routes)) {
    if (++done % sliceRows === 0) yield;
    try {
      const host = route.domain === null ? NO_DOMAIN_HOST : assertServiceHost(route.domain);
      // A name below a wildcard domain needs no domain of its own: the wildcard's certificate covers it.
      const coveredBy = host === NO_DOMAIN_HOST ? null : wildcardOf(host);
      if (host !== NO_DOMAIN_HOST && !known.has(host) && (coveredBy === null || !known.has(coveredBy)))
        throw new Error(`domain ${host} does not exist`);
      if (reserved.has(host)) throw new Error(`${host} is the console's host name; no service can be published there`);
      const lua = toLuaRoute(route, host, staticHosts, options.access);
      let served = byHost.get(host);
      const where = host === NO_DOMAIN_HOST ? '' : ` on ${host}`;
      if (served?.has(lua.p)) throw new Error(`another service already serves ${lua.p}${where}`);
      const clash = served?.caseClash(lua.p);
      if (clash !== undefined)
        throw new Error(`${lua.p} differs only in letter case from ${clash}, which another service serves${where}`);
      if (served === undefined) byHost.set(host, (served = new HostPaths()));
      served.add(lua);
      revisions.set(lua.s, lua.r);
    } catch (err) {
      rejected.set(route.serviceId, err instanceof Error ? err.message : String(err));
    }
  }
  const hosts = new Map<string, string>();
  for (const [host, { routes: list }] of byHost) {
    done += list.length;
    if (done >= sliceRows) {
      done = 0;
      yield;
    }
    hosts.set(host, JSON.stringify(list.sort(byLongestPrefix)));
  }
  // Exact names win: a domain of its own below a wildcard with services, but with none itself, answers 404 rather
  // than the wildcard's services (another owner's name is never served by someone's wildcard). An empty list is
  // what nginx finds for it.
  for (const domain of known) {
    if (++done % sliceRows === 0) yield;
    if (isWildcardDomainName(domain) || hosts.has(domain)) continue;
    const wildcard = wildcardOf(domain);
    if (wildcard !== null && hosts.has(wildcard)) hosts.set(domain, EXACT_WITHOUT_ROUTES);
  }
  return { hosts, revisions, rejected };
}

/** Runs a planner's steps to the end in this turn. */
export function runSteps<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs a planner's steps with `pause()` (the next turn) between them. */
export async function runStepsSliced<T>(steps: Generator<void, T>, pause: () => Promise<void> = nextTurn): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pause();
  }
}

/** The route table in one turn: a scope's few hosts (scoped runs). */
export function buildRouteTable(
  routes: readonly DesiredHttpRoute[],
  domains: readonly DesiredDomain[],
  options: RouteTableOptions = {},
): RouteTable {
  return runSteps(routeTableSteps(routes, domains, options, Infinity));
}

/**
 * The same route table over several turns, `sliceRows` rows each: the whole desired state (a full run, a drift check)
 * at 100,000 services is seconds of CPU that must not hold every API request and change behind it
 * (dataplane/README.md "Planning in slices").
 */
export function routeTableInSlices(
  routes: readonly DesiredHttpRoute[],
  domains: readonly DesiredDomain[],
  options: RouteTableOptions = {},
  sliceRows = PLAN_SLICE_ROWS,
): Generator<void, RouteTable> {
  return routeTableSteps(routes, domains, options, sliceRows);
}

/**
 * The route table's hosts without the services `ids` (set aside after the plan: nginx had no room for them), looked
 * for in the hosts `within` only (all of them when absent); hosts left with none go. The rest keep the order and form
 * buildRouteTable gave them.
 */
export function withoutServices(
  hosts: ReadonlyMap<string, string>,
  ids: ReadonlySet<number> | ReadonlyMap<number, unknown>,
  within?: Iterable<string>,
): Map<string, string> {
  const out = new Map(hosts);
  if (ids.size === 0) return out;
  for (const host of within ?? hosts.keys()) {
    const json = hosts.get(host);
    if (json === undefined) continue;
    const kept = routesWithout(json, ids);
    if (kept === null) out.delete(host);
    else out.set(host, kept);
  }
  return out;
}

/** One host's routes (JSON) without the services `ids`; null when none is left. */
export function routesWithout(json: string, ids: ReadonlySet<number> | ReadonlyMap<number, unknown>): string | null {
  const routes = JSON.parse(json) as { s: number }[];
  if (routes.length === 0) return json; // an exact domain's guard against its wildcard: it stays
  const kept = routes.filter((route) => !ids.has(route.s));
  if (kept.length === 0) return null;
  return kept.length < routes.length ? JSON.stringify(kept) : json;
}
