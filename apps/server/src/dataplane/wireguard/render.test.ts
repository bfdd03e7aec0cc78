import { describe, expect, it } from 'vitest';
import { renderNodeConfig, renderServerConfig } from './render.js';

const KEY_A = `${'A'.repeat(43)}=`;
const KEY_B = `${'B'.repeat(42)}A=`;
const KEY_C = `${'C'.repeat(42)}A=`;

const node = {
  nodePrivateKey: KEY_A,
  nodeAddress: '10.44.0.2',
  presharedKey: KEY_C,
  gatewayPublicKey: KEY_B,
  endpoint: 'gw.example.com:51820',
  vpnSubnet: '10.44.0.0/16',
  allowInternet: false,
};

describe('renderNodeConfig', () => {
  it('renders the wg-quick file a node runs', () => {
    expect(renderNodeConfig(node)).toBe(`[Interface]
Address = 10.44.0.2/32
PrivateKey = ${KEY_A}

[Peer]
PublicKey = ${KEY_B}
PresharedKey = ${KEY_C}
Endpoint = gw.example.com:51820
AllowedIPs = 10.44.0.0/16
PersistentKeepalive = 25
`);
  });

  it('sends everything through the tunnel when the node may reach the internet', () => {
    expect(renderNodeConfig({ ...node, allowInternet: true, presharedKey: null })).toContain(
      'AllowedIPs = 0.0.0.0/0\nPersistentKeepalive = 25',
    );
    expect(renderNodeConfig({ ...node, presharedKey: null })).not.toContain('PresharedKey');
  });

  it('adds extra routes after the VPN subnet', () => {
    expect(renderNodeConfig({ ...node, gatewayNetworkRoutes: ['192.168.50.0/24'] })).toContain(
      'AllowedIPs = 10.44.0.0/16, 192.168.50.0/24\n',
    );
  });

  it('refuses values that could inject config lines', () => {
    expect(() => renderNodeConfig({ ...node, nodePrivateKey: `${KEY_A}\nPostUp = rm -rf /` })).toThrow(
      'invalid node private key',
    );
    expect(() => renderNodeConfig({ ...node, endpoint: 'gw.example.com' })).toThrow('invalid endpoint');
    expect(() => renderNodeConfig({ ...node, endpoint: 'gw example:1' })).toThrow('invalid endpoint host');
    expect(() => renderNodeConfig({ ...node, endpoint: 'gw:70000' })).toThrow('invalid endpoint port');
    expect(() => renderNodeConfig({ ...node, nodeAddress: '10.44.0.2/32' })).toThrow('invalid node address');
  });
});

