import { describe, expect, it } from 'vitest';
import { GATEWAY_PUBLIC_KEY, NODE_PRIVATE_KEY, PRESHARED_KEY, nodeConfigText } from './fixtures.js';
import { findGatewayTunnelIp, isFullTunnel, parseTunnelConfig } from './wg-config.js';

describe('parseTunnelConfig', () => {
  it('splits the gateway config into wg setconf input, addresses and routes', () => {
    const config = parseTunnelConfig(nodeConfigText());
    expect(config.setconf).toBe(
      [
        '[Interface]',
        `PrivateKey = ${NODE_PRIVATE_KEY}`,
        '[Peer]',
        `PublicKey = ${GATEWAY_PUBLIC_KEY}`,
        `PresharedKey = ${PRESHARED_KEY}`,
        'Endpoint = gw.example.com:51820',
        'AllowedIPs = 10.8.0.0/24',
        'PersistentKeepalive = 25',
        '',
      ].join('\n'),
    );
    expect(config.addresses).toEqual(['10.8.0.2/32']);
    expect(config.allowedIps).toEqual(['10.8.0.0/24']);
    expect(config.endpoint).toBe('gw.example.com:51820');
    expect(config.mtu).toBeNull();
  });

  it('reads MTU and several addresses and routes, and adds a host prefix to bare addresses', () => {
    const text = nodeConfigText({ allowedIps: '10.8.0.0/24, 192.168.50.0/24' }).replace(
      'Address = 10.8.0.2/32',
      'Address = 10.8.0.2, fd00::2/128\nMTU = 1380\nDNS = 10.8.0.1',
    );
    const config = parseTunnelConfig(text);
    expect(config.addresses).toEqual(['10.8.0.2/32', 'fd00::2/128']);
    expect(config.mtu).toBe(1380);
    expect(config.allowedIps).toEqual(['10.8.0.0/24', '192.168.50.0/24']);
    expect(config.setconf).not.toMatch(/DNS|MTU|Address/);
  });

  it('never passes wg-quick hooks on: PostUp is dropped, not run', () => {
    const config = parseTunnelConfig(nodeConfigText().replace('[Peer]', 'PostUp = rm -rf /\n[Peer]'));
    expect(config.setconf).not.toContain('PostUp');
    expect(config.setconf).not.toContain('rm -rf');
  });

  it.each([
    [
      'an endpoint with shell characters',
      nodeConfigText().replace('gw.example.com:51820', 'gw.example.com;reboot:51820'),
    ],
    ['a key that is not base64', nodeConfigText().replace(NODE_PRIVATE_KEY, 'not-a-key')],
    ['an unknown key', nodeConfigText().replace('PersistentKeepalive = 25', 'Foo = bar')],
    ['a line outside any section', `Garbage\n${nodeConfigText()}`],
    ['a bad AllowedIPs entry', nodeConfigText({ allowedIps: '10.8.0.0/24, evil' })],
  ])('rejects %s with a one-line message', (_, text) => {
    expect(() => parseTunnelConfig(text)).toThrow(/^Invalid WireGuard configuration from the gateway/);
  });

  it('rejects a config without private key or address', () => {
    expect(() => parseTunnelConfig(nodeConfigText().replace(/PrivateKey = .*\n/, ''))).toThrow(/no PrivateKey/);
    expect(() => parseTunnelConfig(nodeConfigText().replace(/Address = .*\n/, ''))).toThrow(/no Address/);
  });
});

describe('findGatewayTunnelIp', () => {
  it('is the first host of the VPN subnet that holds the node address', () => {
    expect(
      findGatewayTunnelIp(
        parseTunnelConfig(nodeConfigText({ address: '10.20.3.7', allowedIps: '192.168.1.0/24, 10.20.0.0/16' })),
      ),
    ).toBe('10.20.0.1');
  });

  it('is unknown for a full tunnel, which does not name the subnet', () => {
    const config = parseTunnelConfig(nodeConfigText({ address: '10.44.3.5', allowedIps: '0.0.0.0/0' }));
    expect(findGatewayTunnelIp(config)).toBeNull();
    expect(isFullTunnel(config)).toBe(true);
    expect(isFullTunnel(parseTunnelConfig(nodeConfigText()))).toBe(false);
  });
});
