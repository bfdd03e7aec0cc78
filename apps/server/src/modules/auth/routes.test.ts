import type * as Argon2 from '@node-rs/argon2';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../../test/build-test-app.js';
import { LOGIN_MAX_FAILURES_PER_CLIENT, LOGIN_WINDOW_MS } from './rate-limit.js';

// Counts argon2 verifications, to show a blocked client costs none.
const argon = vi.hoisted(() => ({ verifyCalls: 0 }));
vi.mock('@node-rs/argon2', async (importOriginal) => {
  const actual = await importOriginal<typeof Argon2>();
  return {
    ...actual,
    verify: (...args: Parameters<typeof actual.verify>) => {
      argon.verifyCalls++;
      return actual.verify(...args);
    },
  };
});

let t: TestApp;
let clock: Date;

beforeEach(async () => {
  clock = new Date('2026-06-01T12:00:00.000Z');
  t = await buildTestApp({ now: () => clock });
});
afterEach(() => t.cleanup());

const login = (username: string, password: string, ip = '127.0.0.1') =>
  t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password }, remoteAddress: ip });

describe('POST /api/auth/login', () => {
  it('answers a token and its lifetime in seconds', async () => {
    const response = await login(TEST_ADMIN.username, TEST_ADMIN.password);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['expires_in', 'token']);
    expect(body.expires_in).toBe(t.config.sessionTtlSeconds);
    const nodes = await t.app.inject({ url: '/api/nodes', headers: { authorization: `Bearer ${body.token}` } });
    expect(nodes.statusCode).toBe(200);
  });

  it('refuses a wrong password and an unknown user with the same 401 message', async () => {
    const wrong = await login(TEST_ADMIN.username, 'not-the-password');
    const unknown = await login('mallory', 'whatever-password');
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({
      message: 'Invalid username or password',
      code: 'unauthorized',
      messageCode: 'invalid_credentials',
    });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toEqual(wrong.json());
  });

  it('answers 422 with the spec messages for missing fields', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: '' } });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'Validation failed',
      code: 'validation',
      messageCode: 'validation_failed',
      errors: {
        body: [
          { field: 'username', message: 'This field is not allowed to be empty', code: 'empty' },
          { field: 'password', message: 'This field is required', code: 'required' },
        ],
      },
    });
  });

  it('blocks an IP after repeated failures with 429 and Retry-After, even for the right password, until the window passes', async () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++)
      expect((await login(TEST_ADMIN.username, 'wrong-password')).statusCode).toBe(401);
    const blocked = await login(TEST_ADMIN.username, TEST_ADMIN.password);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toEqual({
      message: 'Too many failed sign-in attempts, try again later',
      code: 'rate_limited',
      messageCode: 'too_many_attempts',
    });
    expect(Number(blocked.headers['retry-after'])).toBe(LOGIN_WINDOW_MS / 1000);
    // Another client is not blocked by this one's failures.
    expect((await login(TEST_ADMIN.username, TEST_ADMIN.password, '10.9.9.9')).statusCode).toBe(200);
    clock = new Date(clock.getTime() + LOGIN_WINDOW_MS + 1000);
    expect((await login(TEST_ADMIN.username, TEST_ADMIN.password)).statusCode).toBe(200);
  });

  it('answers 429 before any password hashing', async () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++) await login('nobody', 'wrong-password');
    const before = argon.verifyCalls;
    for (let i = 0; i < 20; i++) expect((await login('nobody', 'wrong-password')).statusCode).toBe(429);
    expect((await login(TEST_ADMIN.username, TEST_ADMIN.password)).statusCode).toBe(429);
    expect(argon.verifyCalls).toBe(before);
    // Unknown users were verified against the dummy hash.
    expect(before).toBeGreaterThanOrEqual(LOGIN_MAX_FAILURES_PER_CLIENT);
  });
});

