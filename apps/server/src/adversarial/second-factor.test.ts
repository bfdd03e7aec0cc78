import { and, eq } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Totp from '../modules/auth/totp.js';
import { auditEvents } from '../db/schema.js';
import { TOTP_FAILURE_WINDOW_MS, TOTP_MAX_FAILURES_PER_ACCOUNT } from '../modules/auth/second-factor-limit.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../test/build-test-app.js';

// An attacker who holds the admin's password and many addresses guesses TOTP codes (docs/api.md "Two-factor
// sign-in"). The per-client limiter gives each address (IPv6: each /64) one guess per window at a name under attack,
// unbounded in total: 40 addresses evaluated 45 wrong codes, a /48 about 18 % per 10 minutes. Codes are now capped per
// account, in the database; recovery codes stay open to the owner. A challenge dies with the password or second
// factor it was issued under. Failed re-checks of the password (and the second step's refusals) are audited, summed
// per client.

const totp = vi.hoisted(() => ({ evaluated: 0 }));
vi.mock('../modules/auth/totp.js', async (importOriginal) => {
  const actual = await importOriginal<typeof Totp>();
  return {
    ...actual,
    matchTotpStep: (...args: Parameters<typeof actual.matchTotpStep>) => {
      totp.evaluated++;
      return actual.matchTotpStep(...args);
    },
  };
});

let t: TestApp;
let clock: Date;
beforeEach(async () => {
  clock = new Date('2026-11-26T12:00:00.000Z');
  t = await buildTestApp({ now: () => clock });
});
afterEach(async () => {
  await t.cleanup();
});

const advance = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};
const codeAt = (secret: string, at: Date): string =>
  new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({
    timestamp: at.getTime(),
  });
/** A six-digit code that is none of the codes accepted now (one step either side). */
function wrongCode(secret: string, salt: number): string {
  const accepted = new Set([-30_000, 0, 30_000].map((skew) => codeAt(secret, new Date(clock.getTime() + skew))));
  for (let n = salt; ; n++) {
    const code = String(n % 1_000_000).padStart(6, '0');
    if (!accepted.has(code)) return code;
  }
}

const call = (
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  token: string | null,
  payload?: object,
  ip = '127.0.0.1',
) =>
  t.app.inject({
    method,
    url,
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': ip, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(payload ? { payload } : {}),
  });
const passwordStep = (ip: string, password: string = TEST_ADMIN.password) =>
  call('POST', '/api/auth/login', null, { username: TEST_ADMIN.username, password }, ip);
const secondStep = (challenge: string, code: string, ip: string) =>
  call('POST', '/api/auth/login/2fa', null, { challenge, code }, ip);

async function enrol(session: string): Promise<{ secret: string; codes: string[] }> {
  const setup = await call('POST', '/api/auth/2fa/setup', session, { password: TEST_ADMIN.password });
  expect(setup.statusCode).toBe(200);
  const { secret } = setup.json<{ secret: string }>();
  const enabled = await call('POST', '/api/auth/2fa/enable', session, { code: codeAt(secret, clock) });
  expect(enabled.statusCode).toBe(200);
  advance(30_000); // the enrolment code's step is spent
  return { secret, codes: enabled.json<{ recoveryCodes: string[] }>().recoveryCodes };
}

async function challengeFor(ip: string): Promise<string> {
  const answer = await passwordStep(ip);
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json<{ challenge: string }>().challenge;
}

describe('second-factor guessing with the password and many addresses', () => {
  it('evaluates at most the per-account cap of wrong codes; the owner still signs in with a recovery code', async () => {
    const session = await t.login();
    const { secret, codes } = await enrol(session);
    totp.evaluated = 0;
    // 20 addresses, each guessing until it is refused (the limiter's per-client and per-name rules).
    let guesses = 0;
    for (let address = 1; address <= 20; address++) {
      const ip = `198.51.100.${address}`;
      for (let attempt = 0; attempt < 5; attempt++) {
        const step = await passwordStep(ip);
        if (step.statusCode !== 200) break;
        guesses++;
        const answer = await secondStep(step.json<{ challenge: string }>().challenge, wrongCode(secret, guesses), ip);
        if (answer.statusCode !== 401) {
          expect(answer.statusCode).toBe(429);
          break;
        }
      }
    }
    expect(totp.evaluated).toBeLessThanOrEqual(TOTP_MAX_FAILURES_PER_ACCOUNT);
    expect(guesses).toBeGreaterThan(TOTP_MAX_FAILURES_PER_ACCOUNT);

    // The owner, from an address of their own: a right code from the app is refused for now, and says what to do...
    const owner = '192.0.2.10';
    const refused = await secondStep(await challengeFor(owner), codeAt(secret, clock), owner);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ message: expect.stringMatching(/recovery code/), code: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(TOTP_FAILURE_WINDOW_MS / 1000);
    expect(totp.evaluated).toBeLessThanOrEqual(TOTP_MAX_FAILURES_PER_ACCOUNT);
    // ...a recovery code works at once...
    const recovered = await secondStep(await challengeFor(owner), codes[0] ?? '', owner);
    expect(recovered.statusCode).toBe(200);
    // ...and once the window has passed, so does the app.
    advance(TOTP_FAILURE_WINDOW_MS);
    const later = await secondStep(await challengeFor(owner), codeAt(secret, clock), owner);
    expect(later.statusCode).toBe(200);
  }, 60_000);

  it('counts wrong codes on turning two-factor sign-in off against the same cap', async () => {
    const session = await t.login();
    const { secret, codes } = await enrol(session);
    totp.evaluated = 0;
    const statuses: number[] = [];
    // One stolen session guessing from many addresses (the per-client limiter counts each address apart).
    for (let i = 0; i < 3 * TOTP_MAX_FAILURES_PER_ACCOUNT; i++) {
      const answer = await call(
        'POST',
        '/api/auth/2fa/disable',
        session,
        { password: TEST_ADMIN.password, code: wrongCode(secret, i) },
        `203.0.113.${i + 1}`,
      );
      statuses.push(answer.statusCode);
    }
    expect(totp.evaluated).toBeLessThanOrEqual(TOTP_MAX_FAILURES_PER_ACCOUNT);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
    // A recovery code still turns it off.
    const off = await call('POST', '/api/auth/2fa/disable', session, { password: TEST_ADMIN.password, code: codes[0] });
    expect(off.statusCode).toBe(204);
  }, 60_000);
});

