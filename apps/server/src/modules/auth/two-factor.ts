import { and, count, eq, isNull, lt, or } from 'drizzle-orm';
import type {
  LoginResponse,
  SecondFactorLoginRequest,
  TwoFactorDisableRequest,
  TwoFactorEnabled,
  TwoFactorEnableRequest,
  TwoFactorSetup,
  TwoFactorSetupRequest,
  TwoFactorStatus,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { recoveryCodes, users } from '../../db/schema.js';
import { AppError, badRequest, fieldError } from '../../errors.js';
import { emitAuthEvent, type AuthEventKind } from './auth-events.js';
import type { ChallengeStore } from './challenges.js';
import { verifyPassword } from './passwords.js';
import { claimAttempt, hashGated, startSession, type PasswordChecks } from './service.js';
import type { SessionIdentity } from './sessions.js';
import {
  classifyCode,
  hashRecoveryCode,
  matchTotpStep,
  newRecoveryCodes,
  newTotpSecret,
  otpauthUri,
  qrCodeDataUrl,
} from './totp.js';

// Two-factor sign-in for the admin (docs/api.md "Two-factor sign-in"). The TOTP secret is stored encrypted with the
// gateway's secret key and never leaves the server after enrolment; recovery codes are stored as keyed hashes and
// work once. Every code check is claimed in the sign-in limiter first, like a password.

export const INVALID_CODE_MESSAGE = 'Invalid authentication code';
export const CHALLENGE_EXPIRED_MESSAGE = 'The sign-in has expired, enter your password again';
const WRONG_CODE = 'The code is not correct';
const WRONG_PASSWORD = 'The password is not correct';

type User = typeof users.$inferSelect;

async function userOf(deps: AppDeps, userId: number): Promise<User> {
  const user = await deps.db.select().from(users).where(eq(users.id, userId)).get();
  if (!user) throw new AppError('unauthorized', 'Session ended');
  return user;
}

const recoveryKey = (deps: AppDeps): Uint8Array => deps.secrets.deriveKey('recovery-codes');

function announce(deps: AppDeps, kind: AuthEventKind, user: User, ip: string): void {
  emitAuthEvent({ kind, userId: user.id, username: user.username, ip, at: deps.now() });
}

/**
 * Accepts a TOTP code of a step later than the last one accepted (the update is the check, so two requests racing
 * with one code cannot both win).
 */
async function acceptTotp(deps: AppDeps, user: User, secretEnc: string, code: string): Promise<boolean> {
  const step = matchTotpStep(deps.secrets.decrypt(secretEnc), code, deps.now().getTime());
  if (step === null) return false;
  const accepted = await deps.db.write((tx) =>
    tx
      .update(users)
      .set({ totpLastStep: step })
      .where(and(eq(users.id, user.id), or(isNull(users.totpLastStep), lt(users.totpLastStep, step))))
      .returning({ id: users.id }),
  );
  return accepted.length === 1;
}

/** Spends an unused recovery code (once: the update is the check). */
async function spendRecoveryCode(deps: AppDeps, user: User, code: string): Promise<boolean> {
  const codeHash = hashRecoveryCode(recoveryKey(deps), code);
  const spent = await deps.db.write((tx) =>
    tx
      .update(recoveryCodes)
      .set({ usedAt: deps.now().toISOString() })
      .where(and(eq(recoveryCodes.userId, user.id), eq(recoveryCodes.codeHash, codeHash), isNull(recoveryCodes.usedAt)))
      .returning({ id: recoveryCodes.id }),
  );
  return spent.length === 1;
}

/** Checks a code against the user's enabled second factor: 'totp', 'recovery' (spent now) or null. */
async function checkSecondFactor(deps: AppDeps, user: User, input: string): Promise<'totp' | 'recovery' | null> {
  const code = classifyCode(input);
  if (!code || user.totpSecretEnc === null) return null;
  if (code.kind === 'totp') return (await acceptTotp(deps, user, user.totpSecretEnc, code.code)) ? 'totp' : null;
  return (await spendRecoveryCode(deps, user, code.code)) ? 'recovery' : null;
}

/** The second step of sign-in: the password step's challenge and a code. */
export async function logInSecondFactor(
  deps: AppDeps,
  checks: PasswordChecks,
  challenges: ChallengeStore,
  ip: string,
  body: SecondFactorLoginRequest,
): Promise<LoginResponse> {
  const userId = challenges.userOf(body.challenge);
  if (userId === null) throw new AppError('unauthorized', CHALLENGE_EXPIRED_MESSAGE);
  const user = await userOf(deps, userId);
  const attempt = await claimAttempt(checks, ip, user.username);
  const accepted = await checkSecondFactor(deps, user, body.code);
  if (!accepted) {
    challenges.fail(body.challenge);
    announce(deps, 'sign_in.second_factor_failed', user, ip);
    throw new AppError('unauthorized', INVALID_CODE_MESSAGE);
  }
  await attempt.succeed();
  challenges.consume(body.challenge);
  announce(deps, accepted === 'recovery' ? 'sign_in.recovery_code_used' : 'sign_in.second_factor', user, ip);
  return await startSession(deps, user.id);
}

export async function twoFactorStatus(deps: AppDeps, session: SessionIdentity): Promise<TwoFactorStatus> {
  const user = await userOf(deps, session.userId);
  const left = await deps.db
    .select({ n: count() })
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.userId, user.id), isNull(recoveryCodes.usedAt)))
    .get();
  return { enabled: user.totpSecretEnc !== null, recoveryCodesLeft: user.totpSecretEnc === null ? 0 : (left?.n ?? 0) };
}

