import { describe, expect, it } from 'vitest';
import type { DesiredPeer } from '../types.js';
import { isInSubnet } from '@postern/contract';
import { jumpRules, renderFirewallRules, routesForPeers } from './firewall.js';

const peer = (over: Partial<DesiredPeer>): DesiredPeer => ({
  nodeId: 1,
  publicKey: 'K',
  presharedKey: null,
  address: '10.44.0.2',
  allowedIps: ['10.44.0.2/32'],
  ...over,
});

const ports = {
  tunnelAddress: '10.44.0.1',
  httpPort: 80,
  httpsPorts: [443, 8443],
  tcpPortRange: [30000, 30100] as const,
};

describe('renderFirewallRules', () => {
  it('isolates nodes, lets only allowInternet nodes out (masqueraded), and lets nodes reach only published ports', () => {
    expect(
      renderFirewallRules(
        'postern0',
        [peer({}), peer({ nodeId: 2, address: '10.44.0.3', allowInternet: true })],
        ports,
      ),
    ).toBe(`*filter
:POSTERN-FWD - [0:0]
-A POSTERN-FWD -o postern0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A POSTERN-FWD -i postern0 -o postern0 -j DROP
-A POSTERN-FWD -i postern0 -s 10.44.0.3/32 -j ACCEPT
-A POSTERN-FWD -i postern0 -j DROP
-A POSTERN-FWD -o postern0 -j DROP
:POSTERN-IN - [0:0]
-A POSTERN-IN -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A POSTERN-IN -d 10.44.0.1/32 -p tcp --dport 80 -j ACCEPT
-A POSTERN-IN ! -d 10.44.0.1/32 -p tcp -m multiport --dports 80,443,8443 -j ACCEPT
-A POSTERN-IN ! -d 10.44.0.1/32 -p tcp --dport 30000:30100 -j ACCEPT
-A POSTERN-IN ! -d 10.44.0.1/32 -p udp --dport 30000:30100 -j ACCEPT
-A POSTERN-IN -j DROP
COMMIT
*nat
:POSTERN-NAT - [0:0]
-A POSTERN-NAT -s 10.44.0.3/32 ! -o postern0 -j MASQUERADE
COMMIT
`);
  });

  it('refuses an interface name that is not one', () => {
    expect(() => renderFirewallRules('wg0 -j ACCEPT', [], ports)).toThrow('invalid interface');
  });

  it('jumps from FORWARD in both directions, from INPUT for the tunnel, and from POSTROUTING', () => {
    expect(jumpRules('postern0')).toEqual([
      { table: 'filter', chain: 'FORWARD', match: ['-i', 'postern0', '-j', 'POSTERN-FWD'] },
      { table: 'filter', chain: 'FORWARD', match: ['-o', 'postern0', '-j', 'POSTERN-FWD'] },
      { table: 'filter', chain: 'INPUT', match: ['-i', 'postern0', '-j', 'POSTERN-IN'] },
      { table: 'nat', chain: 'POSTROUTING', match: ['-j', 'POSTERN-NAT'] },
    ]);
  });
});

describe('routesForPeers', () => {
  it('routes gateway nodes’ subnets into the tunnel, not the nodes’ own /32s', () => {
    const vpn = '10.44.0.0/16';
    const peers = [
      peer({}),
      peer({ nodeId: 2, address: '10.44.0.3', allowedIps: ['10.44.0.3/32', '192.168.50.0/24'] }),
    ];
    expect(routesForPeers(peers, (cidr) => isInSubnet(cidr.split('/')[0] ?? '', vpn))).toEqual([
      { cidr: '192.168.50.0/24', nodeId: 2 },
    ]);
  });
});
