import { Secret, TOTP } from 'otpauth';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { desc } from 'drizzle-orm';
import { auditEvents, recoveryCodes, users } from '../../db/schema.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../../test/build-test-app.js';
import { CHALLENGE_TTL_SECONDS } from './challenges.js';
import { LOGIN_MAX_FAILURES_PER_CLIENT } from './rate-limit.js';

// Two-factor sign-in: enrolment, the two-step sign-in, replay, recovery codes, the limiter, disabling.

let t: TestApp;
let clock: Date;

beforeEach(async () => {
  clock = new Date('2026-06-01T12:00:00.000Z');
  t = await buildTestApp({ now: () => clock });
});
afterEach(async () => {
  await t.cleanup();
});

const codeAt = (secret: string, at: Date): string =>
  new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({
    timestamp: at.getTime(),
  });
/** The newest entry of the audit log, as its row. */
const lastEntry = async () => await t.db.select().from(auditEvents).orderBy(desc(auditEvents.id)).get();

const advance = (seconds: number) => {
  clock = new Date(clock.getTime() + seconds * 1000);
};

const call = (method: 'GET' | 'POST', url: string, token: string | null, payload?: object, ip = '127.0.0.1') =>
  t.app.inject({
    method,
    url,
    remoteAddress: ip,
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    ...(payload ? { payload } : {}),
  });
const passwordStep = (ip = '127.0.0.1', password: string = TEST_ADMIN.password) =>
  call('POST', '/api/auth/login', null, { username: TEST_ADMIN.username, password }, ip);
const secondStep = (challenge: string, code: string, ip = '127.0.0.1') =>
  call('POST', '/api/auth/login/2fa', null, { challenge, code }, ip);

/** Enrols the admin; returns the secret, the recovery codes and the session used. */
async function enrol(): Promise<{ secret: string; codes: string[]; session: string }> {
  const session = await t.login();
  const setup = await call('POST', '/api/auth/2fa/setup', session, { password: TEST_ADMIN.password });
  expect(setup.statusCode).toBe(200);
  const { secret } = setup.json<{ secret: string }>();
  const enabled = await call('POST', '/api/auth/2fa/enable', session, { code: codeAt(secret, clock) });
  expect(enabled.statusCode).toBe(200);
  advance(30); // the enrolment code's step is spent
  return { secret, codes: enabled.json<{ recoveryCodes: string[] }>().recoveryCodes, session };
}

async function challenge(ip = '127.0.0.1'): Promise<string> {
  const answer = await passwordStep(ip);
  expect(answer.statusCode).toBe(200);
  return answer.json<{ challenge: string }>().challenge;
}

describe('enrolment', () => {
  it('shows the secret and a QR code once, turns on only with a right code, and never returns the secret again', async () => {
    const session = await t.login();
    expect((await call('GET', '/api/auth/2fa', session)).json()).toEqual({ enabled: false, recoveryCodesLeft: 0 });

    const wrongPassword = await call('POST', '/api/auth/2fa/setup', session, { password: 'not-the-password' });
    expect(wrongPassword.statusCode).toBe(422);
    expect(wrongPassword.json().errors.body).toEqual([
      { field: 'password', message: 'The password is not correct', code: 'password_wrong' },
    ]);

    const setup = await call('POST', '/api/auth/2fa/setup', session, { password: TEST_ADMIN.password });
    const body = setup.json<{ secret: string; otpauthUri: string; qrCode: string }>();
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(body.otpauthUri).toBe(
      `otpauth://totp/Postern:admin?issuer=Postern&secret=${body.secret}&algorithm=SHA1&digits=6&period=30`,
    );
    expect(Buffer.from(body.qrCode.replace('data:image/svg+xml;base64,', ''), 'base64').toString()).toContain('<svg');
    expect(setup.headers['cache-control']).toBe('no-store');

    const wrong = await call('POST', '/api/auth/2fa/enable', session, {
      code: codeAt(body.secret, new Date(clock.getTime() + 120_000)),
    });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().errors.body).toEqual([
      { field: 'code', message: 'The code is not correct', code: 'code_wrong' },
    ]);
    expect((await call('GET', '/api/auth/2fa', session)).json()).toEqual({ enabled: false, recoveryCodesLeft: 0 });

    const enabled = await call('POST', '/api/auth/2fa/enable', session, { code: codeAt(body.secret, clock) });
    expect(enabled.statusCode).toBe(200);
    const { recoveryCodes: codes } = enabled.json<{ recoveryCodes: string[] }>();
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/);
    expect(new Set(codes).size).toBe(10);
    expect((await call('GET', '/api/auth/2fa', session)).json()).toEqual({ enabled: true, recoveryCodesLeft: 10 });
    expect(await lastEntry()).toMatchObject({ action: 'auth.two-factor-enabled', actorName: 'admin' });

    // At rest: the secret encrypted, the recovery codes hashed.
    const row = await t.db.select().from(users).get();
    expect(row?.totpSecretEnc).toMatch(/^v1:/);
    expect(row?.totpSecretEnc).not.toContain(body.secret);
    expect(t.deps.secrets.decrypt(row?.totpSecretEnc ?? '')).toBe(body.secret);
    const stored = JSON.stringify(await t.db.select().from(recoveryCodes).all());
    for (const code of codes) {
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(code.replace(/-/g, ''));
    }
    // Starting again while on is refused: the secret is never handed out a second time.
    const again = await call('POST', '/api/auth/2fa/setup', session, { password: TEST_ADMIN.password });
    expect(again.statusCode).toBe(400);
    expect(again.body).not.toContain(body.secret);
  });

  it('ends the other sessions, which signed in with the password alone', async () => {
    const other = await t.login();
    await enrol();
    expect((await call('GET', '/api/nodes', other)).statusCode).toBe(401);
  });
});

