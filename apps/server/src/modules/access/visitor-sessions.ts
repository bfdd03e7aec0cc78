import { randomBytes } from 'node:crypto';
import { and, count, desc, eq, gt, inArray, isNull, lt } from 'drizzle-orm';
import type { ListResponse, PageQuery, VisitorSession } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { ACCESS_KEY_ID, accessCookieKey, type AccessPolicyRow } from '../../db/access-state.js';
import { accessSessions } from '../../db/schema.js';
import { applyChanges } from '../../dataplane-apply.js';
import { notFound } from '../../errors.js';
import { cookieGroups, headerSafe, signAccessCookie, type CookiePayload } from './cookie.js';
import { effectivePolicyOf, findHttpService } from './policies.js';
import { toVisitorSession } from './present.js';

// Visitor sessions: made by the sign-in exchange, listed and revoked through the API. A session is a row (for the
// console and revocation) and a signed cookie (what nginx checks, on every gateway, with no look-up).

export interface NewSession {
  policy: AccessPolicyRow;
  serviceId: number;
  host: string;
  method: 'sso' | 'password' | 'share';
  shareLinkId?: number;
  /** Share links: the path the session is kept to, and the link's own expiry. */
  pathPrefix?: string | null;
  notAfter?: string | null;
  user?: string | null;
  email?: string | null;
  groups?: readonly string[];
  address: string;
}

/** Makes a session and its cookie value; expired rows go in the same write (no timer needed). */
export async function createVisitorSession(
  deps: Pick<AppDeps, 'db' | 'now' | 'secrets'>,
  session: NewSession,
): Promise<{ cookie: string; maxAge: number }> {
  const now = deps.now();
  let expiresMs = now.getTime() + session.policy.sessionSeconds * 1000;
  if (session.notAfter) expiresMs = Math.min(expiresMs, Date.parse(session.notAfter));
  const expiresAt = new Date(expiresMs).toISOString();
  const sid = randomBytes(16).toString('base64url');
  const groups = cookieGroups(session.groups ?? []);
  const user = session.user ? headerSafe(session.user) : null;
  const email = session.email ? headerSafe(session.email) : null;
  await deps.db.write(async (tx) => {
    await tx.delete(accessSessions).where(lt(accessSessions.expiresAt, now.toISOString())).run();
    await tx
      .insert(accessSessions)
      .values({
        sid,
        policyId: session.policy.id,
        httpServiceId: session.serviceId,
        host: session.host,
        method: session.method,
        shareLinkId: session.shareLinkId ?? null,
        subject: user,
        email,
        groups,
        address: session.address,
        expiresAt,
      })
      .run();
  });
  const payload: CookiePayload = {
    s: sid,
    p: session.policy.id,
    e: session.policy.epoch,
    x: Math.floor(expiresMs / 1000),
    ...(user ? { u: user } : {}),
    ...(email ? { m: email } : {}),
    ...(groups.length > 0 ? { g: groups } : {}),
    ...(session.pathPrefix ? { a: session.pathPrefix } : {}),
  };
  return {
    cookie: signAccessCookie(accessCookieKey(deps.secrets), ACCESS_KEY_ID, session.host, payload),
    maxAge: Math.max(1, Math.floor((expiresMs - now.getTime()) / 1000)),
  };
}

/** Revokes sessions by id in the cookie (sign-out); true when one was live. */
export async function revokeSessionsBySid(deps: AppDeps, sids: readonly string[]): Promise<boolean> {
  if (sids.length === 0) return false;
  const now = deps.now().toISOString();
  const revoked = await deps.db.write(
    async (tx) =>
      await tx
        .update(accessSessions)
        .set({ revokedAt: now })
        .where(and(inArray(accessSessions.sid, [...sids]), isNull(accessSessions.revokedAt)))
        .returning({ id: accessSessions.id })
        .all(),
  );
  if (revoked.length > 0) await applyChanges(deps);
  return revoked.length > 0;
}

/** The sessions of the policy that applies to the service (its domain's sessions when it inherits), newest first. */
export async function listVisitorSessions(
  deps: Pick<AppDeps, 'db' | 'now'>,
  nodeId: number,
  serviceId: number,
  { page, limit }: PageQuery,
): Promise<ListResponse<VisitorSession>> {
  const service = await findHttpService(deps.db, nodeId, serviceId);
  const { row: policy } = await effectivePolicyOf(deps.db, service);
  if (policy === null) return { data: [], page, limit, total: 0 };
  const where = and(eq(accessSessions.policyId, policy.id), gt(accessSessions.expiresAt, deps.now().toISOString()));
  const rows = await deps.db
    .select()
    .from(accessSessions)
    .where(where)
    .orderBy(desc(accessSessions.id))
    .limit(limit)
    .offset((page - 1) * limit)
    .all();
  const total = (await deps.db.select({ n: count() }).from(accessSessions).where(where).get())?.n ?? 0;
  return { data: rows.map(toVisitorSession), page, limit, total };
}

export async function revokeVisitorSession(
  deps: AppDeps,
  nodeId: number,
  serviceId: number,
  sessionId: number,
): Promise<VisitorSession> {
  const service = await findHttpService(deps.db, nodeId, serviceId);
  const { row: policy } = await effectivePolicyOf(deps.db, service);
  const now = deps.now().toISOString();
  const row = await deps.db.write(async (tx) => {
    const session = await tx.select().from(accessSessions).where(eq(accessSessions.id, sessionId)).get();
    if (!session || policy === null || session.policyId !== policy.id) return null;
    if (session.revokedAt !== null) return session;
    return await tx
      .update(accessSessions)
      .set({ revokedAt: now })
      .where(eq(accessSessions.id, sessionId))
      .returning()
      .get();
  });
  if (!row) throw notFound('Visitor session');
  await applyChanges(deps);
  return toVisitorSession(row);
}
