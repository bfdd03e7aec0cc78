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
import { authEvent, recheckFailed, signInFailed, type Client } from './auth-audit.js';
import { voidChallenges, type ChallengeStore } from './challenges.js';
import { verifyPassword } from './passwords.js';
import type { LoginAttempt } from './rate-limit.js';
import { claimTotpCheck } from './second-factor-limit.js';
import {
  assertMaySignIn,
  claimAttempt,
  hashGated,
  startSession,
  viaWithCode,
  type PasswordChecks,
  type ReportFailure,
} from './service.js';
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

// Two-factor sign-in of each account (docs/api.md "Two-factor sign-in"). The TOTP secret is stored encrypted with the
// gateway's secret key and never leaves the server after enrolment; recovery codes are stored as keyed hashes and
// work once. Every code check is claimed in the sign-in limiter first, like a password, and every TOTP code check of
// an enabled secret in the account's own cap (second-factor-limit.ts) too.

export const INVALID_CODE_MESSAGE = 'Invalid authentication code';
export const CHALLENGE_EXPIRED_MESSAGE = 'The sign-in has expired, enter your password again';
/** What the owner reads once the account's TOTP cap is reached: recovery codes still work. */
export const TOTP_LOCKED_MESSAGE =
  'Too many wrong authentication codes for this account: codes from the authenticator app are refused for now. ' +
  'Sign in with a recovery code, or try again later.';
const TOTP_LOCKED = 'authentication codes locked for this account';
const WRONG_CODE = 'The code is not correct';
const WRONG_PASSWORD = 'The password is not correct';

type User = typeof users.$inferSelect;

async function userOf(deps: AppDeps, userId: number): Promise<User> {
  const user = await deps.db.select().from(users).where(eq(users.id, userId)).get();
  if (!user) throw new AppError('unauthorized', 'Session ended');
  return user;
}

const recoveryKey = (deps: AppDeps): Uint8Array => deps.secrets.deriveKey('recovery-codes');

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

/**
 * Checks a code against the user's enabled second factor: 'totp', 'recovery' (spent now) or null (wrong). A TOTP
 * code is claimed in the account's cap first: once the cap is reached it is refused with 429 without being looked at
 * (the client's claim `attempt` is withdrawn: nothing was guessed), while a recovery code is still checked.
 */
async function checkSecondFactor(
  deps: AppDeps,
  user: User,
  input: string,
  attempt: LoginAttempt,
  report: ReportFailure,
): Promise<'totp' | 'recovery' | null> {
  const code = classifyCode(input);
  if (!code || user.totpSecretEnc === null) return null;
  if (code.kind === 'recovery') return (await spendRecoveryCode(deps, user, code.code)) ? 'recovery' : null;
  const claim = await claimTotpCheck(deps.db, deps.now, user.id);
  if (claim.retryAfterSeconds !== undefined) {
    await attempt.release();
    await report(TOTP_LOCKED);
    throw new AppError('rate_limited', TOTP_LOCKED_MESSAGE, [], { 'retry-after': String(claim.retryAfterSeconds) });
  }
  if (!(await acceptTotp(deps, user, user.totpSecretEnc, code.code))) return null;
  await claim.withdraw();
  return 'totp';
}

