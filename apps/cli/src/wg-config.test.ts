import { describe, expect, it } from 'vitest';
import {
  GATEWAYS,
  GATEWAY_PUBLIC_KEY,
  NODE_PRIVATE_KEY,
  OTHER_PRIVATE_KEY,
  PRESHARED_KEY,
  multiGatewayConfigText,
  nodeConfigText,
} from './fixtures.js';
import {
  allowedIpsWithHolder,
  findGatewayTunnelIp,
  isFullTunnel,
  isInterfaceChanged,
  parseTunnelConfig,
  peerTunnelIp,
  renderSetconf,
  wideRoutes,
} from './wg-config.js';

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
    ['an endpoint with an all-digit top-level label', nodeConfigText().replace('gw.example.com', '999.1.1.1')],
    ['an endpoint with an empty label', nodeConfigText().replace('gw.example.com', 'gw..example.com')],
    ['an endpoint with a bracketed non-address', nodeConfigText().replace('gw.example.com', '[gw]')],
  ])('rejects %s with a one-line message', (_, text) => {
    expect(() => parseTunnelConfig(text)).toThrow(/^Invalid WireGuard configuration from the gateway/);
  });

  it.each(['203.0.113.7', '[2001:db8::7]', 'GW.Example.com', 'gateway'])('takes %s as an endpoint host', (host) => {
    expect(parseTunnelConfig(nodeConfigText().replace('gw.example.com', host)).endpoint).toBe(`${host}:51820`);
  });

  it('reads one peer per gateway, in order, and routes the union of their AllowedIPs', () => {
    const config = parseTunnelConfig(multiGatewayConfigText());
    expect(config.peers.map((peer) => [peer.publicKey, peer.endpoint, peer.allowedIps])).toEqual([
      [GATEWAYS[0]?.publicKey, 'gw-a.example.com:51820', ['10.8.0.1/32', '10.8.0.0/24']],
      [GATEWAYS[1]?.publicKey, 'gw-b.example.com:51820', ['10.8.0.254/32']],
      [GATEWAYS[2]?.publicKey, 'gw-c.example.com:51820', ['10.8.0.253/32']],
    ]);
    expect(config.allowedIps).toEqual(['10.8.0.1/32', '10.8.0.0/24', '10.8.0.254/32', '10.8.0.253/32']);
    expect(config.endpoint).toBe('gw-a.example.com:51820');
    expect(config.setconf.match(/^\[Peer\]$/gm)).toHaveLength(3);
    expect(config.setconf).toContain(`PublicKey = ${GATEWAYS[2]?.publicKey}\nPresharedKey = ${PRESHARED_KEY}`);
    expect(config.peers.map((peer) => peerTunnelIp(config, peer))).toEqual(['10.8.0.1', '10.8.0.254', '10.8.0.253']);
  });

  it('rejects two peers with the same key, and a second [Interface]', () => {
    const twice = multiGatewayConfigText({ gateways: [GATEWAYS[0], { ...GATEWAYS[0], address: '10.8.0.9' }] as never });
    expect(() => parseTunnelConfig(twice)).toThrow(/the same PublicKey in two \[Peer\] sections/);
    expect(() => parseTunnelConfig(`${nodeConfigText()}[Interface]\nAddress = 10.8.0.3/32\n`)).toThrow(
      /a second \[Interface\]/,
    );
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

describe('wide routes with several gateways', () => {
  it("are the first peer's routes other than its own address, and move whole to another peer", () => {
    const config = parseTunnelConfig(multiGatewayConfigText());
    expect(wideRoutes(config)).toEqual(['10.8.0.0/24']);
    const b = GATEWAYS[1]?.publicKey ?? '';
    expect([...allowedIpsWithHolder(config, b).values()]).toEqual([
      ['10.8.0.1/32'],
      ['10.8.0.254/32', '10.8.0.0/24'],
      ['10.8.0.253/32'],
    ]);
    expect(renderSetconf(config, b)).toContain(
      `PublicKey = ${b}\nPresharedKey = ${PRESHARED_KEY}\nEndpoint = gw-b.example.com:51820\nAllowedIPs = 10.8.0.254/32, 10.8.0.0/24\n`,
    );
    // An unknown holder (a gateway that left the list) gives them back to the first peer.
    expect(renderSetconf(config, 'gone')).toBe(config.setconf);
  });

  it('are the default route for a full tunnel, and none with one gateway', () => {
    expect(wideRoutes(parseTunnelConfig(multiGatewayConfigText({ allowInternet: true })))).toEqual(['0.0.0.0/0']);
    expect(isFullTunnel(parseTunnelConfig(multiGatewayConfigText({ allowInternet: true })))).toBe(true);
    expect(wideRoutes(parseTunnelConfig(nodeConfigText()))).toEqual([]);
  });

  it('need a new interface only for key, address or MTU changes, not for peer changes', () => {
    const base = parseTunnelConfig(multiGatewayConfigText());
    expect(isInterfaceChanged(base, parseTunnelConfig(multiGatewayConfigText({ gateways: GATEWAYS.slice(1) })))).toBe(
      false,
    );
    expect(isInterfaceChanged(base, parseTunnelConfig(nodeConfigText()))).toBe(false);
    expect(isInterfaceChanged(base, parseTunnelConfig(multiGatewayConfigText({ privateKey: OTHER_PRIVATE_KEY })))).toBe(
      true,
    );
    expect(
      isInterfaceChanged(
        base,
        parseTunnelConfig(multiGatewayConfigText().replace('Address = 10.8.0.2/32', 'Address = 10.8.0.3/32')),
      ),
    ).toBe(true);
    expect(
      isInterfaceChanged(
        base,
        parseTunnelConfig(
          multiGatewayConfigText().replace('Address = 10.8.0.2/32', 'Address = 10.8.0.2/32\nMTU = 1380'),
        ),
      ),
    ).toBe(true);
  });
});