describe('sign-in limit behind a reverse proxy', () => {
  // The gateway's own nginx connects from loopback and appends the peer it saw to X-Forwarded-For.
  const loginVia = (remoteAddress: string, forwardedFor: string, password = 'wrong-password') =>
    t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: TEST_ADMIN.username, password },
      remoteAddress,
      headers: { 'x-forwarded-for': forwardedFor },
    });
  const failUntilBlocked = async (remoteAddress: string, forwardedFor: string) => {
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++)
      expect((await loginVia(remoteAddress, forwardedFor)).statusCode).toBe(401);
  };

  it('counts each forwarded client on its own, so one client cannot lock out another', async () => {
    await failUntilBlocked('127.0.0.1', '203.0.113.7');
    expect((await loginVia('127.0.0.1', '203.0.113.7', TEST_ADMIN.password)).statusCode).toBe(429);
    expect((await loginVia('127.0.0.1', '198.51.100.20', TEST_ADMIN.password)).statusCode).toBe(200);
    expect((await loginVia('::1', '2001:db8::5', TEST_ADMIN.password)).statusCode).toBe(200);
  });

  it('keeps a blocked client blocked when it sends its own X-Forwarded-For through the proxy', async () => {
    await failUntilBlocked('127.0.0.1', '203.0.113.7');
    // nginx appends the real peer, so forged entries sit to its left and are never believed.
    expect((await loginVia('127.0.0.1', '198.51.100.20, 203.0.113.7', TEST_ADMIN.password)).statusCode).toBe(429);
  });

  it('ignores X-Forwarded-For from a client connecting directly', async () => {
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++)
      expect((await loginVia('192.0.2.50', `198.51.100.${i}`)).statusCode).toBe(401);
    expect((await loginVia('192.0.2.50', '198.51.100.99', TEST_ADMIN.password)).statusCode).toBe(429);
    expect((await loginVia('192.0.2.51', '192.0.2.50', TEST_ADMIN.password)).statusCode).toBe(200);
  });

  it('trusts the configured ranges only, and nobody when the setting is empty', async () => {
    await t.cleanup();
    t = await buildTestApp({ now: () => clock, env: { POSTERN_TRUSTED_PROXIES: '10.20.0.0/16' } });
    await failUntilBlocked('10.20.3.4', '203.0.113.7');
    // The counter follows the client, whichever trusted proxy it comes through.
    expect((await loginVia('10.20.9.9', '203.0.113.7', TEST_ADMIN.password)).statusCode).toBe(429);
    expect((await loginVia('10.20.3.4', '198.51.100.20', TEST_ADMIN.password)).statusCode).toBe(200);
    // Loopback is no longer trusted: its header is ignored and every request counts against 127.0.0.1.
    await failUntilBlocked('127.0.0.1', '198.51.100.30');
    expect((await loginVia('127.0.0.1', '198.51.100.31', TEST_ADMIN.password)).statusCode).toBe(429);

    await t.cleanup();
    t = await buildTestApp({ now: () => clock, env: { POSTERN_TRUSTED_PROXIES: '' } });
    await failUntilBlocked('127.0.0.1', '203.0.113.7');
    expect((await loginVia('127.0.0.1', '198.51.100.20', TEST_ADMIN.password)).statusCode).toBe(429);
  });
});

