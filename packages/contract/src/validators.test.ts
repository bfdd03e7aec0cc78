import { describe, expect, it } from 'vitest';
import { isBackendHost, isDomainName, isInSubnet, isIpOrCidr, isIPv4, isIPv6, isPathLocation } from './validators.js';

describe('allow-list validators', () => {
  it('accepts only dotted-quad IPv4', () => {
    expect(isIPv4('10.0.0.1')).toBe(true);
    for (const bad of ['10.0.0', '10.0.0.01x', '256.0.0.1', '1.2.3.4 ', ' 1.2.3.4', '1.2.3.4;']) expect(isIPv4(bad)).toBe(false);
  });

  it('accepts IPv4 addresses and CIDRs for allow/deny lists', () => {
    expect(isIPv6('2001:db8::1')).toBe(true);
    expect(isIPv6('::1')).toBe(true);
    expect(isIPv6('1:2:3:4:5:6:7:8')).toBe(true);
    expect(isIPv6('1::2::3')).toBe(false);
    expect(isIpOrCidr('2001:db8::/32')).toBe(false);
    expect(isIpOrCidr('10.0.0.0/8')).toBe(true);
    expect(isIpOrCidr('192.168.1.7')).toBe(true);
    expect(isIpOrCidr('10.0.0.0/33')).toBe(false);
    expect(isIpOrCidr('all')).toBe(false);
  });

  it('accepts real domain names only', () => {
    for (const ok of ['example.com', 'a.b.example.co.uk', 'xn--bcher-kva.example', 'my-app.test']) expect(isDomainName(ok)).toBe(true);
    for (const bad of ['localhost', '-a.com', 'a-.com', 'a..com', '*.example.com', 'example.com.', 'exa mple.com', 'a.1']) {
      expect(isDomainName(bad)).toBe(false);
    }
  });

  it('accepts IPv4 or host names as backend hosts', () => {
    expect(isBackendHost('192.168.1.10')).toBe(true);
    expect(isBackendHost('db')).toBe(true);
    expect(isBackendHost('1.2.3')).toBe(false);
    expect(isBackendHost('host;rm')).toBe(false);
  });

  it('accepts URL path prefixes without traversal or config syntax', () => {
    expect(isPathLocation('/')).toBe(true);
    expect(isPathLocation('/api/v1_x~y.z-w')).toBe(true);
    expect(isPathLocation('/a/%20')).toBe(false);
    expect(isPathLocation('/a@b')).toBe(false);
    expect(isPathLocation('/a/./b')).toBe(false);
    expect(isPathLocation('/a//b')).toBe(false);
  });

  it('tests subnet membership', () => {
    expect(isInSubnet('10.44.3.4', '10.44.0.0/16')).toBe(true);
    expect(isInSubnet('10.45.0.1', '10.44.0.0/16')).toBe(false);
    expect(isInSubnet('192.168.1.77', '192.168.1.0/24')).toBe(true);
  });
});