describe('a challenge dies with the credentials it was issued under', () => {
  it('is void after a password change', async () => {
    const session = await t.login();
    const { secret } = await enrol(session);
    const challenge = await challengeFor('198.51.100.1');
    const changed = await call('PATCH', '/api/auth/password', session, {
      currentPassword: TEST_ADMIN.password,
      newPassword: 'a-brand-new-password',
    });
    expect(changed.statusCode).toBe(204);
    const late = await secondStep(challenge, codeAt(secret, clock), '198.51.100.1');
    expect(late.statusCode).toBe(401);
    expect(late.json().message).toBe('The sign-in has expired, enter your password again');
  });

  it('is void after two-factor sign-in was turned off and on again', async () => {
    const session = await t.login();
    const { secret } = await enrol(session);
    const challenge = await challengeFor('198.51.100.1');
    const off = await call('POST', '/api/auth/2fa/disable', session, {
      password: TEST_ADMIN.password,
      code: codeAt(secret, clock),
    });
    expect(off.statusCode).toBe(204);
    advance(30_000);
    const { secret: again } = await enrol(session);
    const late = await secondStep(challenge, codeAt(again, clock), '198.51.100.1');
    expect(late.statusCode).toBe(401);
    expect(late.json().message).toBe('The sign-in has expired, enter your password again');
  });
});

describe('failed re-checks and refused second steps are audited, summed per client', () => {
  const entries = async (action: string) =>
    await t.db
      .select({ detail: auditEvents.detail, actorKind: auditEvents.actorKind, address: auditEvents.address })
      .from(auditEvents)
      .where(eq(auditEvents.action, action))
      .all();

  it('records a wrong password on password change, two-factor setup and two-factor disable, and a wrong code', async () => {
    const session = await t.login();
    const wrongSetup = await call(
      'POST',
      '/api/auth/2fa/setup',
      session,
      { password: 'not-the-password' },
      '192.0.2.1',
    );
    expect(wrongSetup.statusCode).toBe(422);
    const { secret } = await enrol(session);
    const wrongChange = await call(
      'PATCH',
      '/api/auth/password',
      session,
      { currentPassword: 'not-the-password', newPassword: 'a-brand-new-password' },
      '192.0.2.2',
    );
    expect(wrongChange.statusCode).toBe(422);
    const wrongDisable = await call(
      'POST',
      '/api/auth/2fa/disable',
      session,
      { password: 'not-the-password', code: codeAt(secret, clock) },
      '192.0.2.3',
    );
    expect(wrongDisable.statusCode).toBe(422);
    const wrongDisableCode = await call(
      'POST',
      '/api/auth/2fa/disable',
      session,
      { password: TEST_ADMIN.password, code: wrongCode(secret, 1) },
      '192.0.2.4',
    );
    expect(wrongDisableCode.statusCode).toBe(422);
    expect(await entries('auth.recheck-failed')).toEqual([
      { detail: 'two-factor setup: wrong password', actorKind: 'admin', address: '192.0.2.1' },
      { detail: 'password change: wrong password', actorKind: 'admin', address: '192.0.2.2' },
      { detail: 'two-factor disable: wrong password', actorKind: 'admin', address: '192.0.2.3' },
      { detail: 'two-factor disable: wrong code', actorKind: 'admin', address: '192.0.2.4' },
    ]);
  });

  it('records the second step’s refusals (429) as well as its wrong codes, bounded under a flood', async () => {
    const session = await t.login();
    const { secret } = await enrol(session);
    // Challenges are not bound to an address: the password step on one, the guesses from another.
    const challenges: string[] = [];
    for (let i = 0; i < 10; i++) challenges.push(await challengeFor('198.51.100.1'));
    const ip = '198.51.100.77';
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++)
      statuses.push((await secondStep(challenges[i % 10] ?? '', wrongCode(secret, i), ip)).statusCode);
    expect(statuses.filter((status) => status === 429)).toHaveLength(195);
    const failed = await entries('auth.sign-in-failed');
    expect(failed).toHaveLength(1);
    await t.deps.audit.flushSummed();
    const summed = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, 'auth.sign-in-failed'), eq(auditEvents.address, ip)))
      .all();
    expect(summed).toHaveLength(2);
    expect(summed[1]?.detail).toMatch(/^199 failed sign-ins from 198\.51\.100\.77 between .*\d+ rate limited/);
  });

  it('sums up a flood of wrong current passwords from a stolen session', async () => {
    const session = await t.login();
    for (let i = 0; i < 100; i++) {
      await call('PATCH', '/api/auth/password', session, {
        currentPassword: 'not-the-password',
        newPassword: 'a-brand-new-password',
      });
    }
    expect(await entries('auth.recheck-failed')).toHaveLength(1);
    await t.deps.audit.flushSummed();
    const rows = await entries('auth.recheck-failed');
    expect(rows).toHaveLength(2);
    expect(rows[1]?.detail).toMatch(/^99 failed re-checks from 127\.0\.0\.1 between .*password change: rate limited/);
  });
});
