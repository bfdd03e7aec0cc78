import { describe, expect, it } from 'vitest';
import { createLoginLimiter, LOGIN_MAX_FAILURES_PER_IP, LOGIN_MAX_FAILURES_PER_USERNAME, LOGIN_WINDOW_MS } from './rate-limit.js';

describe('login limiter', () => {
  it('blocks a username guessed from many IPs at its own (higher) limit, case-insensitively', () => {
    let now = 0;
    const limiter = createLoginLimiter(() => new Date(now));
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_USERNAME; i++) {
      expect(limiter.retryAfterSeconds(`10.0.0.${i}`, 'admin')).toBe(0);
      limiter.recordFailure(`10.0.0.${i}`, i % 2 ? 'ADMIN' : 'admin');
      now += 1000;
    }
    expect(limiter.retryAfterSeconds('10.0.1.1', 'admin')).toBe((LOGIN_WINDOW_MS - LOGIN_MAX_FAILURES_PER_USERNAME * 1000) / 1000);
    expect(limiter.retryAfterSeconds('10.0.1.1', 'someone-else')).toBe(0);
  });

  it('frees a client as soon as its oldest failures leave the window', () => {
    let now = 0;
    const limiter = createLoginLimiter(() => new Date(now));
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_IP; i++) limiter.recordFailure('192.0.2.1', `user${i}`);
    expect(limiter.retryAfterSeconds('192.0.2.1', 'x')).toBe(LOGIN_WINDOW_MS / 1000);
    now = LOGIN_WINDOW_MS + 1;
    expect(limiter.retryAfterSeconds('192.0.2.1', 'x')).toBe(0);
  });

  it('forgets failures of a client that signs in', () => {
    const limiter = createLoginLimiter(() => new Date(0));
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_IP - 1; i++) limiter.recordFailure('192.0.2.1', 'admin');
    limiter.recordSuccess('192.0.2.1', 'admin');
    limiter.recordFailure('192.0.2.1', 'admin');
    expect(limiter.retryAfterSeconds('192.0.2.1', 'admin')).toBe(0);
  });
});
