import { describe, expect, test } from 'vitest';
import { httpPublicAccess, streamPublicAccess } from './present.js';

describe('publicAccess', () => {
  const standard = { publicHost: 'gw.example.com', httpsPort: 443, noDomainHttpsPort: 8443 };

  test('HTTPS on the domain without the default port; without a domain on the public host and its own port', () => {
    expect(httpPublicAccess(standard, 'app.example.com', '/api')).toBe('https://app.example.com/api');
    expect(httpPublicAccess(standard, '', '/shop')).toBe('https://gw.example.com:8443/shop');
  });

  test('names a non-default HTTPS port', () => {
    expect(httpPublicAccess({ ...standard, httpsPort: 9443 }, 'app.example.com', '/')).toBe(
      'https://app.example.com:9443/',
    );
    expect(httpPublicAccess({ ...standard, httpsPort: 8080, noDomainHttpsPort: 443 }, '', '/')).toBe(
      'https://gw.example.com/',
    );
  });

  test('TCP and UDP carry their scheme and public port', () => {
    expect(streamPublicAccess(standard, 'tcp', null, 30000)).toBe('tcp://gw.example.com:30000');
    expect(streamPublicAccess(standard, 'udp', 'dns.example.com', 30001)).toBe('udp://dns.example.com:30001');
  });
});
