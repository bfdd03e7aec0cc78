import { describe, expect, it } from 'vitest';
import {
  cidrBounds,
  cidrNetwork,
  cidrsOverlap,
  cidrToInts,
  firstHostAddress,
  intToIpv4,
  ipv4ToInt,
  isInSubnet,
} from './ipv4.js';

describe('IPv4 arithmetic', () => {
  it('converts addresses to unsigned 32-bit integers and back, at both ends of the range', () => {
    expect(ipv4ToInt('0.0.0.0')).toBe(0);
    expect(ipv4ToInt('10.1.2.3')).toBe(167838211);
    // Above 2^31: a bitwise implementation would turn this negative.
    expect(ipv4ToInt('255.255.255.255')).toBe(4294967295);
    for (const ip of ['0.0.0.0', '10.1.2.3', '128.0.0.1', '255.255.255.255']) expect(intToIpv4(ipv4ToInt(ip))).toBe(ip);
  });

  it('gives a CIDR as written, its bounds and its network; a bare address is a /32', () => {
    expect(cidrToInts('10.0.0.5/8')).toEqual([167772165, 8]);
    expect(cidrToInts('10.0.0.5')).toEqual([167772165, 32]);
    expect(cidrBounds('10.0.0.5/8')).toEqual([ipv4ToInt('10.0.0.0'), ipv4ToInt('10.255.255.255')]);
    expect(cidrBounds('198.51.100.7')).toEqual([ipv4ToInt('198.51.100.7'), ipv4ToInt('198.51.100.7')]);
    expect(cidrBounds('0.0.0.0/0')).toEqual([0, 4294967295]);
    expect(cidrNetwork('10.0.0.5/8')).toBe('10.0.0.0/8');
    expect(cidrNetwork('192.168.1.0/24')).toBe('192.168.1.0/24');
    expect(cidrNetwork('10.1.2.3/32')).toBe('10.1.2.3/32');
    expect(firstHostAddress('10.44.0.0/16')).toBe('10.44.0.1');
    expect(firstHostAddress('10.44.7.9/16')).toBe('10.44.0.1');
  });

  it('tests subnet membership, network and broadcast addresses included, host bits of the subnet ignored', () => {
    expect(isInSubnet('10.44.3.4', '10.44.0.0/16')).toBe(true);
    expect(isInSubnet('10.45.0.1', '10.44.0.0/16')).toBe(false);
    expect(isInSubnet('192.168.1.77', '192.168.1.0/24')).toBe(true);
    expect(isInSubnet('192.168.1.0', '192.168.1.0/24')).toBe(true);
    expect(isInSubnet('192.168.1.255', '192.168.1.0/24')).toBe(true);
    expect(isInSubnet('192.168.2.0', '192.168.1.0/24')).toBe(false);
    expect(isInSubnet('10.44.9.9', '10.44.0.1/16')).toBe(true);
    expect(isInSubnet('255.255.255.255', '0.0.0.0/0')).toBe(true);
    expect(isInSubnet('10.0.0.1', '10.0.0.1')).toBe(true);
  });

  it('tells overlapping ranges from adjacent ones', () => {
    expect(cidrsOverlap('192.168.0.0/16', '192.168.4.0/24')).toBe(true);
    expect(cidrsOverlap('192.168.4.0/24', '192.168.5.0/24')).toBe(false);
    expect(cidrsOverlap('0.0.0.0/0', '1.2.3.4')).toBe(true);
    expect(cidrsOverlap('198.51.100.7', '198.51.100.0/24')).toBe(true);
    expect(cidrsOverlap('198.51.100.0/25', '198.51.100.128/25')).toBe(false);
  });
});
