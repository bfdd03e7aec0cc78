import { describe, expect, it } from 'vitest';
import { isWireGuardKey, parseWgDump } from './wireguard.js';

describe('parseWgDump', () => {
  it('reads one status per peer and drops the interface line and preshared keys', () => {
    const text = [
      'PRIV\tPUB\t51820\toff',
      'PEER1\tPSK1\t203.0.113.5:40000\t10.44.0.2/32,192.168.1.0/24\t1700000000\t1234\t5678\t25',
      'PEER2\t(none)\t(none)\t(none)\t0\t0\t0\toff',
      '',
    ].join('\n');
    expect(parseWgDump(text)).toEqual([
      {
        publicKey: 'PEER1',
        endpoint: '203.0.113.5:40000',
        allowedIps: ['10.44.0.2/32', '192.168.1.0/24'],
        latestHandshake: 1700000000,
        transferRx: 1234,
        transferTx: 5678,
      },
      { publicKey: 'PEER2', endpoint: null, allowedIps: [], latestHandshake: 0, transferRx: 0, transferTx: 0 },
    ]);
    expect(JSON.stringify(parseWgDump(text))).not.toContain('PSK1');
    expect(parseWgDump('')).toEqual([]);
  });
});

describe('isWireGuardKey', () => {
  it('takes base64 of 32 bytes only', () => {
    expect(isWireGuardKey('YJ5dOY8xtR6bU0uWpF1ws0zFzM2BzK3gxs1oVwY0m1E=')).toBe(true);
    // The last character before '=' carries two padding bits that must be zero.
    expect(isWireGuardKey('YJ5dOY8xtR6bU0uWpF1ws0zFzM2BzK3gxs1oVwY0m1F=')).toBe(false);
    for (const bad of [
      '',
      'YJ5dOY8xtR6bU0uWpF1ws0zFzM2BzK3gxs1oVwY0m1E',
      'YJ5dOY8xtR6bU0uWpF1ws0zFzM2BzK3gxs1oVwY0m1E=\n',
      'a b'.padEnd(44, '='),
    ]) {
      expect(isWireGuardKey(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});
