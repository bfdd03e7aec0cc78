import { describe, expect, it } from 'vitest';
import { parseConfig } from './env.js';

describe('parseConfig', () => {
  it('applies the documented defaults', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      dataDir: './data',
      port: 3000,
      adminUsername: 'admin',
      vpnSubnet: '10.44.0.0/16',
      tcpPortRange: [30000, 30100],
    });
    expect(config.adminPassword).toBeUndefined();
  });

  it('limits connections per address generously by default, and checks the listener settings', () => {
    expect(parseConfig({}).listener).toEqual({
      maxConnectionsPerAddress: 1024,
      exempt: [],
      handshakeTimeoutSeconds: 10,
      workerConnections: undefined,
    });
    expect(
      parseConfig({
        POSTERN_MAX_CONNECTIONS_PER_ADDRESS: '0',
        POSTERN_CONNECTION_LIMIT_EXEMPT: '10.0.0.5, 192.168.10.0/24',
        POSTERN_HANDSHAKE_TIMEOUT: '30',
        POSTERN_WORKER_CONNECTIONS: '20000',
      }).listener,
    ).toMatchObject({
      maxConnectionsPerAddress: 0,
      exempt: ['10.0.0.5', '192.168.10.0/24'],
      handshakeTimeoutSeconds: 30,
      workerConnections: 20_000,
    });
    expect(() => parseConfig({ POSTERN_MAX_CONNECTIONS_PER_ADDRESS: '-1' })).toThrow(
      /POSTERN_MAX_CONNECTIONS_PER_ADDRESS: must be a whole number/,
    );
    expect(() => parseConfig({ POSTERN_CONNECTION_LIMIT_EXEMPT: '10.0.0.5,::1' })).toThrow(
      /POSTERN_CONNECTION_LIMIT_EXEMPT: must be comma-separated IPv4 addresses or networks.*"::1"/,
    );
    expect(() => parseConfig({ POSTERN_HANDSHAKE_TIMEOUT: '0' })).toThrow(/POSTERN_HANDSHAKE_TIMEOUT/);
    expect(() => parseConfig({ POSTERN_WORKER_CONNECTIONS: '512' })).toThrow(/POSTERN_WORKER_CONNECTIONS/);
  });

  it('checks the gateway name and WireGuard endpoint; the endpoint defaults to the public host and WireGuard port', () => {
    expect(parseConfig({}).gatewayName).toBeUndefined();
    expect(parseConfig({ POSTERN_GATEWAY_NAME: '' }).gatewayName).toBeUndefined();
    expect(parseConfig({ POSTERN_GATEWAY_NAME: 'postern-0' }).gatewayName).toBe('postern-0');
    for (const bad of ['Postern-0', '-gw', 'gw-', 'gw_1', 'a'.repeat(64), 'gw\nx']) {
      expect(() => parseConfig({ POSTERN_GATEWAY_NAME: bad }), bad).toThrow(/POSTERN_GATEWAY_NAME: must be 1-63/);
    }
    expect(parseConfig({ POSTERN_PUBLIC_HOST: 'gw.example.com', POSTERN_WG_PORT: '51999' }).wgEndpoint).toBe(
      'gw.example.com:51999',
    );
    expect(parseConfig({ POSTERN_PUBLIC_HOST: 'GW.Example.com' }).publicHost).toBe('GW.Example.com');
    for (const bad of ['999.1.1.1', 'gw..example.com', '-gw.example.com', 'gw.example.com.', 'gw_1']) {
      expect(() => parseConfig({ POSTERN_PUBLIC_HOST: bad }), bad).toThrow(/POSTERN_PUBLIC_HOST: must be a host name/);
    }
    expect(parseConfig({ POSTERN_WG_ENDPOINT: '203.0.113.7:40000' }).wgEndpoint).toBe('203.0.113.7:40000');
    expect(parseConfig({ POSTERN_WG_ENDPOINT: 'gw-2.example.com:51820' }).wgEndpoint).toBe('gw-2.example.com:51820');
    for (const bad of [
      'gw.example.com',
      'gw.example.com:0',
      'gw.example.com:70000',
      'gw example:1',
      '[::1]:51820',
      'a:1\n[Peer]',
    ]) {
      expect(() => parseConfig({ POSTERN_WG_ENDPOINT: bad }), bad).toThrow(/POSTERN_WG_ENDPOINT: must be host:port/);
    }
  });

  it('takes an empty metrics token or address as unset (a compose file passing ${VAR:-} through) and still refuses a short token', () => {
    const config = parseConfig({ POSTERN_METRICS_TOKEN: '', POSTERN_METRICS_ADDRESS: '' });
    expect(config.metricsToken).toBeUndefined();
    expect(config.metricsAddress).toBeUndefined();
    expect(() => parseConfig({ POSTERN_METRICS_TOKEN: 'short' })).toThrow(
      'POSTERN_METRICS_TOKEN: must be at least 16 characters',
    );
  });

  it('names the registry the node image and chart come from: ghcr.io/postern by default, empty as unset, refuses anything a shell or an image reference would read otherwise', () => {
    expect(parseConfig({}).releaseRegistry).toBe('ghcr.io/postern');
    expect(parseConfig({ POSTERN_RELEASE_REGISTRY: '' }).releaseRegistry).toBe('ghcr.io/postern');
    expect(parseConfig({ POSTERN_RELEASE_REGISTRY: 'registry.example.com:5000/my-team/postern' }).releaseRegistry).toBe(
      'registry.example.com:5000/my-team/postern',
    );
    for (const bad of [
      'Ghcr.io/Postern',
      'ghcr.io/postern/',
      'ghcr.io/x;rm -rf',
      "ghcr.io/a'b",
      'https://ghcr.io/x',
      'a b',
    ]) {
      expect(() => parseConfig({ POSTERN_RELEASE_REGISTRY: bad }), bad).toThrow(
        /POSTERN_RELEASE_REGISTRY: must be a registry/,
      );
    }
  });

  it('takes POSTERN_SECRET_KEY_FILE as a path, empty as unset', () => {
    expect(parseConfig({}).secretKeyFile).toBeUndefined();
    expect(parseConfig({ POSTERN_SECRET_KEY_FILE: '' }).secretKeyFile).toBeUndefined();
    expect(parseConfig({ POSTERN_SECRET_KEY_FILE: '/run/secrets/postern-key' }).secretKeyFile).toBe(
      '/run/secrets/postern-key',
    );
  });

  it('takes POSTERN_DATABASE_URL as postgres:// or postgresql:// only, empty as unset, and never repeats it', () => {
    expect(parseConfig({}).databaseUrl).toBeUndefined();
    expect(parseConfig({ POSTERN_DATABASE_URL: '' }).databaseUrl).toBeUndefined();
    const url = 'postgresql://gw:s3cret@db.internal:5432/postern';
    expect(parseConfig({ POSTERN_DATABASE_URL: url }).databaseUrl).toBe(url);
    expect(parseConfig({ POSTERN_DATABASE_URL: 'postgres://gw@db/postern' }).databaseUrl).toBe(
      'postgres://gw@db/postern',
    );
    for (const bad of ['mysql://gw:s3cret@db/postern', 'postgres://gw:s3cret@[db/postern', '/var/lib/s3cret.db']) {
      let message = '';
      try {
        parseConfig({ POSTERN_DATABASE_URL: bad });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain('POSTERN_DATABASE_URL: must be a PostgreSQL URL');
      expect(message).not.toContain('s3cret');
    }
  });

  it('listens on loopback only unless POSTERN_HOST says otherwise', () => {
    expect(parseConfig({}).host).toBe('127.0.0.1');
    expect(parseConfig({ POSTERN_HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  it('stops with one readable line per bad variable', () => {
    expect(() =>
      parseConfig({ POSTERN_PORT: 'abc', POSTERN_VPN_SUBNET: '10.0.0.0', POSTERN_ADMIN_PASSWORD: 'short' }),
    ).toThrow(
      [
        'Invalid configuration:',
        '  POSTERN_PORT: must be a port number (1-65535)',
        '  POSTERN_ADMIN_PASSWORD: must be at least 12 characters',
        '  POSTERN_VPN_SUBNET: must be an IPv4 network in CIDR form, e.g. 10.44.0.0/16',
      ].join('\n'),
    );
  });

  it('trusts the local nginx by default, nobody when empty, and lists the bad trusted-proxy entries', () => {
    expect(parseConfig({}).trustedProxies).toEqual(['127.0.0.1', '::1']);
    expect(parseConfig({ POSTERN_TRUSTED_PROXIES: '' }).trustedProxies).toEqual([]);
    expect(
      parseConfig({ POSTERN_TRUSTED_PROXIES: ' 10.0.0.0/8, 192.0.2.1 ,fd00::/8,2001:db8::1' }).trustedProxies,
    ).toEqual(['10.0.0.0/8', '192.0.2.1', 'fd00::/8', '2001:db8::1']);
    for (const bad of ['loopback', '10.0.0.0/33', '::1/129', '300.1.1.1', '10.0.0.1,', '*', 'fe80::1%eth0']) {
      expect(() => parseConfig({ POSTERN_TRUSTED_PROXIES: bad }), bad).toThrow(
        /POSTERN_TRUSTED_PROXIES: must be comma-separated IP addresses or CIDR ranges/,
      );
    }
    expect(() => parseConfig({ POSTERN_TRUSTED_PROXIES: '127.0.0.1,proxy.local,,::1' })).toThrow(
      'POSTERN_TRUSTED_PROXIES: must be comma-separated IP addresses or CIDR ranges, e.g. 127.0.0.1,10.0.0.0/8,::1 (not "proxy.local", (empty entry))',
    );
  });

  it('publishes services without a domain on their own HTTPS port, validated like the other ports', () => {
    expect(parseConfig({}).noDomainHttpsPort).toBe(8443);
    expect(parseConfig({ POSTERN_NO_DOMAIN_HTTPS_PORT: '9443' }).noDomainHttpsPort).toBe(9443);
    expect(() => parseConfig({ POSTERN_NO_DOMAIN_HTTPS_PORT: 'x' })).toThrow(
      'POSTERN_NO_DOMAIN_HTTPS_PORT: must be a port number (1-65535)',
    );
    expect(() => parseConfig({ POSTERN_NO_DOMAIN_HTTPS_PORT: '443' })).toThrow(
      'POSTERN_NO_DOMAIN_HTTPS_PORT: must differ from POSTERN_HTTPS_PORT',
    );
    expect(() => parseConfig({ POSTERN_NO_DOMAIN_HTTPS_PORT: '30010' })).toThrow(
      'POSTERN_NO_DOMAIN_HTTPS_PORT: must lie outside POSTERN_TCP_PORT_RANGE',
    );
  });

  it('bounds what one node token may create, with documented defaults', () => {
    expect(parseConfig({}).nodeQuotas).toEqual({ services: 50, ports: 10, domains: 10 });
    expect(
      parseConfig({ POSTERN_NODE_MAX_SERVICES: '0', POSTERN_NODE_MAX_PORTS: '2', POSTERN_NODE_MAX_DOMAINS: '1' })
        .nodeQuotas,
    ).toEqual({
      services: 0,
      ports: 2,
      domains: 1,
    });
    for (const bad of ['-1', '1.5', 'many']) {
      expect(() => parseConfig({ POSTERN_NODE_MAX_PORTS: bad }), bad).toThrow(
        'POSTERN_NODE_MAX_PORTS: must be a whole number from 0 to 100000',
      );
    }
  });

  it("bounds the widest subnet a gateway node's token may route: /16 unless set, from /8 to /32", () => {
    expect(parseConfig({}).nodeNetworkMinPrefix).toBe(16);
    expect(parseConfig({ POSTERN_NODE_NETWORK_MIN_PREFIX: '24' }).nodeNetworkMinPrefix).toBe(24);
    for (const bad of ['7', '33', '16.5', '/16']) {
      expect(() => parseConfig({ POSTERN_NODE_NETWORK_MIN_PREFIX: bad }), bad).toThrow(
        'POSTERN_NODE_NETWORK_MIN_PREFIX: must be a prefix length from 8 to 32',
      );
    }
  });
});
