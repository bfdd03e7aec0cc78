import { eq, lt } from 'drizzle-orm';
import type { ChangePasswordRequest, LoginRequest } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { sessions, users } from '../../db/schema.js';
import { AppError, fieldError } from '../../errors.js';
import { hashPassword, verifyDummyPassword, verifyPassword } from './passwords.js';
import type { LoginLimiter } from './rate-limit.js';
import { createSession, deleteOtherSessions, type SessionIdentity } from './sessions.js';

export const INVALID_CREDENTIALS_MESSAGE = 'Invalid username or password';
export const TOO_MANY_ATTEMPTS_MESSAGE = 'Too many failed sign-in attempts, try again later';

function refuseWhenBlocked(limiter: LoginLimiter, ip: string, username: string): void {
  const retryAfter = limiter.retryAfterSeconds(ip, username);
  if (retryAfter > 0) {
    throw new AppError('rate_limited', TOO_MANY_ATTEMPTS_MESSAGE, [], { 'retry-after': String(retryAfter) });
  }
}

export async function logIn(
  deps: AppDeps,
  limiter: LoginLimiter,
  ip: string,
  body: LoginRequest,
): Promise<{ token: string; expires_in: number }> {
  refuseWhenBlocked(limiter, ip, body.username);
  const user = deps.db.select().from(users).where(eq(users.username, body.username)).get();
  const isValid = user ? await verifyPassword(user.passwordHash, body.password) : (await verifyDummyPassword(body.password), false);
  if (!user || !isValid) {
    limiter.recordFailure(ip, body.username);
    throw new AppError('unauthorized', INVALID_CREDENTIALS_MESSAGE);
  }
  limiter.recordSuccess(ip, body.username);
  // Expired rows are never read again; dropping them here keeps the table from growing without a timer.
  deps.db.delete(sessions).where(lt(sessions.expiresAt, deps.now().toISOString())).run();
  return createSession(deps, user.id);
}

/** Guessing the current password with a stolen session counts against the same limits as sign-in. */
export async function changePassword(
  deps: AppDeps,
  limiter: LoginLimiter,
  ip: string,
  session: SessionIdentity,
  body: ChangePasswordRequest,
): Promise<void> {
  const user = deps.db.select().from(users).where(eq(users.id, session.userId)).get();
  if (!user) throw new AppError('unauthorized', 'Session ended');
  refuseWhenBlocked(limiter, ip, user.username);
  if (!(await verifyPassword(user.passwordHash, body.currentPassword))) {
    limiter.recordFailure(ip, user.username);
    throw fieldError('currentPassword', 'The current password is not correct');
  }
  if (body.newPassword === body.currentPassword) {
    throw fieldError('newPassword', 'The new password must differ from the current one');
  }
  const passwordHash = await hashPassword(body.newPassword);
  deps.db.update(users).set({ passwordHash, updatedAt: deps.now().toISOString() }).where(eq(users.id, user.id)).run();
  // Anyone who learnt the old password loses access now; the operator's own session stays.
  deleteOtherSessions(deps, user.id, session.sessionId);
}
