import type { DesiredPeer } from '../types.js';
import { assertIPv4, assertIPv4Cidr, assertInterfaceName, assertPort } from '../validate.js';

// Isolation for the tunnel, as iptables-restore input for our own chains. `iptables-restore --noflush` flushes and
// refills a declared user chain in one commit, so rules are replaced atomically and other chains stay untouched.
//
// FORWARD policy for traffic entering or leaving the tunnel:
//   - replies to connections we allowed pass;
//   - node → node through the gateway is dropped (nodes are isolated by default);
//   - a node with allowInternet may go out through any other interface (and is masqueraded);
//   - anything else entering from, or forwarded into, the tunnel is dropped.
// INPUT policy for traffic from the tunnel to the gateway itself: a node reaches nothing on the gateway but
//   - replies to the gateway's own connections (nginx → the node's services);
//   - the tunnel health check, port 80 of the gateway's tunnel address (nginx answers only that path there);
//   - published services through the gateway's other (public) addresses: a full-tunnel node reaches the internet,
//     the gateway's public address included, through the tunnel.
// So neither the control plane (whatever POSTERN_HOST says) nor the console's origin answers over the tunnel.
// The gateway's own traffic (nginx → node, nginx → a gateway node's subnet) is OUTPUT, not FORWARD, so it is not
// affected; the kernel route for a gateway node's subnet comes from `routesForPeers`.

export const FORWARD_CHAIN = 'POSTERN-FWD';
export const INPUT_CHAIN = 'POSTERN-IN';
export const NAT_CHAIN = 'POSTERN-NAT';

export interface TunnelPorts {
  /** The gateway's own tunnel address (no prefix). */
  tunnelAddress: string;
  httpPort: number;
  /** HTTPS ports of published services (the console's port too: it is public anyway). */
  httpsPorts: readonly number[];
  tcpPortRange: readonly [number, number];
}

export function renderFirewallRules(wgInterface: string, peers: DesiredPeer[], ports: TunnelPorts): string {
  const wg = assertInterfaceName(wgInterface, 'interface');
  const internet = peers
    .filter((p) => p.allowInternet === true)
    .map((p) => `${assertIPv4(p.address, 'peer address')}/32`);
  const self = `${assertIPv4(ports.tunnelAddress, 'tunnel address')}/32`;
  const web = [ports.httpPort, ...ports.httpsPorts].map((port) => assertPort(port, 'port'));
  const [lo, hi] = ports.tcpPortRange.map((port) => assertPort(port, 'port range')) as [number, number];
  return [
    '*filter',
    `:${FORWARD_CHAIN} - [0:0]`,
    `-A ${FORWARD_CHAIN} -o ${wg} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    `-A ${FORWARD_CHAIN} -i ${wg} -o ${wg} -j DROP`,
    ...internet.map((src) => `-A ${FORWARD_CHAIN} -i ${wg} -s ${src} -j ACCEPT`),
    `-A ${FORWARD_CHAIN} -i ${wg} -j DROP`,
    `-A ${FORWARD_CHAIN} -o ${wg} -j DROP`,
    `:${INPUT_CHAIN} - [0:0]`,
    `-A ${INPUT_CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    `-A ${INPUT_CHAIN} -d ${self} -p tcp --dport ${assertPort(ports.httpPort, 'HTTP port')} -j ACCEPT`,
    `-A ${INPUT_CHAIN} ! -d ${self} -p tcp -m multiport --dports ${[...new Set(web)].join(',')} -j ACCEPT`,
    `-A ${INPUT_CHAIN} ! -d ${self} -p tcp --dport ${lo}:${hi} -j ACCEPT`,
    `-A ${INPUT_CHAIN} ! -d ${self} -p udp --dport ${lo}:${hi} -j ACCEPT`,
    `-A ${INPUT_CHAIN} -j DROP`,
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
    { table: 'filter', chain: 'INPUT', match: ['-i', wg, '-j', INPUT_CHAIN] },
    { table: 'nat', chain: 'POSTROUTING', match: ['-j', NAT_CHAIN] },
  ];
}

/** Subnets routed into the tunnel besides the VPN subnet itself, per node (gateway nodes' networks). */
export function routesForPeers(
  peers: DesiredPeer[],
  isInVpnSubnet: (cidr: string) => boolean,
): { cidr: string; nodeId: number }[] {
  const seen = new Set<string>();
  const out: { cidr: string; nodeId: number }[] = [];
  for (const peer of peers) {
    for (const cidr of peer.allowedIps) {
      if (isInVpnSubnet(cidr) || seen.has(cidr)) continue;
      seen.add(assertIPv4Cidr(cidr, 'gateway network'));
      out.push({ cidr, nodeId: peer.nodeId });
    }
  }
  return out.sort((a, b) => (a.cidr < b.cidr ? -1 : a.cidr > b.cidr ? 1 : 0));
}

export function needsForwarding(peers: DesiredPeer[]): boolean {
  return peers.some((p) => p.allowInternet === true);
}
