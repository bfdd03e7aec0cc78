import { describe, expect, it } from 'vitest';
import { hostOfEndpoint, parseWgDump } from './dump.js';

describe('parseWgDump', () => {
  it('reads one status per peer and drops the interface line and preshared keys', () => {
    const text = [
      'PRIV\tPUB\t51820\toff',
      'PEER1\tPSK1\t203.0.113.5:40000\t10.44.0.2/32,192.168.1.0/24\t1700000000\t1234\t5678\t25',
      'PEER2\t(none)\t(none)\t10.44.0.3/32\t0\t0\t0\toff',
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
      {
        publicKey: 'PEER2',
        endpoint: null,
        allowedIps: ['10.44.0.3/32'],
        latestHandshake: 0,
        transferRx: 0,
        transferTx: 0,
      },
    ]);
    expect(JSON.stringify(parseWgDump(text))).not.toContain('PSK1');
  });

  it('extracts the client IP from IPv4 and IPv6 endpoints', () => {
    expect(hostOfEndpoint('203.0.113.5:40000')).toBe('203.0.113.5');
    expect(hostOfEndpoint('[2001:db8::1]:40000')).toBe('2001:db8::1');
    expect(hostOfEndpoint(null)).toBeNull();
  });
});
