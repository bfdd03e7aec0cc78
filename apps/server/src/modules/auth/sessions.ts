import { randomBytes } from 'node:crypto';
import { and, eq, ne, sql } from 'drizzle-orm';
import { jwtVerify, SignJWT } from 'jose';
import type { Role } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import { sessions, users } from '../../db/schema.js';
import { mappedRows, preparedPerDb } from '../../db/prepared.js';
import { effectiveNodeScope } from '../accounts/node-scope.js';

// A session token is an HS256 JWT carrying only the session id. The signature lets a forged token be refused
// without a database read; the row is still checked on every request, so deleting it (logout, password
// change) ends the session at once.

const ISSUER = 'postern';
const AUDIENCE = 'postern-console';

/**
 * The console session behind a request and its account as read with it, on every request: a role changed or an
 * account disabled through any gateway counts from the next request on.
 */
export interface SessionIdentity {
  sessionId: string;
  userId: number;
  username: string;
  role: Role;
  /** How the session signed in ('password', 'password + authentication code', 'single sign-on (Corp IdP)', …). */
  via: string;
  /** When the session ends (ms since the epoch), as read with it. */
  expiresAtMs: number;
  /** The nodes the account may see (accounts/node-scope.ts), as read with it; null: every node. */
  nodeScope: readonly number[] | null;
}

const signingKey = (deps: AppDeps): Uint8Array => deps.secrets.deriveKey('session-jwt');

export async function createSession(
  deps: AppDeps,
  userId: number,
  via: string,
): Promise<{ token: string; expires_in: number }> {
  const ttl = deps.config.sessionTtlSeconds;
  const issuedAt = deps.now();
  const expiresAt = new Date(issuedAt.getTime() + ttl * 1000);
  const sessionId = randomBytes(18).toString('base64url');
  await deps.db.write(async (tx) => {
    await tx.insert(sessions).values({ id: sessionId, userId, via, expiresAt: expiresAt.toISOString() }).run();
    await tx.update(users).set({ lastSignInAt: issuedAt.toISOString() }).where(eq(users.id, userId)).run();
  });
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(sessionId)
    .setIssuedAt(Math.floor(issuedAt.getTime() / 1000))
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(signingKey(deps));
  return { token, expires_in: ttl };
}

// Checking a JWT's signature (a key import plus an HMAC through WebCrypto) costs more than the whole list query
// behind most requests. A token whose signature was checked once stays valid until its `exp`, so remember it;
// the session row is still read on every request, so logout ends the session at once.
const MAX_REMEMBERED_TOKENS = 10_000;
const verifiedTokens = new WeakMap<AppDeps['secrets'], Map<string, { sessionId: string; expiresAtMs: number }>>();

async function sessionIdOf(deps: AppDeps, token: string): Promise<string | null> {
  let remembered = verifiedTokens.get(deps.secrets);
  if (!remembered)
    verifiedTokens.set(deps.secrets, (remembered = new Map<string, { sessionId: string; expiresAtMs: number }>()));
  const nowMs = deps.now().getTime();
  const hit = remembered.get(token);
  if (hit && hit.expiresAtMs > nowMs) return hit.sessionId;
  try {
    const { payload } = await jwtVerify(token, signingKey(deps), {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: deps.now(),
    });
    if (!payload.sub || payload.exp === undefined) return null;
    if (remembered.size >= MAX_REMEMBERED_TOKENS) remembered.clear();
    remembered.set(token, { sessionId: payload.sub, expiresAtMs: payload.exp * 1000 });
    return payload.sub;
  } catch {
    return null;
  }
}

// Read on every authenticated request: the session and its account in one query (its rows mapped by db/prepared.ts).
const sessionFields = {
  id: sessions.id,
  userId: sessions.userId,
  expiresAt: sessions.expiresAt,
  via: sessions.via,
  username: users.username,
  role: users.role,
  enabled: users.enabled,
  nodeScope: users.nodeScope,
};
const sessionQuery = preparedPerDb((db: AppDeps['db']) =>
  mappedRows(
    db
      .select(sessionFields)
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(eq(sessions.id, sql.placeholder('id')))
      .prepare(),
    sessionFields,
  ),
);

type SessionRow = Awaited<ReturnType<ReturnType<typeof sessionQuery>['all']>>[number];

/** The session row of `id` (the primary key: one row at most). */
async function sessionRow(db: AppDeps['db'], id: string): Promise<SessionRow | undefined> {
  return (await sessionQuery(db).all({ id }))[0];
}

/**
 * The live session row behind a session id, or null when it was ended, has expired or its account is disabled
 * (disabling deletes the account's sessions too: this is the second lock).
 */
async function activeSession(deps: AppDeps, sessionId: string): Promise<SessionRow | null> {
  const row = await sessionRow(deps.db, sessionId);
  if (!row?.enabled || Date.parse(row.expiresAt) <= deps.now().getTime()) return null;
  return row;
}

/** The session behind a token, or null when the token is forged, expired or its session was ended. */
export async function verifySessionToken(deps: AppDeps, token: string): Promise<SessionIdentity | null> {
  const sessionId = await sessionIdOf(deps, token);
  if (!sessionId) return null;
  const row = await activeSession(deps, sessionId);
  if (!row) return null;
  return {
    sessionId: row.id,
    userId: row.userId,
    username: row.username,
    role: row.role,
    via: row.via,
    expiresAtMs: Date.parse(row.expiresAt),
    nodeScope: effectiveNodeScope(row.role, row.nodeScope),
  };
}

/** When the session ends (ms since the epoch), or null when it was ended already (or its account disabled). */
export async function sessionExpiresAtMs(deps: AppDeps, sessionId: string): Promise<number | null> {
  const row = await sessionRow(deps.db, sessionId);
  return row?.enabled ? Date.parse(row.expiresAt) : null;
}

/** Whole seconds the session has left (0 when it has ended). */
export async function sessionSecondsLeft(deps: AppDeps, sessionId: string): Promise<number> {
  const row = await activeSession(deps, sessionId);
  return row ? Math.max(0, Math.floor((Date.parse(row.expiresAt) - deps.now().getTime()) / 1000)) : 0;
}

/**
 * Announced on the database after sessions were deleted, so every other gateway ends their event streams
 * (session-streams.ts). No payload: a session id is not for a channel any database session may LISTEN to.
 */
export const SESSIONS_TOPIC = 'sessions';

/**
 * Tells the other gateways that sessions ended. The rows are already gone, so requests anywhere are refused; should
 * the announcement fail (the database just went away), their event streams end with their next recheck instead.
 */
export async function announceEnded(deps: AppDeps): Promise<void> {
  await deps.db.announce(SESSIONS_TOPIC).catch(() => undefined);
}

export async function deleteSession(deps: AppDeps, sessionId: string): Promise<void> {
  await deps.db.write(async (tx) => await tx.delete(sessions).where(eq(sessions.id, sessionId)).run());
  await announceEnded(deps);
}

/**
 * Ends every session of an account inside the caller's write (disabled, its second factor reset); the caller then
 * announces (`announceEnded`) so that other gateways end their streams.
 */
export async function deleteAccountSessions(tx: Tx, userId: number): Promise<void> {
  await tx.delete(sessions).where(eq(sessions.userId, userId)).run();
}

export async function deleteOtherSessions(deps: AppDeps, userId: number, keepSessionId: string): Promise<void> {
  await deps.db.write(
    async (tx) =>
      await tx
        .delete(sessions)
        .where(and(eq(sessions.userId, userId), ne(sessions.id, keepSessionId)))
        .run(),
  );
  await announceEnded(deps);
}
