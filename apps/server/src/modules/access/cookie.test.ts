import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cookieGroups, headerSafe, signAccessCookie, verifyAccessCookie } from './cookie.js';

const key = randomBytes(32);
const payload = { s: 'sid', p: 3, e: 1, x: 2_000_000_000, u: 'ann', g: ['ops'] };

describe('the visitor cookie', () => {
  it('verifies on the host it was made for, and nowhere else', () => {
    const value = signAccessCookie(key, '1', 'a.example.test', payload);
    expect(verifyAccessCookie(key, '1', 'a.example.test', value)).toEqual(payload);
    expect(verifyAccessCookie(key, '1', 'b.example.test', value)).toBeNull();
    expect(verifyAccessCookie(randomBytes(32), '1', 'a.example.test', value)).toBeNull();
    expect(verifyAccessCookie(key, '2', 'a.example.test', value)).toBeNull();
  });

  it('refuses any changed byte of the payload', () => {
    const value = signAccessCookie(key, '1', 'a.example.test', payload);
    const [v, kid, body = '', mac] = value.split('.');
    const forged = Buffer.from(JSON.stringify({ ...payload, p: 4 })).toString('base64url');
    expect(verifyAccessCookie(key, '1', 'a.example.test', [v, kid, forged, mac].join('.'))).toBeNull();
    expect(verifyAccessCookie(key, '1', 'a.example.test', [v, kid, `${body}A`, mac].join('.'))).toBeNull();
  });
});

describe('identity for headers', () => {
  it('is printable ASCII, whatever the provider sent', () => {
    expect(headerSafe('Ann\r\nX-Injected: 1')).toBe('Ann%0D%0AX-Injected: 1');
    expect(headerSafe('Zoë 100%')).toBe('Zo%C3%AB 100%25');
    expect(headerSafe('\ud800')).toBe('%EF%BF%BD');
    expect(cookieGroups(['a,b', 'ops', ''])).toEqual(['a%2Cb', 'ops']);
    expect(cookieGroups(Array.from({ length: 80 }, (_, i) => `g${i}`))).toHaveLength(50);
  });
});