describe('sessions', () => {
  it('refuses /api without a token, with a malformed token and with a forged one', async () => {
    for (const authorization of [
      undefined,
      'Bearer nonsense',
      'Basic abc',
      `Bearer ${(await t.login()).slice(0, -2)}xx`,
    ]) {
      const response = await t.app.inject({ url: '/api/nodes', headers: authorization ? { authorization } : {} });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toHaveProperty('message');
    }
  });

  it('ends the session at once on logout', async () => {
    const token = await t.login();
    const headers = { authorization: `Bearer ${token}` };
    const logout = await t.app.inject({ method: 'POST', url: '/api/auth/logout', headers });
    expect(logout.statusCode).toBe(204);
    expect((await t.app.inject({ url: '/api/nodes', headers })).statusCode).toBe(401);
  });

  it('expires sessions after their lifetime', async () => {
    const headers = { authorization: `Bearer ${await t.login()}` };
    clock = new Date(clock.getTime() + t.config.sessionTtlSeconds * 1000 + 1000);
    expect((await t.app.inject({ url: '/api/nodes', headers })).statusCode).toBe(401);
  });

  it('keeps health, openapi and login public', async () => {
    expect((await t.app.inject({ url: '/api/health' })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/openapi.json' })).statusCode).toBe(200);
  });
});

describe('PATCH /api/auth/password', () => {
  const change = (token: string, payload: object) =>
    t.app.inject({
      method: 'PATCH',
      url: '/api/auth/password',
      headers: { authorization: `Bearer ${token}` },
      payload,
    });

  it('changes the password and ends every other session', async () => {
    const mine = await t.login();
    const other = await t.login();
    const response = await change(mine, { currentPassword: TEST_ADMIN.password, newPassword: 'a-brand-new-password' });
    expect(response.statusCode).toBe(204);
    expect((await t.app.inject({ url: '/api/nodes', headers: { authorization: `Bearer ${other}` } })).statusCode).toBe(
      401,
    );
    expect((await t.app.inject({ url: '/api/nodes', headers: { authorization: `Bearer ${mine}` } })).statusCode).toBe(
      200,
    );
    expect((await login(TEST_ADMIN.username, TEST_ADMIN.password)).statusCode).toBe(401);
    expect((await login(TEST_ADMIN.username, 'a-brand-new-password')).statusCode).toBe(200);
  });

  it('answers 422 for a wrong current password and a too short new one', async () => {
    const token = await t.login();
    const wrong = await change(token, { currentPassword: 'not-it-at-all', newPassword: 'a-brand-new-password' });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().errors.body).toEqual([
      { field: 'currentPassword', message: 'The current password is not correct', code: 'current_password_wrong' },
    ]);
    const short = await change(token, { currentPassword: TEST_ADMIN.password, newPassword: 'short' });
    expect(short.statusCode).toBe(422);
    expect(short.json().errors.body).toEqual([
      {
        field: 'newPassword',
        message: 'This field must be at least 12 characters long',
        code: 'too_short',
        params: { min: 12 },
      },
    ]);
  });

  it('counts wrong current passwords against the sign-in limit', async () => {
    const token = await t.login();
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++) {
      expect(
        (await change(token, { currentPassword: `guess-number-${i}`, newPassword: 'a-brand-new-password' })).statusCode,
      ).toBe(422);
    }
    const blocked = await change(token, { currentPassword: TEST_ADMIN.password, newPassword: 'a-brand-new-password' });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers['retry-after']).toBeDefined();
  });

  it('needs a session', async () => {
    const response = await t.app.inject({ method: 'PATCH', url: '/api/auth/password', payload: {} });
    expect(response.statusCode).toBe(401);
  });
});

