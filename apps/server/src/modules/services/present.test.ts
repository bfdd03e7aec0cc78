import { describe, expect, test } from 'vitest';
import { httpPublicAccess, streamPublicAccess } from './present.js';

describe('publicAccess', () => {
  const standard = { publicHost: 'gw.example.com', httpsPort: 443 };

  test('HTTPS on the domain, or on the public host for the default host, without the default port', () => {
    expect(httpPublicAccess(standard, 'app.example.com', '/api')).toBe('https://app.example.com/api');
    expect(httpPublicAccess(standard, '', '/')).toBe('https://gw.example.com/');
  });

  test('names a non-default HTTPS port', () => {
    expect(httpPublicAccess({ ...standard, httpsPort: 8443 }, 'app.example.com', '/')).toBe('https://app.example.com:8443/');
  });

  test('TCP and UDP carry their scheme and public port', () => {
    expect(streamPublicAccess(standard, 'tcp', null, 30000)).toBe('tcp://gw.example.com:30000');
    expect(streamPublicAccess(standard, 'udp', 'dns.example.com', 30001)).toBe('udp://dns.example.com:30001');
  });
});
