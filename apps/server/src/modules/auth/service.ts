import { eq, lt, or } from 'drizzle-orm';
import type { ChangePasswordRequest, LoginRequest, LoginResponse, SecondFactorChallenge } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { sessions, users } from '../../db/schema.js';
import { AppError, fieldError } from '../../errors.js';
import { authEvent, passwordAccepted, recheckFailed, signInFailed, type Client } from './auth-audit.js';
import { voidChallenges, type ChallengeStore } from './challenges.js';
import { HashGateBusyError, type HashGate } from './hash-gate.js';
import { hashPassword, verifyDummyPassword, verifyPassword } from './passwords.js';
import type { LoginAttempt, LoginLimiter } from './rate-limit.js';
import { createSession, deleteOtherSessions, type SessionIdentity } from './sessions.js';

export const INVALID_CREDENTIALS_MESSAGE = 'Invalid username or password';
export const TOO_MANY_ATTEMPTS_MESSAGE = 'Too many failed sign-in attempts, try again later';
export const HASHING_BUSY_MESSAGE = 'Too many sign-ins in progress, try again in a moment';
/** Said only to whoever gave the account's right password (nobody learns from it whether a name exists). */
export const ACCOUNT_DISABLED_MESSAGE = 'This account is disabled: ask an owner of the gateway to enable it';
export const PASSWORD_SIGN_IN_OFF_MESSAGE =
  "This account signs in through its identity provider only: use the provider's button on the sign-in page";

/** How a session signed in: its first step, and the second factor if one was asked. */
export const PASSWORD_VIA = 'password';
export function viaWithCode(first: string, kind: 'totp' | 'recovery'): string {
  return `${first} + ${kind === 'totp' ? 'authentication code' : 'recovery code'}`;
}

/** The account a username names: exactly, or (accounts made by invite are lower-case) lower-cased. */
export async function findAccountByUsername(deps: Pick<AppDeps, 'db'>, username: string) {
  const rows = await deps.db
    .select()
    .from(users)
    .where(or(eq(users.username, username), eq(users.username, username.toLowerCase())))
    .all();
  return rows.find((row) => row.username === username) ?? rows[0];
}

/** A disabled account, or one whose password sign-in is off, is refused after its right password (403). */
export function assertMaySignIn(user: { enabled: boolean }): void {
  if (!user.enabled) throw new AppError('forbidden', ACCOUNT_DISABLED_MESSAGE);
}

/** Audit reasons of refusals (summed per client in the audit log). */
export const RATE_LIMITED = 'rate limited';
const HASHING_BUSY = 'too many sign-ins in progress';

/** What guards every password check: the per-client/per-username limiter and the global hashing cap. */
export interface PasswordChecks {
  limiter: LoginLimiter;
  gate: HashGate;
}

/** Records a refusal or a failure of the step being checked (its audit entry). */
export type ReportFailure = (reason: string) => Promise<void>;

/** Claims an attempt before any hashing, or refuses with 429 and Retry-After (and reports the refusal). */
export async function claimAttempt(
  checks: PasswordChecks,
  ip: string,
  username: string,
  report: ReportFailure,
): Promise<LoginAttempt> {
  const reservation = await checks.limiter.reserve(ip, username);
  if (reservation.attempt) return reservation.attempt;
  await report(RATE_LIMITED);
  throw new AppError('rate_limited', TOO_MANY_ATTEMPTS_MESSAGE, [], {
    'retry-after': String(reservation.retryAfterSeconds),
  });
}

/** Runs a hash through the global cap; a full queue is a 429 that costs no hashing. */
export async function hashGated<T>(
  checks: PasswordChecks,
  work: () => Promise<T>,
  attempt?: LoginAttempt,
  report?: ReportFailure,
): Promise<T> {
  try {
    return await checks.gate.run(work);
  } catch (error) {
    if (!(error instanceof HashGateBusyError)) throw error;
    // The password was never looked at: this must not count as a failure.
    await attempt?.release();
    await report?.(HASHING_BUSY);
    throw new AppError('rate_limited', HASHING_BUSY_MESSAGE, [], { 'retry-after': '1' });
  }
}