/** The second step of sign-in: the password step's challenge and a code. */
export async function logInSecondFactor(
  deps: AppDeps,
  checks: PasswordChecks,
  challenges: ChallengeStore,
  client: Client,
  body: SecondFactorLoginRequest,
): Promise<LoginResponse> {
  const challenge = await challenges.find(body.challenge);
  if (challenge === null) throw new AppError('unauthorized', CHALLENGE_EXPIRED_MESSAGE);
  const user = await userOf(deps, challenge.userId);
  const report: ReportFailure = (reason) => signInFailed(deps, client, user, reason);
  const attempt = await claimAttempt(checks, client.ip, user.username, report);
  const accepted = await checkSecondFactor(deps, user, body.code, attempt, report);
  if (!accepted) {
    await challenges.fail(challenge.id);
    await report('wrong authentication code');
    throw new AppError('unauthorized', INVALID_CODE_MESSAGE);
  }
  await attempt.succeed();
  // Used once; and gone if the password or the second factor changed since the password step.
  if (!(await challenges.consume(challenge.id))) throw new AppError('unauthorized', CHALLENGE_EXPIRED_MESSAGE);
  assertMaySignIn(user);
  const via = viaWithCode(challenge.via, accepted);
  const session = await startSession(deps, user.id, via);
  await authEvent(deps, client, user, accepted, via);
  return session;
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

/** Checks the password as sign-in does (limiter, hashing cap); a wrong one is a 422 on `password`, audited. */
export async function requirePassword(
  checks: PasswordChecks,
  client: Client,
  user: User,
  password: string,
  report: ReportFailure,
): Promise<LoginAttempt> {
  const attempt = await claimAttempt(checks, client.ip, user.username, report);
  if (!(await hashGated(checks, () => verifyPassword(user.passwordHash, password), attempt, report))) {
    await report('wrong password');
    throw fieldError('password', WRONG_PASSWORD);
  }
  return attempt;
}

/** Starts enrolment: a new secret (replacing any unconfirmed one), shown once with its QR code. */
export async function startTwoFactorSetup(
  deps: AppDeps,
  checks: PasswordChecks,
  client: Client,
  session: SessionIdentity,
  body: TwoFactorSetupRequest,
): Promise<TwoFactorSetup> {
  const user = await userOf(deps, session.userId);
  if (user.totpSecretEnc !== null) throw badRequest('Two-factor sign-in is already on; turn it off first');
  const report: ReportFailure = (reason) => recheckFailed(deps, client, user, 'two-factor setup', reason);
  await (await requirePassword(checks, client, user, body.password, report)).succeed();
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
  client: Client,
  session: SessionIdentity,
  body: TwoFactorEnableRequest,
): Promise<TwoFactorEnabled> {
  const user = await userOf(deps, session.userId);
  if (user.totpSecretEnc !== null) throw badRequest('Two-factor sign-in is already on');
  if (user.totpPendingSecretEnc === null) throw badRequest('Start the setup first');
  // A code of the secret this session was just shown: the limiter holds guessing back, nothing is audited.
  const attempt = await claimAttempt(checks, client.ip, user.username, async () => undefined);
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
    // A password step passed under an earlier second factor continues no sign-in.
    await voidChallenges(tx, user.id);
  });
  await authEvent(deps, client, user, 'two-factor-enabled', session.via);
  return { recoveryCodes: codes };
}

/** Turns two-factor sign-in off: the password and a TOTP or recovery code. */
export async function disableTwoFactor(
  deps: AppDeps,
  checks: PasswordChecks,
  client: Client,
  session: SessionIdentity,
  body: TwoFactorDisableRequest,
): Promise<void> {
  const user = await userOf(deps, session.userId);
  if (user.totpSecretEnc === null) throw badRequest('Two-factor sign-in is not on');
  const report: ReportFailure = (reason) => recheckFailed(deps, client, user, 'two-factor disable', reason);
  const attempt = await requirePassword(checks, client, user, body.password, report);
  if (!(await checkSecondFactor(deps, user, body.code, attempt, report))) {
    await report('wrong code');
    throw fieldError('code', WRONG_CODE);
  }
  await attempt.succeed();
  await deps.db.write(async (tx) => {
    await tx
      .update(users)
      .set({ totpSecretEnc: null, totpPendingSecretEnc: null, totpLastStep: null, updatedAt: deps.now().toISOString() })
      .where(eq(users.id, user.id))
      .run();
    await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, user.id)).run();
    await voidChallenges(tx, user.id);
  });
  await authEvent(deps, client, user, 'two-factor-disabled', session.via);
}
