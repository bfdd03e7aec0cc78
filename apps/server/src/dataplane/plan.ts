import { readFileSync, statSync } from 'node:fs';
import type { DesiredState, DesiredStreamRoute, ScopedState } from './types.js';
import type { NginxRenderOptions } from './nginx/options.js';
import { buildAccessTable, type AccessTable } from './nginx/access-table.js';
import { buildRouteTable, routeTableInSlices, runStepsSliced, type RouteTable } from './nginx/routes.js';
import { renderStreamInstance, streamCertificateName, streamInstanceKey } from './nginx/render-stream.js';
import type { WantedInstance } from './nginx/stream-instances.js';
import { isBackendHost } from '@postern/contract';
import { isIPv4 } from './validate.js';

// Desired state → what nginx must serve: the HTTP route table and one config per TCP/UDP service. Pure apart from
// the static host names it is given; the same code runs with the data plane off, so every value an API test stores
// goes through the real renderers and validators.

export interface StreamPlan {
  wanted: Map<string, WantedInstance>;
  /** Instance key → the service it serves. */
  serviceOf: Map<string, number>;
  rejected: Map<number, string>;
}

export interface DataPlanePlan {
  routes: RouteTable;
  streams: StreamPlan;
  /** What nginx's access module holds (docs/ACCESS.md). */
  access: AccessTable;
}

export function planStreams(
  routes: readonly DesiredStreamRoute[],
  options: NginxRenderOptions,
  staticHosts: ReadonlyMap<string, string>,
): StreamPlan {
  const plan: StreamPlan = { wanted: new Map(), serviceOf: new Map(), rejected: new Map() };
  for (const route of [...routes].sort((a, b) => a.serviceId - b.serviceId)) {
    try {
      const key = streamInstanceKey(route);
      if (plan.wanted.has(key)) throw new Error(`another service already uses port ${route.port}/${route.proto}`);
      const backendHost = isIPv4(route.backendHost)
        ? route.backendHost
        : (staticHosts.get(route.backendHost.toLowerCase()) ?? route.backendHost);
      const conf = renderStreamInstance({ ...route, backendHost }, options);
      plan.wanted.set(key, { conf, certName: streamCertificateName(route), port: route.port, proto: route.proto });
      plan.serviceOf.set(key, route.serviceId);
    } catch (err) {
      plan.rejected.set(route.serviceId, err instanceof Error ? err.message : String(err));
    }
  }
  return plan;
}

export function planDataPlane(
  state: DesiredState,
  options: NginxRenderOptions,
  staticHosts: ReadonlyMap<string, string>,
): DataPlanePlan {
  const access = buildAccessTable(state.access);
  return {
    routes: buildRouteTable(state.http, state.domains, { staticHosts, reservedHosts: [options.consoleHost], access }),
    streams: planStreams(state.stream, options, staticHosts),
    access,
  };
}

/**
 * `planDataPlane` over several turns of the event loop (`pause` between slices; dataplane/README.md "Planning in
 * slices"): what a full run and a drift check plan, the whole desired state. The same plan as `planDataPlane`.
 */
export async function planDataPlaneSliced(
  state: DesiredState,
  options: NginxRenderOptions,
  staticHosts: ReadonlyMap<string, string>,
  slicing: { rows?: number; pause?: () => Promise<void> } = {},
): Promise<DataPlanePlan> {
  const access = buildAccessTable(state.access);
  const steps = routeTableInSlices(
    state.http,
    state.domains,
    { staticHosts, reservedHosts: [options.consoleHost], access },
    slicing.rows,
  );
  const routes = await runStepsSliced(steps, slicing.pause);
  return { routes, streams: planStreams(state.stream, options, staticHosts), access };
}

/**
 * What a scoped run pushes: the routes of the scope's hosts (all of their routes were loaded), the access table, and
 * the instances of the scope's TCP/UDP keys (each key's one service was loaded).
 */
export interface ScopedPlan {
  routes: RouteTable;
  access: AccessTable;
  streams: StreamPlan;
}

/** The same planner as `planDataPlane`, over a scope's rows: the entries it gives are those of the scope's hosts. */
export function planScoped(
  scoped: ScopedState,
  options: NginxRenderOptions,
  staticHosts: ReadonlyMap<string, string>,
): ScopedPlan {
  const access = buildAccessTable(scoped.access);
  return {
    routes: buildRouteTable(scoped.http, scoped.domains, { staticHosts, reservedHosts: [options.consoleHost], access }),
    access,
    streams: planStreams(scoped.stream ?? [], options, staticHosts),
  };
}

/** `/etc/hosts` as name → IPv4 address (first one wins, as the resolver does); nginx's resolver only asks DNS. */
export function parseHostsFile(text: string): Map<string, string> {
  const hosts = new Map<string, string>();
  for (const line of text.split('\n')) {
    const [address, ...names] = (line.split('#')[0] ?? '').trim().split(/\s+/);
    if (!address || !isIPv4(address)) continue;
    for (const name of names) {
      const lower = name.toLowerCase();
      if (isBackendHost(lower) && !hosts.has(lower)) hosts.set(lower, address);
    }
  }
  return hosts;
}

/** Reads /etc/hosts again only when it changed (a container runtime may rewrite it). */
export function createStaticHosts(path = '/etc/hosts'): () => Map<string, string> {
  let cached: { mtimeMs: number; hosts: Map<string, string> } | null = null;
  return () => {
    let mtimeMs = -1;
    try {
      mtimeMs = statSync(path).mtimeMs;
    } catch {
      return new Map([['localhost', '127.0.0.1']]);
    }
    if (cached?.mtimeMs !== mtimeMs) cached = { mtimeMs, hosts: parseHostsFile(readFileSync(path, 'utf8')) };
    return cached.hosts;
  };
}

/** IPv4 name servers of /etc/resolv.conf, for nginx's `resolver` (backends given by DNS name). */
export function readResolvers(path = '/etc/resolv.conf'): string[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((line) => /^\s*nameserver\s+(\S+)/.exec(line)?.[1] ?? '')
    .filter((address) => isIPv4(address));
}