/**
 * The password step. With two-factor sign-in off the answer is the session (the spec's answer); with it on, a
 * challenge for the second step (two-factor.ts), and the client's earlier failures are NOT forgotten: a right
 * password must not reset the count of wrong codes guessed between password steps.
 */
export async function logIn(
  deps: AppDeps,
  checks: PasswordChecks,
  challenges: ChallengeStore,
  client: Client,
  body: LoginRequest,
): Promise<LoginResponse | SecondFactorChallenge> {
  const report: ReportFailure = (reason) => signInFailed(deps, client, { username: body.username }, reason);
  const attempt = await claimAttempt(checks, client.ip, body.username, report);
  const user = await findAccountByUsername(deps, body.username);
  const isValid = await hashGated(
    checks,
    () =>
      user ? verifyPassword(user.passwordHash, body.password) : verifyDummyPassword(body.password).then(() => false),
    attempt,
    report,
  );
  // A failure needs no bookkeeping: the claim already counts as one.
  if (!user || !isValid) {
    await report('wrong username or password');
    throw new AppError('unauthorized', INVALID_CREDENTIALS_MESSAGE);
  }
  if (!user.enabled || !user.passwordSignIn) {
    // The right password: not a guess to count, but no session either.
    await attempt.succeed();
    await report(user.enabled ? 'password sign-in is off for this account' : 'account disabled');
    assertMaySignIn(user);
    throw new AppError('forbidden', PASSWORD_SIGN_IN_OFF_MESSAGE);
  }
  if (user.totpSecretEnc !== null) {
    await attempt.release();
    const challenge = await challenges.issue(user.id, PASSWORD_VIA);
    await passwordAccepted(deps, client, user);
    return { twoFactorRequired: true, ...challenge };
  }
  await attempt.succeed();
  const session = await startSession(deps, user.id, PASSWORD_VIA);
  await authEvent(deps, client, user, 'password', PASSWORD_VIA);
  return session;
}

/** A new session for a user who passed every step of sign-in, `via` saying how. */
export async function startSession(deps: AppDeps, userId: number, via: string): Promise<LoginResponse> {
  // Expired rows are never read again; dropping them here keeps the table from growing without a timer.
  await deps.db.write(
    async (tx) => await tx.delete(sessions).where(lt(sessions.expiresAt, deps.now().toISOString())).run(),
  );
  return await createSession(deps, userId, via);
}

/**
 * Guessing the current password with a stolen session counts against the same limits as sign-in, and every wrong
 * one is audited. The session that changes the password stays; every other session of the user ends (the caller ends
 * their event streams), and so does every sign-in still waiting for its second factor.
 */
export async function changePassword(
  deps: AppDeps,
  checks: PasswordChecks,
  client: Client,
  session: SessionIdentity,
  body: ChangePasswordRequest,
): Promise<void> {
  const user = await deps.db.select().from(users).where(eq(users.id, session.userId)).get();
  if (!user) throw new AppError('unauthorized', 'Session ended');
  const report: ReportFailure = (reason) => recheckFailed(deps, client, user, 'password change', reason);
  const attempt = await claimAttempt(checks, client.ip, user.username, report);
  if (!(await hashGated(checks, () => verifyPassword(user.passwordHash, body.currentPassword), attempt, report))) {
    await report('wrong password');
    throw fieldError('currentPassword', 'The current password is not correct');
  }
  await attempt.succeed();
  if (body.newPassword === body.currentPassword) {
    throw fieldError('newPassword', 'The new password must differ from the current one');
  }
  const passwordHash = await hashGated(checks, () => hashPassword(body.newPassword));
  await deps.db.write(async (tx) => {
    await tx
      .update(users)
      .set({ passwordHash, updatedAt: deps.now().toISOString() })
      .where(eq(users.id, user.id))
      .run();
    // A password step passed with the old password signs nobody in any more, on any gateway.
    await voidChallenges(tx, user.id);
  });
  // Anyone who learnt the old password loses access now; the operator's own session stays.
  await deleteOtherSessions(deps, user.id, session.sessionId);
}
