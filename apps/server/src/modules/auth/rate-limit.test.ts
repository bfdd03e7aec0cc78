import { describe, expect, it } from 'vitest';
import {
  clientKeyOf,
  createLoginLimiter,
  LOGIN_MAX_FAILURES_PER_CLIENT,
  LOGIN_MAX_FAILURES_PER_USERNAME,
  LOGIN_WINDOW_MS,
  type LoginLimiter,
} from './rate-limit.js';

/** Claims an attempt that then fails (the claim stays counted); returns false when the limiter refused. */
const fail = (limiter: LoginLimiter, ip: string, username: string): boolean =>
  limiter.reserve(ip, username).attempt !== undefined;
const retryAfter = (limiter: LoginLimiter, ip: string, username: string): number => {
  const reservation = limiter.reserve(ip, username);
  reservation.attempt?.release();
  return reservation.retryAfterSeconds ?? 0;
};

describe('login limiter', () => {
  it('counts an attempt from the moment it is claimed, so parallel claims see each other', () => {
    const limiter = createLoginLimiter(() => new Date(0));
    const claims = Array.from({ length: 50 }, () => limiter.reserve('192.0.2.1', 'admin'));
    expect(claims.filter((claim) => claim.attempt).length).toBe(LOGIN_MAX_FAILURES_PER_CLIENT);
    expect(claims.at(-1)?.retryAfterSeconds).toBe(LOGIN_WINDOW_MS / 1000);
  });

  it('withdraws a released or successful claim, and forgets the failures of a client that signs in', () => {
    const limiter = createLoginLimiter(() => new Date(0));
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT - 1; i++) fail(limiter, '192.0.2.1', 'admin');
    limiter.reserve('192.0.2.1', 'admin').attempt?.release();
    expect(retryAfter(limiter, '192.0.2.1', 'admin')).toBe(0);
    limiter.reserve('192.0.2.1', 'admin').attempt?.succeed();
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT - 1; i++) expect(fail(limiter, '192.0.2.1', 'admin')).toBe(true);
    expect(retryAfter(limiter, '192.0.2.1', 'admin')).toBe(0);
  });

  it('frees a client as soon as its oldest failures leave the window', () => {
    let now = 0;
    const limiter = createLoginLimiter(() => new Date(now));
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++) fail(limiter, '192.0.2.1', `user${i}`);
    expect(retryAfter(limiter, '192.0.2.1', 'x')).toBe(LOGIN_WINDOW_MS / 1000);
    now = LOGIN_WINDOW_MS + 1;
    expect(retryAfter(limiter, '192.0.2.1', 'x')).toBe(0);
  });

  it('under attack, a username refuses clients that failed recently, never a client without failures', () => {
    let now = 0;
    const limiter = createLoginLimiter(() => new Date(now));
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_USERNAME; i++) {
      expect(fail(limiter, `10.0.0.${i}`, i % 2 ? 'ADMIN' : 'admin')).toBe(true);
      now += 1000;
    }
    // Every attacker that already failed waits (case-insensitively) until the name's oldest failure ages out.
    expect(retryAfter(limiter, '10.0.0.9', 'Admin')).toBe(
      (LOGIN_WINDOW_MS - LOGIN_MAX_FAILURES_PER_USERNAME * 1000) / 1000,
    );
    // A client with no failure of its own is let through to the password check, as often as it needs.
    for (let i = 0; i < 3; i++) expect(retryAfter(limiter, '198.51.100.1', 'admin')).toBe(0);
    // Its first failure puts it with the others; other usernames are not affected.
    expect(fail(limiter, '198.51.100.1', 'admin')).toBe(true);
    expect(retryAfter(limiter, '198.51.100.1', 'admin')).toBeGreaterThan(0);
    expect(retryAfter(limiter, '10.0.0.9', 'someone-else')).toBe(0);
  });

  it('keeps a name under attack while thousands of addresses guess it once each', () => {
    let now = 0;
    const limiter = createLoginLimiter(() => new Date(now));
    for (let i = 0; i < 5000; i++) {
      fail(limiter, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 'admin');
      now += 10;
    }
    expect(retryAfter(limiter, '10.0.0.1', 'admin')).toBeGreaterThan(0);
    expect(retryAfter(limiter, '192.0.2.1', 'admin')).toBe(0);
  });

  it('groups IPv6 clients by /64 and IPv4-mapped addresses with their IPv4 address', () => {
    expect(clientKeyOf('2001:db8:1:2:aaaa::1')).toBe(clientKeyOf('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'));
    expect(clientKeyOf('2001:db8:1:2::1')).not.toBe(clientKeyOf('2001:db8:1:3::1'));
    expect(clientKeyOf('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientKeyOf('192.0.2.7')).not.toBe(clientKeyOf('192.0.2.8'));
  });
});
