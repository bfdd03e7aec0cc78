import type { DesiredPeer } from '../types.js';
import { assertIPv4, assertIPv4Cidr, assertInterfaceName } from '../validate.js';

// Isolation for the tunnel, as iptables-restore input for our own chains. `iptables-restore --noflush` flushes and
// refills a declared user chain in one commit, so rules are replaced atomically and other chains stay untouched.
//
// FORWARD policy for traffic entering or leaving the tunnel:
//   - replies to connections we allowed pass;
//   - node → node through the gateway is dropped (nodes are isolated by default);
//   - a node with allowInternet may go out through any other interface (and is masqueraded);
//   - anything else entering from, or forwarded into, the tunnel is dropped.
// The gateway's own traffic (nginx → node, nginx → a gateway node's subnet) is OUTPUT, not FORWARD, so it is not
// affected; the kernel route for a gateway node's subnet comes from `routesForPeers`.

export const FORWARD_CHAIN = 'POSTERN-FWD';
export const NAT_CHAIN = 'POSTERN-NAT';

export function renderFirewallRules(wgInterface: string, peers: DesiredPeer[]): string {
  const wg = assertInterfaceName(wgInterface, 'interface');
  const internet = peers.filter((p) => p.allowInternet === true).map((p) => `${assertIPv4(p.address, 'peer address')}/32`);
  return [
    '*filter',
    `:${FORWARD_CHAIN} - [0:0]`,
    `-A ${FORWARD_CHAIN} -o ${wg} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    `-A ${FORWARD_CHAIN} -i ${wg} -o ${wg} -j DROP`,
    ...internet.map((src) => `-A ${FORWARD_CHAIN} -i ${wg} -s ${src} -j ACCEPT`),
    `-A ${FORWARD_CHAIN} -i ${wg} -j DROP`,
    `-A ${FORWARD_CHAIN} -o ${wg} -j DROP`,
    'COMMIT',
    '*nat',
    `:${NAT_CHAIN} - [0:0]`,
    ...internet.map((src) => `-A ${NAT_CHAIN} -s ${src} ! -o ${wg} -j MASQUERADE`),
    'COMMIT',
    '',
  ].join('\n');
}

/** The jumps into our chains, as `iptables` argv (used with -C to check, then -I to insert when missing). */
export function jumpRules(wgInterface: string): { table: 'filter' | 'nat'; chain: string; match: string[] }[] {
  const wg = assertInterfaceName(wgInterface, 'interface');
  return [
    { table: 'filter', chain: 'FORWARD', match: ['-i', wg, '-j', FORWARD_CHAIN] },
    { table: 'filter', chain: 'FORWARD', match: ['-o', wg, '-j', FORWARD_CHAIN] },
    { table: 'nat', chain: 'POSTROUTING', match: ['-j', NAT_CHAIN] },
  ];
}

/** Subnets routed into the tunnel besides the VPN subnet itself: gateway nodes' networks. */
export function routesForPeers(peers: DesiredPeer[], isInVpnSubnet: (cidr: string) => boolean): string[] {
  return [...new Set(peers.flatMap((p) => p.allowedIps).filter((cidr) => !isInVpnSubnet(cidr)).map((cidr) => assertIPv4Cidr(cidr, 'gateway network')))].sort();
}

export function needsForwarding(peers: DesiredPeer[]): boolean {
  return peers.some((p) => p.allowInternet === true);
}
