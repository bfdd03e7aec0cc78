import type * as Argon2 from '@node-rs/argon2';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HASHING_BUSY_MESSAGE, TOO_MANY_ATTEMPTS_MESSAGE } from '../modules/auth/service.js';
import { LOGIN_MAX_FAILURES_PER_CLIENT, LOGIN_MAX_FAILURES_PER_USERNAME } from '../modules/auth/rate-limit.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../test/build-test-app.js';

// Sign-in that holds under attack. Every password check is counted at argon2 itself, so "reached
// the hash check" is measured, not inferred from status codes.

const argon = vi.hoisted(() => ({ calls: 0, inFlight: 0, maxInFlight: 0, hold: null as Promise<void> | null }));
vi.mock('@node-rs/argon2', async (importOriginal) => {
  const actual = await importOriginal<typeof Argon2>();
  return {
    ...actual,
    verify: async (...args: Parameters<typeof actual.verify>) => {
      argon.calls++;
      argon.inFlight++;
      argon.maxInFlight = Math.max(argon.maxInFlight, argon.inFlight);
      try {
        if (argon.hold) await argon.hold;
        return await actual.verify(...args);
      } finally {
        argon.inFlight--;
      }
    },
  };
});

// Generous, so that code without the limits fails on an assertion (hundreds of real hashes) rather than a timeout.
const SLOW_MS = 60_000;

let t: TestApp;
afterEach(async () => {
  await t.cleanup();
  Object.assign(argon, { calls: 0, inFlight: 0, maxInFlight: 0, hold: null });
});

/** A sign-in through the gateway's own nginx (loopback, a trusted proxy) from `client`. */
const loginFrom = (client: string, password = 'wrong-password', username: string = TEST_ADMIN.username) =>
  t.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username, password },
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': client },
  });

describe('sign-in under attack', () => {
  it(
    'lets at most 5 of 200 concurrent wrong sign-ins from one address reach the password check',
    async () => {
      t = await buildTestApp();
      const responses = await Promise.all(Array.from({ length: 200 }, () => loginFrom('203.0.113.7')));
      expect(argon.calls).toBeLessThanOrEqual(LOGIN_MAX_FAILURES_PER_CLIENT);
      const statuses = responses.map((response) => response.statusCode);
      expect(statuses.filter((status) => status === 401)).toHaveLength(argon.calls);
      expect(statuses.filter((status) => status === 429)).toHaveLength(200 - argon.calls);
      expect(responses.find((response) => response.statusCode === 429)?.json()).toEqual({
        message: TOO_MANY_ATTEMPTS_MESSAGE,
        code: 'rate_limited',
        messageCode: 'too_many_attempts',
      });
    },
    SLOW_MS,
  );

  it(
    'does not let a flood from other addresses keep the admin out',
    async () => {
      t = await buildTestApp();
      // Far past the per-username limit, from 20 addresses, each until it is refused.
      for (let client = 1; client <= 20; client++) {
        for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++) await loginFrom(`198.51.100.${client}`);
      }
      // The admin, from an address that has not failed, gets in with the right password.
      expect((await loginFrom('192.0.2.10', TEST_ADMIN.password)).statusCode).toBe(200);
      // ... although the name was well past its own limit.
      expect(argon.calls).toBeGreaterThan(LOGIN_MAX_FAILURES_PER_USERNAME);
      // A new attacker address gets one guess at the name under attack, then waits.
      expect((await loginFrom('192.0.2.66')).statusCode).toBe(401);
      const second = await loginFrom('192.0.2.66');
      expect(second.statusCode).toBe(429);
      expect(Number(second.headers['retry-after'])).toBeGreaterThan(0);
    },
    SLOW_MS,
  );

  it('groups IPv6 clients by /64', async () => {
    t = await buildTestApp();
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++)
      expect((await loginFrom(`2001:db8:1:2::${i + 1}`)).statusCode).toBe(401);
    expect((await loginFrom('2001:db8:1:2:ffff:1:2:3', TEST_ADMIN.password)).statusCode).toBe(429);
    expect((await loginFrom('2001:db8:1:3::1', TEST_ADMIN.password)).statusCode).toBe(200);
  });

  it(
    'caps concurrent password hashing; beyond the queue it answers 429 at once',
    async () => {
      t = await buildTestApp({ env: { POSTERN_PASSWORD_HASH_CONCURRENCY: '2', POSTERN_PASSWORD_HASH_QUEUE: '3' } });
      let release!: () => void;
      argon.hold = new Promise<void>((resolve) => (release = resolve));
      // 20 different addresses: no per-client limit applies, only the global cap.
      const pending = Array.from({ length: 20 }, (_, i) => loginFrom(`192.0.2.${i + 1}`));
      const settled: number[] = [];
      pending.forEach((response) => void response.then((r) => settled.push(r.statusCode)));
      await vi.waitFor(
        () => expect({ settled: settled.length, hashing: argon.inFlight }).toEqual({ settled: 15, hashing: 2 }),
        { timeout: 5000, interval: 10 },
      );
      expect(settled.every((status) => status === 429)).toBe(true);
      release();
      const responses = await Promise.all(pending);
      expect(argon.maxInFlight).toBe(2);
      expect(argon.calls).toBe(5);
      const busy = responses.filter((response) => response.statusCode === 429);
      expect(busy).toHaveLength(15);
      expect(busy[0]?.json()).toEqual({
        message: HASHING_BUSY_MESSAGE,
        code: 'rate_limited',
        messageCode: 'sign_ins_busy',
      });
      expect(busy[0]?.headers['retry-after']).toBe('1');
      // A refusal for load is not a failed guess: those clients are not held back afterwards.
      const refusedClient = `192.0.2.${responses.findIndex((response) => response.statusCode === 429) + 1}`;
      expect((await loginFrom(refusedClient, TEST_ADMIN.password)).statusCode).toBe(200);
    },
    SLOW_MS,
  );

  it('refuses a large sign-in body with 413 before reading, parsing or hashing it', async () => {
    t = await buildTestApp();
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (const size of [1_000_000, 5_000]) {
        const response = await t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ username: TEST_ADMIN.username, password: 'x'.repeat(size) }),
        });
        expect(response.statusCode).toBe(413);
      }
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
    expect(argon.calls).toBe(0);
    // Nor do they count as failures.
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++) {
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: 'y'.repeat(10_000),
        headers: { 'content-type': 'application/json' },
      });
    }
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: TEST_ADMIN })).statusCode).toBe(200);
  });
});