describe('two-step sign-in', () => {
  it('keeps the spec answer while 2FA is off', async () => {
    expect(Object.keys((await passwordStep()).json()).sort()).toEqual(['expires_in', 'token']);
  });

  it('answers a challenge instead of a session, and exchanges it with a code for the session', async () => {
    const { secret } = await enrol();
    const first = await passwordStep();
    expect(first.statusCode).toBe(200);
    const body = first.json<Record<string, unknown>>();
    expect(body).toEqual({ twoFactorRequired: true, challenge: expect.any(String), expires_in: CHALLENGE_TTL_SECONDS });
    expect(first.headers['set-cookie']).toBeUndefined();
    // The challenge is no session.
    expect((await call('GET', '/api/nodes', body.challenge as string)).statusCode).toBe(401);

    const second = await secondStep(body.challenge as string, codeAt(secret, clock));
    expect(second.statusCode).toBe(200);
    const session = second.json<{ token: string; expires_in: number }>();
    expect(Object.keys(session).sort()).toEqual(['expires_in', 'token']);
    expect(String(second.headers['set-cookie'])).toContain('token=');
    expect((await call('GET', '/api/nodes', session.token)).statusCode).toBe(200);
    expect(await lastEntry()).toMatchObject({
      action: 'auth.sign-in',
      detail: 'with an authentication code',
      actorName: 'admin',
      address: '127.0.0.1',
    });
    // The audit log tells the password step from the sign-in itself.
    const audit = (await call('GET', '/api/audit?limit=5', session.token)).json<{
      data: { action: string; detail: string | null }[];
    }>();
    expect(audit.data.map((entry) => [entry.action, entry.detail]).slice(0, 2)).toEqual([
      ['auth.sign-in', 'with an authentication code'],
      ['auth.password-accepted', 'second factor required'],
    ]);
    // Used once.
    advance(30);
    expect((await secondStep(body.challenge as string, codeAt(secret, clock))).statusCode).toBe(401);
  });

  it('refuses a wrong code, a code from outside the drift window and an expired challenge', async () => {
    const { secret } = await enrol();
    const id = await challenge();
    const wrong = await secondStep(id, codeAt(secret, new Date(clock.getTime() + 90_000)));
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({
      message: 'Invalid authentication code',
      code: 'unauthorized',
      messageCode: 'invalid_authentication_code',
    });
    expect(await lastEntry()).toMatchObject({ action: 'auth.sign-in-failed', detail: 'wrong authentication code' });
    // One step of clock drift is accepted.
    expect((await secondStep(id, codeAt(secret, new Date(clock.getTime() + 30_000)))).statusCode).toBe(200);

    advance(60);
    const late = await challenge();
    advance(CHALLENGE_TTL_SECONDS + 1);
    const expired = await secondStep(late, codeAt(secret, clock));
    expect(expired.statusCode).toBe(401);
    expect(expired.json().message).toBe('The sign-in has expired, enter your password again');
  });

  it('does not accept a code twice within its window (replay)', async () => {
    const { secret } = await enrol();
    const code = codeAt(secret, clock);
    expect((await secondStep(await challenge(), code)).statusCode).toBe(200);
    expect((await secondStep(await challenge(), code)).statusCode).toBe(401);
    // Nor an older one still inside the drift window.
    expect((await secondStep(await challenge(), codeAt(secret, new Date(clock.getTime() - 30_000)))).statusCode).toBe(
      401,
    );
    advance(30);
    expect((await secondStep(await challenge(), codeAt(secret, clock))).statusCode).toBe(200);
  });

  it('accepts each recovery code once, typed with or without dashes', async () => {
    const { codes, session } = await enrol();
    const [first = '', second = ''] = codes;
    expect((await secondStep(await challenge(), first)).statusCode).toBe(200);
    expect(await lastEntry()).toMatchObject({ action: 'auth.sign-in', detail: 'with a recovery code' });
    expect((await secondStep(await challenge(), first)).statusCode).toBe(401);
    expect((await secondStep(await challenge(), second.replace(/-/g, '').toLowerCase())).statusCode).toBe(200);
    const fresh = await secondStep(await challenge(), codes[2] ?? '');
    expect((await call('GET', '/api/auth/2fa', fresh.json<{ token: string }>().token)).json()).toEqual({
      enabled: true,
      recoveryCodesLeft: 7,
    });
    // The session that enrolled stays signed in.
    expect((await call('GET', '/api/auth/2fa', session)).statusCode).toBe(200);
  });

  it('counts wrong codes in the sign-in limiter, and a right password does not reset the count', async () => {
    const { secret } = await enrol();
    const ip = '198.51.100.7';
    for (let index = 0; index < LOGIN_MAX_FAILURES_PER_CLIENT; index += 1) {
      // A fresh challenge each time: the password is right, the codes are guesses.
      expect((await secondStep(await challenge(ip), '000000', ip)).statusCode).toBe(401);
    }
    const id = await passwordStep(ip);
    expect(id.statusCode).toBe(429);
    expect(id.headers['retry-after']).toBeDefined();
    // Another client is not held back, and the limited one's right code is refused too while it waits.
    const other = await challenge('203.0.113.9');
    expect((await secondStep(other, codeAt(secret, clock), '198.51.100.7')).statusCode).toBe(429);
    expect((await secondStep(other, codeAt(secret, clock), '203.0.113.9')).statusCode).toBe(200);
  });
});