/** Checks the password as sign-in does (limiter, hashing cap); a wrong one is a 422 on `field`. */
async function requirePassword(deps: AppDeps, checks: PasswordChecks, ip: string, user: User, password: string) {
  const attempt = await claimAttempt(checks, ip, user.username);
  if (!(await hashGated(checks, () => verifyPassword(user.passwordHash, password), attempt)))
    throw fieldError('password', WRONG_PASSWORD);
  return attempt;
}

/** Starts enrolment: a new secret (replacing any unconfirmed one), shown once with its QR code. */
export async function startTwoFactorSetup(
  deps: AppDeps,
  checks: PasswordChecks,
  ip: string,
  session: SessionIdentity,
  body: TwoFactorSetupRequest,
): Promise<TwoFactorSetup> {
  const user = await userOf(deps, session.userId);
  if (user.totpSecretEnc !== null) throw badRequest('Two-factor sign-in is already on; turn it off first');
  await (await requirePassword(deps, checks, ip, user, body.password)).succeed();
  const secret = newTotpSecret();
  await deps.db.write(
    async (tx) =>
      await tx
        .update(users)
        .set({ totpPendingSecretEnc: deps.secrets.encrypt(secret), updatedAt: deps.now().toISOString() })
        .where(eq(users.id, user.id))
        .run(),
  );
  const uri = otpauthUri(secret, user.username);
  return { secret, otpauthUri: uri, qrCode: await qrCodeDataUrl(uri) };
}

/** Confirms enrolment with a code of the new secret: two-factor sign-in is on; the recovery codes, once. */
export async function enableTwoFactor(
  deps: AppDeps,
  checks: PasswordChecks,
  ip: string,
  session: SessionIdentity,
  body: TwoFactorEnableRequest,
): Promise<TwoFactorEnabled> {
  const user = await userOf(deps, session.userId);
  if (user.totpSecretEnc !== null) throw badRequest('Two-factor sign-in is already on');
  if (user.totpPendingSecretEnc === null) throw badRequest('Start the setup first');
  const attempt = await claimAttempt(checks, ip, user.username);
  const code = classifyCode(body.code);
  if (code?.kind !== 'totp' || !(await acceptTotp(deps, user, user.totpPendingSecretEnc, code.code)))
    throw fieldError('code', WRONG_CODE);
  await attempt.succeed();
  const codes = newRecoveryCodes();
  const key = recoveryKey(deps);
  await deps.db.write(async (tx) => {
    await tx
      .update(users)
      .set({
        totpSecretEnc: user.totpPendingSecretEnc,
        totpPendingSecretEnc: null,
        updatedAt: deps.now().toISOString(),
      })
      .where(eq(users.id, user.id))
      .run();
    await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, user.id)).run();
    await tx
      .insert(recoveryCodes)
      .values(codes.map((text) => ({ userId: user.id, codeHash: hashRecoveryCode(key, text) })))
      .run();
  });
  announce(deps, 'two_factor.enabled', user, ip);
  return { recoveryCodes: codes };
}

/** Turns two-factor sign-in off: the password and a TOTP or recovery code. */
export async function disableTwoFactor(
  deps: AppDeps,
  checks: PasswordChecks,
  ip: string,
  session: SessionIdentity,
  body: TwoFactorDisableRequest,
): Promise<void> {
  const user = await userOf(deps, session.userId);
  if (user.totpSecretEnc === null) throw badRequest('Two-factor sign-in is not on');
  const attempt = await requirePassword(deps, checks, ip, user, body.password);
  if (!(await checkSecondFactor(deps, user, body.code))) throw fieldError('code', WRONG_CODE);
  await attempt.succeed();
  await deps.db.write(async (tx) => {
    await tx
      .update(users)
      .set({ totpSecretEnc: null, totpPendingSecretEnc: null, totpLastStep: null, updatedAt: deps.now().toISOString() })
      .where(eq(users.id, user.id))
      .run();
    await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, user.id)).run();
  });
  announce(deps, 'two_factor.disabled', user, ip);
}
