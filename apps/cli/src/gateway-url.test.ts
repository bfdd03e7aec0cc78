import { describe, expect, it } from 'vitest';
import { UsageError } from './errors.js';
import { checkGatewayUrl, isLocalOrPrivateHost } from './gateway-url.js';

describe('which gateway hosts plain HTTP may reach', () => {
  it.each([
    'localhost',
    'LOCALHOST.',
    '127.0.0.1',
    '127.3.2.1',
    '[::1]',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.254',
    '192.168.1.10',
    '100.64.0.1',
    '100.127.255.254',
    '169.254.10.20',
    '[fd12:3456::1]',
    '[fc00::1]',
    '[fe80::1]',
    '[::ffff:10.1.2.3]',
  ])('%s is loopback, private or link-local', (host) => {
    expect(isLocalOrPrivateHost(host)).toBe(true);
  });

  it.each([
    'gw.example.com',
    'localhost.example.com',
    'my-gateway',
    '203.0.113.5',
    '8.8.8.8',
    '172.32.0.1',
    '172.15.255.255',
    '100.128.0.1',
    '100.63.255.255',
    '192.169.0.1',
    '[2001:db8::1]',
    '[::ffff:203.0.113.5]',
    '0.0.0.0',
  ])('%s counts as public', (host) => {
    expect(isLocalOrPrivateHost(host)).toBe(false);
  });
});

describe('checkGatewayUrl', () => {
  it('refuses plain HTTP to a public host with a message that names --insecure and the HTTPS way', () => {
    const refuse = () => checkGatewayUrl('http://gw.example.com:3000', { insecure: false });
    expect(refuse).toThrow(UsageError);
    expect(refuse).toThrow(
      /^Refusing plain-HTTP gateway URL http:\/\/gw\.example\.com:3000: .*unencrypted; .*https:\/\/.*--pin.*--insecure/,
    );
  });

  it('allows it with --insecure, and allows HTTPS anywhere and plain HTTP to private addresses', () => {
    expect(checkGatewayUrl('http://gw.example.com:3000', { insecure: true }).host).toBe('gw.example.com:3000');
    expect(checkGatewayUrl('https://gw.example.com', { insecure: false }).protocol).toBe('https:');
    expect(checkGatewayUrl('http://10.0.0.5:3000', { insecure: false }).hostname).toBe('10.0.0.5');
  });
});