describe('disabling', () => {
  it('needs the password and a code, then sign-in is one step again', async () => {
    const { secret, session } = await enrol();
    const wrongPassword = await call('POST', '/api/auth/2fa/disable', session, {
      password: 'not-the-password',
      code: codeAt(secret, clock),
    });
    expect(wrongPassword.statusCode).toBe(422);
    expect(wrongPassword.json().errors.body).toEqual([
      { field: 'password', message: 'The password is not correct', code: 'password_wrong' },
    ]);
    const wrongCode = await call('POST', '/api/auth/2fa/disable', session, {
      password: TEST_ADMIN.password,
      code: '000000',
    });
    expect(wrongCode.statusCode).toBe(422);
    expect(wrongCode.json().errors.body).toEqual([
      { field: 'code', message: 'The code is not correct', code: 'code_wrong' },
    ]);
    expect((await call('GET', '/api/auth/2fa', session)).json()).toMatchObject({ enabled: true });

    const off = await call('POST', '/api/auth/2fa/disable', session, {
      password: TEST_ADMIN.password,
      code: codeAt(secret, clock),
    });
    expect(off.statusCode).toBe(204);
    expect(await lastEntry()).toMatchObject({ action: 'auth.two-factor-disabled' });
    expect((await call('GET', '/api/auth/2fa', session)).json()).toEqual({ enabled: false, recoveryCodesLeft: 0 });
    expect(await t.db.select().from(recoveryCodes).all()).toEqual([]);
    expect((await t.db.select().from(users).get())?.totpSecretEnc).toBeNull();
    expect(Object.keys((await passwordStep()).json()).sort()).toEqual(['expires_in', 'token']);
  });

  it('takes a recovery code instead of a TOTP code', async () => {
    const { codes, session } = await enrol();
    const off = await call('POST', '/api/auth/2fa/disable', session, {
      password: TEST_ADMIN.password,
      code: codes[0] ?? '',
    });
    expect(off.statusCode).toBe(204);
  });
});
