import { eq, ne } from 'drizzle-orm';
import { cidrsOverlap, gatewayNetworksOverlapMessage, isIPv4, messages } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { httpServices, nodes, tcpServices } from '../../db/schema.js';
import { fieldError } from '../../errors.js';
import {
  findNetworkClash,
  NODE_NETWORK_UNAVAILABLE,
  tokenNetworkPolicy,
  type NetworkFacts,
  type ReachedAddress,
} from '../../lib/network-guard.js';
import { listGatewayNetworks } from './repository.js';

// A gateway node's network becomes a route on the gateway host (WireGuard AllowedIPs of its peer, a route via the
// interface). Routes into the tunnel for addresses the host itself must reach elsewhere cut the host off or hand
// its traffic to a tenant: its own networks (every routing table), its database, its resolvers, its ACME directory,
// a node's internet address (that node's WireGuard packets would be sent into the tunnel they are meant to carry),
// loopback, link-local, multicast. WireGuard accepts overlapping AllowedIPs silently (the route moves to the last
// peer), so overlaps with other gateways are refused too. The rules themselves: lib/network-guard.ts.
//
// Two callers. The operator (console) gets the clash named. A node's token (`postern networks set`, where the
// operator allowed it) is held to more: private ranges no wider than POSTERN_NODE_NETWORK_MIN_PREFIX, and nothing
// the gateway reaches through its default route (other services' backends, the cloud metadata addresses) besides;
// it learns only that a network is not available, never what of the host or of another tenant is in it.

/** The operator (console) or a node's token (CLI), which sees no other tenant's facts in an error. */
export type NetworkCaller = 'admin' | 'node';

/** The internet addresses nodes connect from, as the WireGuard status poll last saw them. */
async function listUnderlayAddresses(deps: AppDeps): Promise<NetworkFacts['underlay']> {
  return (await deps.db.select({ name: nodes.name, publicKey: nodes.publicKey }).from(nodes).all()).flatMap(
    ({ name, publicKey }) => {
      const ip = deps.dataPlane.status.get(publicKey)?.clientIp;
      return ip && isIPv4(ip) ? [{ who: `the node "${name}"`, ip }] : [];
    },
  );
}

/**
 * Every backend of the services of other nodes than `selfId`, enabled or not (one disabled now may be enabled
 * later), host names resolved as the gateway resolves them.
 */
async function listOtherBackends(deps: AppDeps, selfId: number | undefined): Promise<ReachedAddress[]> {
  const others = (nodeId: typeof httpServices.nodeId | typeof tcpServices.nodeId) =>
    selfId === undefined ? undefined : ne(nodeId, selfId);
  const [http, tcp] = await Promise.all([
    deps.db
      .select({ name: httpServices.name, host: httpServices.backendHost, node: nodes.name })
      .from(httpServices)
      .innerJoin(nodes, eq(nodes.id, httpServices.nodeId))
      .where(others(httpServices.nodeId))
      .all(),
    deps.db
      .select({ name: tcpServices.name, host: tcpServices.backendHost, node: nodes.name })
      .from(tcpServices)
      .innerJoin(nodes, eq(nodes.id, tcpServices.nodeId))
      .where(others(tcpServices.nodeId))
      .all(),
  ]);
  const rows = [http.map((row) => ({ ...row, kind: 'HTTP' })), tcp.map((row) => ({ ...row, kind: 'TCP/UDP' }))];
  const services = rows.flat();
  const names = [...new Set(services.map(({ host }) => host).filter((host) => !isIPv4(host)))];
  const resolved = new Map(
    await Promise.all(names.map(async (name) => [name, await deps.dataPlane.resolveHost(name)] as const)),
  );
  return services.flatMap(({ name, host, node, kind }) =>
    (isIPv4(host) ? [host] : (resolved.get(host) ?? [])).map((address) => ({
      address,
      what: `the backend${host === address ? '' : ` ${host}`} of the ${kind} service "${name}" of the node "${node}"`,
      kind: 'backend' as const,
    })),
  );
}

