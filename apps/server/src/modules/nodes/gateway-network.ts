import { cidrsOverlap, isIPv4, isIPv4Cidr } from '@postern/contract';
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

/** The internet addresses nodes connect from, as the WireGuard status poll last saw them. */
function listUnderlayAddresses(deps: GatewayNetworkDeps): { name: string; ip: string }[] {
  return deps.db
    .select({ name: nodes.name, publicKey: nodes.publicKey })
    .from(nodes)
    .all()
    .flatMap(({ name, publicKey }) => {
      const ip = deps.dataPlane.status.get(publicKey)?.clientIp;
      return ip && isIPv4(ip) ? [{ name, ip }] : [];
    });
}

/**
 * 422 on `gatewayNetwork` naming the conflict. Only the console's admin sets gateway networks (node tokens have no
 * way to), so naming other nodes here tells no tenant anything.
 */
export async function checkGatewayNetwork(deps: GatewayNetworkDeps, gatewayNetwork: string, selfId?: number): Promise<void> {
  const refuse = (message: string) => fieldError('gatewayNetwork', message);
  const special = SPECIAL_NETWORKS.find(([cidr]) => cidrsOverlap(gatewayNetwork, cidr));
  if (special) throw refuse(`This network must not overlap ${special[1]}`);
  if (cidrsOverlap(gatewayNetwork, deps.config.vpnSubnet)) {
    throw refuse(`This network must not overlap the VPN subnet ${deps.config.vpnSubnet}`);
  }
  const clash = listGatewayNetworks(deps).find((gw) => gw.id !== selfId && cidrsOverlap(gatewayNetwork, gw.gatewayNetwork));
  if (clash) throw refuse(`This network overlaps ${clash.gatewayNetwork} of the gateway "${clash.name}"`);
  const underlay = listUnderlayAddresses(deps).find(({ ip }) => cidrsOverlap(gatewayNetwork, ip));
  if (underlay) throw refuse(`This network contains ${underlay.ip}, the address the node "${underlay.name}" connects from`);
  const hostRoute = (await deps.dataPlane.hostNetworks()).find((route) => isIPv4Cidr(route) && cidrsOverlap(gatewayNetwork, route));
  if (hostRoute) throw refuse(`This network overlaps ${hostRoute}, a network the gateway host reaches directly (its own route)`);
}