describe('session cookie and GET /api/auth/session', () => {
  const loginWith = (headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') =>
    t.app.inject({ method: 'POST', url: '/api/auth/login', payload: TEST_ADMIN, headers, remoteAddress });
  const session = (cookie?: string, headers: Record<string, string> = {}) =>
    t.app.inject({ url: '/api/auth/session', headers: { ...(cookie ? { cookie } : {}), ...headers } });
  const setCookieOf = (response: { headers: Record<string, string | string[] | number | undefined> }): string =>
    String(response.headers['set-cookie'] ?? '');

  it('is set by the server on sign-in: HttpOnly, SameSite=Strict, Path=/api, lifetime from expires_in', async () => {
    const response = await loginWith();
    const { token, expires_in } = response.json();
    const cookie = setCookieOf(response);
    expect(cookie.split('; ').sort()).toEqual(
      [`Max-Age=${expires_in}`, 'HttpOnly', 'Path=/api', 'SameSite=Strict', `token=${token}`].sort(),
    );
  });

  it('is __Host-token over HTTPS (through a trusted proxy) or in production: Secure, Path=/, no Domain', async () => {
    const expected = (token: string, expiresIn: number) =>
      [`__Host-token=${token}`, `Max-Age=${expiresIn}`, 'Path=/', 'HttpOnly', 'Secure', 'SameSite=Strict'].sort();
    const overHttps = await loginWith({ 'x-forwarded-proto': 'https' });
    expect(setCookieOf(overHttps).split('; ').sort()).toEqual(
      expected(overHttps.json().token, overHttps.json().expires_in),
    );
    // The header means nothing from a peer that is not a trusted proxy: plain HTTP, the spec's cookie.
    expect(setCookieOf(await loginWith({ 'x-forwarded-proto': 'https' }, '192.0.2.1'))).toMatch(/^token=.*Path=\/api/);
    await t.cleanup();
    t = await buildTestApp({ now: () => clock, env: { NODE_ENV: 'production' } });
    const production = await loginWith();
    expect(setCookieOf(production).split('; ').sort()).toEqual(
      expected(production.json().token, production.json().expires_in),
    );
    const https = { 'x-forwarded-proto': 'https' };
    const logout = await t.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: { ...https, authorization: `Bearer ${production.json().token}` },
    });
    expect(setCookieOf(logout)).toMatch(/^__Host-token=; Max-Age=0; Path=\/; .*HttpOnly; Secure; SameSite=Strict$/);
  });

  it('over HTTPS, tries the prefixed cookie before any planted plain one, and moves an earlier version’s cookie', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const { token } = (await loginWith(https)).json();
    // A sibling domain's page planted plain `token` cookies with longer paths (sent first): they come after it.
    const planted = Array.from({ length: 6 }, (_, i) => `token=planted-${i}`).join('; ');
    const found = await session(`${planted}; __Host-token=${token}`, https);
    expect(found.statusCode).toBe(200);
    expect(found.json().token).toBe(token);
    expect(found.headers['set-cookie']).toBeUndefined();
    // A console signed in before the upgrade holds `token` (Path=/api): still signed in, now with `__Host-token`.
    const upgraded = await session(`token=${token}`, https);
    expect(upgraded.statusCode).toBe(200);
    const cookies = ([] as string[]).concat(upgraded.headers['set-cookie'] ?? []);
    expect(cookies).toHaveLength(2);
    expect(cookies[0]).toMatch(
      new RegExp(`^__Host-token=${token}; Max-Age=\\d+; Path=/; HttpOnly; Secure; SameSite=Strict$`),
    );
    expect(cookies[1]).toMatch(/^token=; Max-Age=0; Path=\/api; .*Secure/);
    // Dead cookies of both names are dropped with the refusal.
    const dead = await session(`__Host-token=nonsense; token=nonsense`, https);
    expect(dead.statusCode).toBe(401);
    expect(([] as string[]).concat(dead.headers['set-cookie'] ?? []).map((c) => c.split('=')[0])).toEqual([
      '__Host-token',
      'token',
    ]);
  });

  it('gives the console its token back with the time left, never cacheable', async () => {
    const { token } = (await loginWith()).json();
    clock = new Date(clock.getTime() + 60_000);
    const response = await session(`theme=dark; token=${token}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ token, expires_in: t.config.sessionTtlSeconds - 60 });
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('answers 401 without the cookie (a bearer header does not count), and drops a dead cookie', async () => {
    const { token } = (await loginWith()).json();
    const bearerOnly = await t.app.inject({ url: '/api/auth/session', headers: { authorization: `Bearer ${token}` } });
    expect(bearerOnly.statusCode).toBe(401);
    expect(bearerOnly.json()).toEqual({
      message: 'Authentication required',
      code: 'unauthorized',
      messageCode: 'authentication_required',
    });
    for (const dead of [`token=${token.slice(0, -2)}xx`, 'token=nonsense']) {
      const response = await session(dead);
      expect(response.statusCode).toBe(401);
      expect(setCookieOf(response)).toMatch(
        /^token=; Max-Age=0; Path=\/api; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict$/,
      );
    }
    clock = new Date(clock.getTime() + t.config.sessionTtlSeconds * 1000);
    expect((await session(`token=${token}`)).statusCode).toBe(401);
  });

  it('finds the real session behind a look-alike cookie planted with a longer path', async () => {
    const { token } = (await loginWith()).json();
    // Browsers send the cookie with the longer path first.
    const response = await session(`token=planted-by-a-neighbour; token=${token}`);
    expect(response.statusCode).toBe(200);
    expect(response.json().token).toBe(token);
  });

  it('refuses a request from another site or another origin of this site', async () => {
    const { token } = (await loginWith()).json();
    for (const site of ['cross-site', 'same-site'])
      expect((await session(`token=${token}`, { 'sec-fetch-site': site })).statusCode).toBe(403);
    for (const site of ['same-origin', 'none'])
      expect((await session(`token=${token}`, { 'sec-fetch-site': site })).statusCode).toBe(200);
  });

  it('is cleared on logout, and the session ends', async () => {
    const { token } = (await loginWith()).json();
    const logout = await t.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(logout.statusCode).toBe(204);
    expect(setCookieOf(logout)).toMatch(/^token=; Max-Age=0; Path=\/api; .*HttpOnly; SameSite=Strict$/);
    expect((await session(`token=${token}`)).statusCode).toBe(401);
  });
});
