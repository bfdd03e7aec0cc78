import { describe, expect, it } from 'vitest';
import {
  certificateNameCovers,
  isBackendHost,
  isDomainName,
  isHostName,
  isWildcardDomainName,
  wildcardOf,
} from './host-names.js';

describe('host names', () => {
  // The cases on which the four copies of this rule disagreed (numeric top-level labels above all), with the answer
  // each function gives now: [value, host name, domain, backend host].
  const cases: [string, boolean, boolean, boolean][] = [
    ['example.com', true, true, true],
    ['a.b.example.co.uk', true, true, true],
    ['xn--bcher-kva.example', true, true, true],
    ['my-app.test', true, true, true],
    ['1password.com', true, true, true],
    ['db', true, false, true],
    ['localhost', true, false, true],
    ['db.lan2', true, false, true],
    ['app.x', true, false, true],
    ['192.168.1.10', false, false, true],
    ['a.1', false, false, false],
    ['app.123', false, false, false],
    ['1.2.3', false, false, false],
    ['999.1.1.1', false, false, false],
    ['123', false, false, false],
    ['-a.com', false, false, false],
    ['a-.com', false, false, false],
    ['a..com', false, false, false],
    ['.example.com', false, false, false],
    ['example.com.', false, false, false],
    ['*.example.com', false, false, false],
    ['App.example.com', false, false, false],
    ['exa mple.com', false, false, false],
    ['host;rm', false, false, false],
    ['a_b.example.com', false, false, false],
    ['', false, false, false],
    [`${'a'.repeat(63)}.com`, true, true, true],
    [`${'a'.repeat(64)}.com`, false, false, false],
    [`${'a.'.repeat(125)}com`, true, true, true],
    [`${'a.'.repeat(126)}com`, false, false, false],
  ];

  it.each(cases)('%s: host name %s, domain %s, backend host %s', (value, hostName, domain, backendHost) => {
    expect(isHostName(value)).toBe(hostName);
    expect(isDomainName(value)).toBe(domain);
    expect(isBackendHost(value)).toBe(backendHost);
  });
});

describe('wildcard domains and certificate names', () => {
  it('takes * as the whole left-most label of a domain only', () => {
    for (const good of ['*.example.com', '*.a.b.example.com']) expect(isWildcardDomainName(good), good).toBe(true);
    for (const bad of ['*.com', '*', '*.', 'a.*.example.com', '**.example.com', '*example.com', '*.*.example.com'])
      expect(isWildcardDomainName(bad), bad).toBe(false);
  });

  it('covers exactly one label below the wildcard, as a certificate does (RFC 6125)', () => {
    expect(wildcardOf('app.example.com')).toBe('*.example.com');
    expect(wildcardOf('example.com')).toBeNull();
    expect(wildcardOf('*.example.com')).toBeNull();
    expect(certificateNameCovers('*.example.com', 'App.Example.com')).toBe(true);
    expect(certificateNameCovers('*.example.com', 'example.com')).toBe(false);
    expect(certificateNameCovers('*.example.com', 'a.b.example.com')).toBe(false);
    expect(certificateNameCovers('*.example.com', 'app.example.com.evil')).toBe(false);
    expect(certificateNameCovers('*.example.com', '*.example.com')).toBe(true);
    expect(certificateNameCovers('app.example.com', 'app.example.com')).toBe(true);
  });
});
