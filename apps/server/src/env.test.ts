import { describe, expect, it } from 'vitest';
import { parseConfig } from './env.js';

describe('parseConfig', () => {
  it('applies the documented defaults', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({ dataDir: './data', port: 3000, adminUsername: 'admin', vpnSubnet: '10.44.0.0/16', tcpPortRange: [30000, 30100] });
    expect(config.adminPassword).toBeUndefined();
  });

  it('stops with one readable line per bad variable', () => {
    expect(() => parseConfig({ POSTERN_PORT: 'abc', POSTERN_VPN_SUBNET: '10.0.0.0', POSTERN_ADMIN_PASSWORD: 'short' })).toThrow(
      [
        'Invalid configuration:',
        '  POSTERN_PORT: must be a port number (1-65535)',
        '  POSTERN_ADMIN_PASSWORD: must be at least 12 characters',
        '  POSTERN_VPN_SUBNET: must be an IPv4 network in CIDR form, e.g. 10.44.0.0/16',
      ].join('\n'),
    );
  });
});
