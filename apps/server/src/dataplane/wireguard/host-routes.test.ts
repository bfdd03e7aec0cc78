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

  it('keeps routes of another interface whose name merely contains the WireGuard one, and skips garbage', () => {
    const output =
      '10.1.0.0/16 dev postern01 scope link\nnonsense here\n10.2.0.0/16 dev eth0 \\\tnexthop via 1.2.3.4\n';
    expect(parseHostRoutes(output, 'postern0')).toEqual(['10.1.0.0/16', '10.2.0.0/16']);
  });
});
