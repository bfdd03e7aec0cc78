import { describe, expect, it } from 'vitest';
import { parseHostRoutes } from './host-routes.js';

describe('parseHostRoutes', () => {
  it('lists the main table without the default route and the WireGuard interface', () => {
    const output = [
      'default via 192.0.2.1 dev eth0 proto dhcp src 192.0.2.2 metric 100 ',
      '10.44.0.0/16 dev postern0 proto kernel scope link src 10.44.0.1 ',
      '192.168.50.0/24 dev postern0 scope link ',
      '172.17.0.0/16 dev docker0 proto kernel scope link src 172.17.0.1 linkdown ',
      '192.0.2.0/24 dev eth0 proto kernel scope link src 192.0.2.2 metric 100 ',
      'blackhole 10.9.0.0/16 proto static ',
      'unreachable 198.18.0.0/15 ',
      '203.0.113.9 via 192.0.2.1 dev eth0 ',
      'default dev eth1 scope link ',
      '',
    ].join('\n');
    expect(parseHostRoutes(output, 'postern0')).toEqual([
      '172.17.0.0/16',
      '192.0.2.0/24',
      '10.9.0.0/16',
      '198.18.0.0/15',
      '203.0.113.9/32',
    ]);
  });

  it("reads every table: policy routing's tables and the host's own addresses in the local table", () => {
    const output = [
      'default via 192.0.2.1 dev eth0 ',
      '100.100.7.9 dev tailscale0 table 52 ',
      'default dev wg-corp table 51820 scope link ',
      '10.66.0.0/16 via 192.0.2.7 dev eth0 table 100 ',
      'local 10.9.9.9 dev lo table local proto kernel scope host src 10.9.9.9 ',
      'local 10.44.0.1 dev postern0 table local proto kernel scope host src 10.44.0.1 ',
      'broadcast 192.0.2.255 dev eth0 table local proto kernel scope link src 192.0.2.2 ',
      '',
    ].join('\n');
    expect(parseHostRoutes(output, 'postern0')).toEqual([
      '100.100.7.9/32',
      '10.66.0.0/16',
      '10.9.9.9/32',
      '192.0.2.255/32',
    ]);
  });

  it('keeps routes of another interface whose name merely contains the WireGuard one, and skips garbage', () => {
    const output =
      '10.1.0.0/16 dev postern01 scope link\nnonsense here\n10.2.0.0/16 dev eth0 \\\tnexthop via 1.2.3.4\n';
    expect(parseHostRoutes(output, 'postern0')).toEqual(['10.1.0.0/16', '10.2.0.0/16']);
  });
});
