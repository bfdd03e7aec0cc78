import {
  cidrBounds,
  cidrsOverlap,
  gatewayNetworksOverlapMessage,
  isIPv4,
  isIPv4Cidr,
  messages,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { nodes } from '../../db/schema.js';
import { fieldError } from '../../errors.js';
import { listGatewayNetworks } from './repository.js';

// A gateway node's network becomes a route on the gateway host (WireGuard AllowedIPs of its peer, a route via the
// interface). Routes into the tunnel for addresses the host itself must reach elsewhere cut the host off: its own
// LAN (the connected route is shadowed), a node's internet address (that node's WireGuard packets would be sent
// into the tunnel they are meant to carry), loopback, link-local, multicast. WireGuard accepts overlapping
// AllowedIPs silently (the route moves to the last peer), so overlaps with other gateways are refused too.

const SPECIAL_NETWORKS: readonly [string, string][] = [
  ['0.0.0.0/8', '"this host" addresses (0.0.0.0/8)'],
  ['127.0.0.0/8', 'loopback (127.0.0.0/8)'],
  ['169.254.0.0/16', 'link-local addresses (169.254.0.0/16)'],
  ['224.0.0.0/4', 'multicast (224.0.0.0/4)'],
  ['240.0.0.0/4', 'reserved and broadcast addresses (240.0.0.0/4)'],
];

type GatewayNetworkDeps = AppDeps;

function cidrContains(outer: string, inner: string): boolean {
  const [outerStart, outerEnd] = cidrBounds(outer);
  const [innerStart, innerEnd] = cidrBounds(inner);
  return outerStart <= innerStart && innerEnd <= outerEnd;
}
/** The operator (console) or a node's token (CLI), which sees no other tenant's facts in an error. */
export type NetworkCaller = 'admin' | 'node';

/**
 * What a node's token may route: private ranges. Anything else the host reaches through its default route (its
 * DNS resolver, the ACME CA), which the host-route check cannot see; only the operator may route such networks.
 */
const PRIVATE_NETWORKS = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'];

/** The internet addresses nodes connect from, as the WireGuard status poll last saw them. */
async function listUnderlayAddresses(deps: GatewayNetworkDeps): Promise<{ name: string; ip: string }[]> {
  return (await deps.db.select({ name: nodes.name, publicKey: nodes.publicKey }).from(nodes).all()).flatMap(
    ({ name, publicKey }) => {
      const ip = deps.dataPlane.status.get(publicKey)?.clientIp;
      return ip && isIPv4(ip) ? [{ name, ip }] : [];
    },
  );
}

/**
 * 422 on `field` naming the conflict. Only the console's admin sets gateway networks (node tokens have no
 * way to), so naming other nodes here tells no tenant anything.
 */
export async function checkGatewayNetwork(
  deps: GatewayNetworkDeps,
  gatewayNetwork: string,
  selfId?: number,
  field: 'gatewayNetwork' | 'gatewayNetworks' = 'gatewayNetwork',
  caller: NetworkCaller = 'admin',
): Promise<void> {
  // In the list field the message names the subnet it is about.
  const refuse = (message: string) =>
    fieldError(field, field === 'gatewayNetworks' ? `${gatewayNetwork}: ${message}` : message);
  if (caller === 'node' && !PRIVATE_NETWORKS.some((range) => cidrContains(range, gatewayNetwork))) {
    throw refuse(
      `A node may only route private networks (${PRIVATE_NETWORKS.join(', ')}); ask the gateway's operator for others`,
    );
  }
  const special = SPECIAL_NETWORKS.find(([cidr]) => cidrsOverlap(gatewayNetwork, cidr));
  if (special) throw refuse(`This network must not overlap ${special[1]}`);
  if (cidrsOverlap(gatewayNetwork, deps.config.vpnSubnet)) {
    throw refuse(`This network must not overlap the VPN subnet ${deps.config.vpnSubnet}`);
  }
  const clash = (await listGatewayNetworks(deps)).find(
    (gw) => gw.id !== selfId && cidrsOverlap(gatewayNetwork, gw.gatewayNetwork),
  );
  // A node's token must not learn other tenants' names, networks or addresses: it gets one fixed text for those.
  const taken = "This network is not available on this gateway (another node's, or one the gateway needs)";
  if (clash)
    throw refuse(
      caller === 'node' ? taken : `This network overlaps ${clash.gatewayNetwork} of the gateway "${clash.name}"`,
    );
  const underlay = (await listUnderlayAddresses(deps)).find(({ ip }) => cidrsOverlap(gatewayNetwork, ip));
  if (underlay)
    throw refuse(
      caller === 'node'
        ? taken
        : `This network contains ${underlay.ip}, the address the node "${underlay.name}" connects from`,
    );
  const hostRoute = (await deps.dataPlane.hostNetworks()).find(
    (route) => isIPv4Cidr(route) && cidrsOverlap(gatewayNetwork, route),
  );
  if (hostRoute)
    throw refuse(`This network overlaps ${hostRoute}, a network the gateway host reaches directly (its own route)`);
}

interface GatewayNetworksRequest {
  isGateway?: boolean | undefined;
  gatewayNetwork?: string | null | undefined;
  gatewayNetworks?: string[] | null | undefined;
}

/**
 * The subnets a node will route after a create (`current` undefined) or an update, checked. `gatewayNetworks`, when
 * sent, is the whole list. A spec client sends only `gatewayNetwork`: that replaces the first subnet and keeps the
 * others, so editing a node in a spec client never drops subnets it cannot see. Only subnets the node does not
 * already route are checked against the outside: one already routed stays editable even if the host's routes changed.
 */
export async function resolveGatewayNetworks(
  deps: GatewayNetworkDeps,
  body: GatewayNetworksRequest,
  current?: { id: number; isGateway: boolean; networks: string[] },
  caller: NetworkCaller = 'admin',
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
  for (const network of wanted.filter((n) => !before.includes(n)))
    await checkGatewayNetwork(deps, network, current?.id, field, caller);
  return wanted;
}
