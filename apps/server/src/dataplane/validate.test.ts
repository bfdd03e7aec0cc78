import { describe, expect, it } from 'vitest';
import { assertHost, isHostname, isIPv4, isIPv4Cidr, isPathPrefix, isWgKey } from './validate.js';
import { generateKeyPair } from './wireguard/keys.js';

describe('validators', () => {
  it('accepts real WireGuard keys and rejects anything that is not 32 bytes of base64', () => {
    expect(isWgKey(generateKeyPair().publicKey)).toBe(true);
    expect(isWgKey('A'.repeat(43) + '=')).toBe(true);
    expect(isWgKey('A'.repeat(44))).toBe(false);
    expect(isWgKey(`${'A'.repeat(42)}B=`)).toBe(false); // non-canonical last char
    expect(isWgKey(`${'A'.repeat(43)}=\nEndpoint = evil:1`)).toBe(false);
  });

  it('accepts IPv4 and CIDR, rejects leading zeros and out-of-range parts', () => {
    expect(isIPv4('10.44.0.1')).toBe(true);
    expect(isIPv4('10.44.0.256')).toBe(false);
    expect(isIPv4('010.1.1.1')).toBe(false);
    expect(isIPv4Cidr('10.44.0.0/16')).toBe(true);
    expect(isIPv4Cidr('10.44.0.0/33')).toBe(false);
    expect(isIPv4Cidr('10.44.0.0')).toBe(false);
  });

  it('accepts lower-case DNS names only', () => {
    expect(isHostname('app.example.com')).toBe(true);
    expect(isHostname('App.example.com')).toBe(false);
    expect(isHostname('*.example.com')).toBe(false);
    expect(isHostname('a..b')).toBe(false);
    expect(isHostname('x;y')).toBe(false);
    expect(() => assertHost('evil host')).toThrow('invalid host: "evil host"');
  });

  it('accepts URL path prefixes without traversal or config syntax', () => {
    expect(isPathPrefix('/')).toBe(true);
    expect(isPathPrefix('/api/v1')).toBe(true);
    expect(isPathPrefix('/a/../b')).toBe(false);
    expect(isPathPrefix('/a;b')).toBe(false);
    expect(isPathPrefix('/a b')).toBe(false);
    expect(isPathPrefix('/$x')).toBe(false);
    expect(isPathPrefix('api')).toBe(false);
  });
});