describe('renderNodeConfig with several gateways', () => {
  const KEY_D = `${'D'.repeat(42)}A=`;
  const gateways = [
    { publicKey: KEY_B, endpoint: 'gw-a.example.com:51820', address: '10.44.0.1' },
    { publicKey: KEY_D, endpoint: '203.0.113.7:51821', address: '10.44.255.254' },
  ];

  it('has one peer per gateway, in order: each its own /32, the first also the wide routes', () => {
    expect(renderNodeConfig({ ...node, gateways, gatewayNetworkRoutes: ['192.168.50.0/24'] })).toBe(`[Interface]
Address = 10.44.0.2/32
PrivateKey = ${KEY_A}

[Peer]
PublicKey = ${KEY_B}
PresharedKey = ${KEY_C}
Endpoint = gw-a.example.com:51820
AllowedIPs = 10.44.0.1/32, 10.44.0.0/16, 192.168.50.0/24
PersistentKeepalive = 25

[Peer]
PublicKey = ${KEY_D}
PresharedKey = ${KEY_C}
Endpoint = 203.0.113.7:51821
AllowedIPs = 10.44.255.254/32
PersistentKeepalive = 25
`);
    expect(renderNodeConfig({ ...node, gateways, allowInternet: true })).toContain(
      'AllowedIPs = 10.44.0.1/32, 0.0.0.0/0\nPersistentKeepalive = 25\n\n[Peer]',
    );
  });

  it('renders one gateway exactly as before several gateways existed', () => {
    const { gatewayPublicKey: _key, endpoint: _endpoint, ...rest } = node;
    expect(renderNodeConfig({ ...rest, gateways: [{ ...gateways[0]!, endpoint: node.endpoint }] })).toBe(
      renderNodeConfig(node),
    );
  });

  it("refuses a gateway's bad key, endpoint or address, and an empty list", () => {
    const { gatewayPublicKey: _key, endpoint: _endpoint, ...rest } = node;
    const second = gateways[1]!;
    expect(() =>
      renderNodeConfig({ ...rest, gateways: [gateways[0]!, { ...second, publicKey: `${KEY_D}\n[Peer]` }] }),
    ).toThrow('invalid gateway public key');
    expect(() => renderNodeConfig({ ...rest, gateways: [gateways[0]!, { ...second, endpoint: 'x y:1' }] })).toThrow(
      'invalid endpoint host',
    );
    expect(() =>
      renderNodeConfig({ ...rest, gateways: [gateways[0]!, { ...second, address: '10.44.0.0/16' }] }),
    ).toThrow('invalid gateway address');
    expect(() => renderNodeConfig({ ...rest, gateways: [] })).toThrow('at least one gateway');
  });
});

describe('renderServerConfig', () => {
  it('renders the interface and one peer per node for wg syncconf', () => {
    const text = renderServerConfig({
      privateKey: KEY_A,
      listenPort: 51820,
      peers: [
        {
          nodeId: 1,
          publicKey: KEY_B,
          presharedKey: KEY_C,
          address: '10.44.0.2',
          allowedIps: ['10.44.0.2/32', '192.168.50.0/24'],
        },
        { nodeId: 2, publicKey: KEY_C, presharedKey: null, address: '10.44.0.3', allowedIps: ['10.44.0.3/32'] },
      ],
    });
    expect(text).toBe(`[Interface]
PrivateKey = ${KEY_A}
ListenPort = 51820

[Peer]
PublicKey = ${KEY_B}
PresharedKey = ${KEY_C}
AllowedIPs = 10.44.0.2/32, 192.168.50.0/24

[Peer]
PublicKey = ${KEY_C}
AllowedIPs = 10.44.0.3/32
`);
  });

  it('dials a peer at its last known endpoint, with a keepalive that starts the handshake at once', () => {
    const text = renderServerConfig({
      privateKey: KEY_A,
      listenPort: 51820,
      peers: [
        {
          nodeId: 1,
          publicKey: KEY_B,
          presharedKey: null,
          address: '10.44.0.2',
          allowedIps: ['10.44.0.2/32'],
          endpoint: '203.0.113.7:40112',
        },
      ],
    });
    expect(text).toContain(`[Peer]
PublicKey = ${KEY_B}
AllowedIPs = 10.44.0.2/32
Endpoint = 203.0.113.7:40112
PersistentKeepalive = 25
`);
    expect(() =>
      renderServerConfig({
        privateKey: KEY_A,
        listenPort: 1,
        peers: [
          {
            nodeId: 1,
            publicKey: KEY_B,
            presharedKey: null,
            address: '10.44.0.2',
            allowedIps: ['10.44.0.2/32'],
            endpoint: '1.2.3.4:5\nx',
          },
        ],
      }),
    ).toThrow('invalid peer endpoint');
  });

  it('refuses a bad allowed IP', () => {
    expect(() =>
      renderServerConfig({
        privateKey: KEY_A,
        listenPort: 1,
        peers: [
          {
            nodeId: 1,
            publicKey: KEY_B,
            presharedKey: null,
            address: '10.44.0.2',
            allowedIps: ['10.44.0.2/32\n[Peer]'],
          },
        ],
      }),
    ).toThrow('invalid peer allowed IP');
  });
});
