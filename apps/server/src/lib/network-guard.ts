import { cidrBounds, cidrsOverlap, isIPv4, isIPv4Cidr, isInSubnet } from '@postern/contract';

// What a gateway node's subnet must never cover. Each subnet becomes a route on the gateway host into that node's
// tunnel, so it takes over whatever the host reached there before: its own networks, its database, its resolvers,
// the backends of other services, a node's internet address (the tunnel's own packets would be sent into it). The
// same rules serve the operator's checks (modules/nodes/gateway-network.ts, which names the clash) and the data
// plane's re-check of a token's subnets on every apply (dataplane/reconcile/network-guard.ts).

/** Ranges no gateway node may route, with what they are (the operator reads it). */
export const SPECIAL_NETWORKS: readonly (readonly [string, string])[] = [
  ['0.0.0.0/8', '"this host" addresses (0.0.0.0/8)'],
  ['127.0.0.0/8', 'loopback (127.0.0.0/8)'],
  ['169.254.0.0/16', 'link-local addresses (169.254.0.0/16)'],
  ['224.0.0.0/4', 'multicast (224.0.0.0/4)'],
  ['240.0.0.0/4', 'reserved and broadcast addresses (240.0.0.0/4)'],
];

/**
 * Where clouds answer a machine about itself (credentials included). Reached through the default route (or
 * link-local), so no route of the host shows them: a node's token may never route them, whichever cloud this is.
 */
export const METADATA_ADDRESSES: readonly (readonly [string, string])[] = [
  ['169.254.169.254', 'the cloud metadata address (AWS, Google Cloud, Azure, OpenStack, DigitalOcean, Hetzner)'],
  ['169.254.170.2', 'the container metadata address (AWS ECS)'],
  ['100.100.100.200', 'the cloud metadata address (Alibaba Cloud)'],
  ['168.63.129.16', "Azure's platform address (DNS, DHCP, health probes)"],
  ['192.0.0.192', 'the cloud metadata address (Oracle Cloud)'],
  ['169.254.0.23', 'the cloud metadata address (Tencent Cloud)'],
];

/** What a node's token may route at all: private ranges (RFC 1918 and the shared address space of RFC 6598). */
export const PRIVATE_NETWORKS = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'] as const;

/**
 * The one answer a node's token gets for a subnet that clashes with anything (the host's routes and addresses,
 * another node's networks or address, the VPN): which it was would map the gateway's networks for a tenant.
 */
export const NODE_NETWORK_UNAVAILABLE =
  "This network is not available to this node: the gateway or another node uses addresses in it (ask the gateway's operator)";

/** A single address the gateway reaches outside any tunnel, and what it is (for the operator's eyes only). */
export interface ReachedAddress {
  address: string;
  what: string;
  /** A setting of the gateway (database, resolvers, ACME), a cloud's metadata address, or a service's backend. */
  kind: 'setting' | 'metadata' | 'backend';
}

export interface NetworkFacts {
  vpnSubnet: string;
  /** Subnets other gateway nodes route, each with who routes it. */
  gatewayNetworks: readonly { nodeId: number; who: string; network: string }[];
  /** Internet addresses nodes connect from (their WireGuard endpoints), with the node. */
  underlay: readonly { who: string; ip: string }[];
  /** The host's own routes: every table, without the default route and the WireGuard interface's routes. */
  hostRoutes: readonly string[];
  /** Addresses the gateway reaches through its default route (database, resolvers, backends, metadata, ...). */
  reached: readonly ReachedAddress[];
}

/**
 * Why `network` must not be routed into the tunnel of node `selfId`, in the operator's words; null when nothing
 * clashes. A node's own subnets are not "another gateway's".
 */
export function findNetworkClash(network: string, facts: NetworkFacts, selfId?: number): string | null {
  const special = SPECIAL_NETWORKS.find(([cidr]) => cidrsOverlap(network, cidr));
  if (special) return `This network must not overlap ${special[1]}`;
  if (cidrsOverlap(network, facts.vpnSubnet)) return `This network must not overlap the VPN subnet ${facts.vpnSubnet}`;
  const gateway = facts.gatewayNetworks.find((gw) => gw.nodeId !== selfId && cidrsOverlap(network, gw.network));
  if (gateway) return `This network overlaps ${gateway.network} of ${gateway.who}`;
  const contains = (ip: string): boolean => isIPv4(ip) && isInSubnet(ip, network);
  const underlay = facts.underlay.find(({ ip }) => contains(ip));
  if (underlay) return `This network contains ${underlay.ip}, the address ${underlay.who} connects from`;
  const route = facts.hostRoutes.find((cidr) => isIPv4Cidr(cidr) && cidrsOverlap(network, cidr));
  if (route) return `This network overlaps ${route}, a network the gateway host reaches directly (its own route)`;
  const reached = facts.reached.find(({ address }) => contains(address));
  if (reached) return `This network contains ${reached.address}, ${reached.what}`;
  return null;
}

/**
 * The limits on a node's token that are policy, not facts of the host (documented, so naming them tells nothing):
 * a private range, no wider than `/minPrefix`. Null when `network` keeps them.
 */
export function tokenNetworkPolicy(network: string, minPrefix: number): string | null {
  const prefix = Number(network.split('/')[1]);
  const isPrivate = PRIVATE_NETWORKS.some((range) => {
    const [outerStart, outerEnd] = cidrBounds(range);
    const [start, end] = cidrBounds(network);
    return outerStart <= start && end <= outerEnd;
  });
  if (!isPrivate || prefix < minPrefix) {
    return `A node may route private networks only (${PRIVATE_NETWORKS.join(', ')}), each /${String(minPrefix)} or narrower; ask the gateway's operator for others`;
  }
  return null;
}
