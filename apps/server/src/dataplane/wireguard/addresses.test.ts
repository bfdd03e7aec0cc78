import { describe, expect, it } from 'vitest';
import { allocateAddress, gatewayAddress, parseSubnet } from './addresses.js';

describe('tunnel addresses', () => {
  it('parses a subnet and ignores host bits', () => {
    expect(parseSubnet('10.44.0.1/16')).toEqual({
      network: parseSubnet('10.44.0.0/16').network,
      prefix: 16,
      size: 65536,
    });
    expect(() => parseSubnet('10.44.0.0/31')).toThrow('too small');
    expect(() => parseSubnet('10.44.0.0')).toThrow('invalid subnet');
  });

  it('puts the gateway on the first host address', () => {
    expect(gatewayAddress('10.44.0.0/16')).toBe('10.44.0.1');
    expect(gatewayAddress('192.168.7.128/25')).toBe('192.168.7.129');
  });

  it('gives the lowest free address after the gateway and fills holes', () => {
    expect(allocateAddress('10.44.0.0/16', new Set())).toBe('10.44.0.2');
    expect(allocateAddress('10.44.0.0/16', new Set(['10.44.0.2', '10.44.0.4']))).toBe('10.44.0.3');
    expect(allocateAddress('10.44.0.0/16', new Set(['10.44.0.2', '10.44.0.3']))).toBe('10.44.0.4');
  });

  it('crosses octet boundaries', () => {
    const used = new Set(Array.from({ length: 254 }, (_, i) => `10.44.0.${i + 2}`));
    expect(allocateAddress('10.44.0.0/16', used)).toBe('10.44.1.0');
  });

  it('never hands out the broadcast address and says clearly when the subnet is full', () => {
    expect(allocateAddress('10.0.0.0/30', new Set())).toBe('10.0.0.2');
    expect(() => allocateAddress('10.0.0.0/30', new Set(['10.0.0.2']))).toThrow('VPN subnet 10.0.0.0/30 is full');
  });
});