/** What the subnets of node `selfId` are checked against; a token's check includes what its refusals hide. */
async function gatherFacts(deps: AppDeps, selfId: number | undefined, caller: NetworkCaller): Promise<NetworkFacts> {
  const [gateways, underlay, hostRoutes, settings, backends] = await Promise.all([
    listGatewayNetworks(deps),
    listUnderlayAddresses(deps),
    deps.dataPlane.hostNetworks(),
    deps.dataPlane.reachedAddresses(),
    caller === 'node' ? listOtherBackends(deps, selfId) : Promise.resolve([]),
  ]);
  return {
    vpnSubnet: deps.config.vpnSubnet,
    gatewayNetworks: gateways.map(({ id, name, gatewayNetwork }) => ({
      nodeId: id,
      who: `the gateway "${name}"`,
      network: gatewayNetwork,
    })),
    underlay,
    hostRoutes,
    // The operator decides where its own backends are reached, and on which cloud the gateway runs; a token not.
    reached: caller === 'node' ? [...settings, ...backends] : settings.filter(({ kind }) => kind === 'setting'),
  };
}

/** 422 on `field` when `network` may not be routed by `caller` for node `selfId`. */
function checkGatewayNetwork(
  deps: AppDeps,
  facts: NetworkFacts,
  network: string,
  selfId: number | undefined,
  field: 'gatewayNetwork' | 'gatewayNetworks',
  caller: NetworkCaller,
): void {
  // In the list field the message names the subnet it is about.
  const refuse = (message: string) =>
    fieldError(field, field === 'gatewayNetworks' ? `${network}: ${message}` : message);
  if (caller === 'node') {
    const policy = tokenNetworkPolicy(network, deps.config.nodeNetworkMinPrefix);
    if (policy !== null) throw refuse(policy);
    if (findNetworkClash(network, facts, selfId) !== null) throw refuse(NODE_NETWORK_UNAVAILABLE);
    return;
  }
  const clash = findNetworkClash(network, facts, selfId);
  if (clash !== null) throw refuse(clash);
}

interface GatewayNetworksRequest {
  isGateway?: boolean | undefined;
  gatewayNetwork?: string | null | undefined;
  gatewayNetworks?: string[] | null | undefined;
}

/**
 * The subnets a node will route after a create (`current` undefined) or an update, checked. `gatewayNetworks`, when
 * sent, is the whole list. A spec client sends only `gatewayNetwork`: that replaces the first subnet and keeps the
 * others, so editing a node in a spec client never drops subnets it cannot see. For the operator only subnets the
 * node does not already route are checked against the outside (one already routed stays editable even if the host's
 * routes changed); a token's are checked whole every time, as the data plane does on every apply.
 */
export async function resolveGatewayNetworks(
  deps: AppDeps,
  body: GatewayNetworksRequest,
  current: { id: number; isGateway: boolean; networks: string[] } | undefined,
  caller: NetworkCaller,
): Promise<string[]> {
  const isGateway = body.isGateway ?? current?.isGateway ?? false;
  if (!isGateway) return [];
  const before = current?.isGateway ? current.networks : [];
  const field = body.gatewayNetworks && body.gatewayNetworks.length > 0 ? 'gatewayNetworks' : 'gatewayNetwork';
  let wanted: string[];
  if (field === 'gatewayNetworks') wanted = [...new Set(body.gatewayNetworks)];
  else if (body.gatewayNetwork === undefined && body.gatewayNetworks == null) wanted = before;
  else if (body.gatewayNetwork)
    wanted = [body.gatewayNetwork, ...before.slice(1).filter((n) => n !== body.gatewayNetwork)];
  else wanted = [];
  if (wanted.length === 0) throw fieldError('gatewayNetwork', messages.required);
  for (const [i, network] of wanted.entries()) {
    const other = wanted.slice(0, i).find((earlier) => cidrsOverlap(network, earlier));
    if (other) throw fieldError(field, gatewayNetworksOverlapMessage(network, other));
  }
  const toCheck = caller === 'node' ? wanted : wanted.filter((n) => !before.includes(n));
  if (toCheck.length === 0) return wanted;
  const facts = await gatherFacts(deps, current?.id, caller);
  for (const network of toCheck) checkGatewayNetwork(deps, facts, network, current?.id, field, caller);
  return wanted;
}
