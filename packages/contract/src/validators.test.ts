import { describe, expect, it } from 'vitest';
import {
  findReservedPath,
  normalizePathLocation,
  pathLocationsDifferInCase,
  isIpOrCidr,
  isIPv4,
  isIPv6,
  isPathLocation,
  isPrintableAscii,
} from './validators.js';

describe('allow-list validators', () => {
  it('accepts only dotted-quad IPv4', () => {
    expect(isIPv4('10.0.0.1')).toBe(true);
    for (const bad of ['10.0.0', '10.0.0.01x', '256.0.0.1', '1.2.3.4 ', ' 1.2.3.4', '1.2.3.4;'])
      expect(isIPv4(bad)).toBe(false);
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

  it('accepts URL path prefixes without traversal or config syntax', () => {
    expect(isPathLocation('/')).toBe(true);
    expect(isPathLocation('/api/v1_x~y.z-w')).toBe(true);
    expect(isPathLocation('/a/%20')).toBe(false);
    expect(isPathLocation('/a@b')).toBe(false);
    expect(isPathLocation('/a/./b')).toBe(false);
    expect(isPathLocation('/a//b')).toBe(false);
    // A part ending in '.' (Windows backends drop trailing dots: /adm. would be /adm to them).
    for (const dotted of ['/adm.', '/a./b', '/...', '/a/..', '/.']) expect(isPathLocation(dotted)).toBe(false);
    expect(isPathLocation('/.well-known/x.y')).toBe(true);
  });

  it('tells which paths of one host differ only in letter case where it matters', () => {
    expect(pathLocationsDifferInCase('/adm', '/ADM')).toBe(true);
    expect(pathLocationsDifferInCase('/Adm/x', '/adm')).toBe(true);
    expect(pathLocationsDifferInCase('/docs/api', '/Docs/')).toBe(true);
    expect(pathLocationsDifferInCase('/adm', '/adm')).toBe(false);
    expect(pathLocationsDifferInCase('/adm', '/adm/X')).toBe(false);
    expect(pathLocationsDifferInCase('/adm', '/ADMIN')).toBe(false);
    expect(pathLocationsDifferInCase('/', '/ADM')).toBe(false);
  });

  it('tells printable ASCII from anything else', () => {
    expect(isPrintableAscii('a.example-1.com')).toBe(true);
    for (const bad of ['\u212A', 'caf\u00e9', 'a b', 'a\tb', '\u0000']) expect(isPrintableAscii(bad)).toBe(false);
  });

  it('finds reserved paths after nginx-like normalisation, on segment boundaries', () => {
    expect(findReservedPath('//api', false)).toBe('/api');
    expect(findReservedPath('/Api/Auth/', false)).toBe('/api');
    expect(findReservedPath('/api', true)).toBeNull();
    expect(findReservedPath('/apis', false)).toBeNull();
    expect(findReservedPath('/', false)).toBeNull();
    expect(findReservedPath('/.well-known/ACME-challenge/x', true)).toBe('/.well-known/acme-challenge');
    expect(findReservedPath('/_postern/x', true)).toBe('/_postern');
  });
});

describe('normalizePathLocation', () => {
  it('drops trailing slashes, as nginx serves /api and /api/ alike; / stays /', () => {
    expect(normalizePathLocation('/api/')).toBe('/api');
    expect(normalizePathLocation('/api//')).toBe('/api');
    expect(normalizePathLocation('/api')).toBe('/api');
    expect(normalizePathLocation('/')).toBe('/');
    expect(normalizePathLocation('//')).toBe('/');
  });
});
