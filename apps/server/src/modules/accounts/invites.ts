import { createHash, randomBytes } from 'node:crypto';
import { and, count, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import {
  accountLimits,
  accountMessages,
  type Invite,
  type InviteAccept,
  type InviteAccepted,
  type InviteCreate,
  type InviteCreated,
  type InviteInfo,
  type ListResponse,
  type PageQuery,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ReadDb } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { accountInvites, users } from '../../db/schema.js';
import { badRequest, fieldError, notFound } from '../../errors.js';
import { consolePublicUrl } from '../system/console-certificate.js';
import type { SessionIdentity } from '../auth/sessions.js';
import { insertAccount, type AccountRow } from './repository.js';

// Invites (docs/api.md "Accounts and roles"): an owner names the account (username and role); the link carries a
// random token (256 bits) in its fragment, so it reaches neither a server log nor a Referer header; the database
// keeps only its SHA-256. Taking the invite marks it used in the same write that makes the account: one link, one
// account, however many tabs race. An expired or used link is refused and says so.

type InviteRow = typeof accountInvites.$inferSelect;

/** Taken or expired invites are kept this long (the list shows expired ones), then pruned at the next invite. */
const KEEP_DONE_MS = 30 * 24 * 3600 * 1000;

export const hashInviteToken = (token: string): string => createHash('sha256').update(token).digest('base64url');

/** The console page an invite link opens; the token is the fragment. */
export const inviteUrl = (config: AppDeps['config'], token: string): string =>
  `${consolePublicUrl(config)}/invite#${token}`;

function toInvite(row: InviteRow, createdBy: string | null, now: Date): Invite {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    createdBy,
    expiresAt: row.expiresAt,
    state: Date.parse(row.expiresAt) <= now.getTime() ? 'expired' : 'pending',
    created_at: row.createdAt,
  };
}

/** Whether the name is an account's (any case) or a pending invite's. */
async function isUsernameTaken(db: ReadDb, username: string, nowIso: string): Promise<boolean> {
  const account = await db
    .select({ n: count() })
    .from(users)
    .where(eq(sql`lower(${users.username})`, username.toLowerCase()))
    .get();
  if ((account?.n ?? 0) > 0) return true;
  const invite = await db
    .select({ n: count() })
    .from(accountInvites)
    .where(
      and(eq(accountInvites.username, username), isNull(accountInvites.usedAt), gt(accountInvites.expiresAt, nowIso)),
    )
    .get();
  return (invite?.n ?? 0) > 0;
}

export async function createInvite(deps: AppDeps, actor: SessionIdentity, body: InviteCreate): Promise<InviteCreated> {
  const now = deps.now();
  const token = randomBytes(32).toString('base64url');
  const ttl = body.ttl ?? accountLimits.inviteTtlDefaultSeconds;
  const row = await deps.db.write(async (tx) => {
    if (await isUsernameTaken(tx, body.username, now.toISOString()))
      throw fieldError('username', accountMessages.usernameTaken(body.username));
    const pruneBefore = new Date(now.getTime() - KEEP_DONE_MS).toISOString();
    await tx
      .delete(accountInvites)
      .where(or(lt(accountInvites.expiresAt, pruneBefore), lt(accountInvites.usedAt, pruneBefore)))
      .run();
    return await tx
      .insert(accountInvites)
      .values({
        tokenHash: hashInviteToken(token),
        username: body.username,
        role: body.role,
        createdBy: actor.userId,
        expiresAt: new Date(now.getTime() + ttl * 1000).toISOString(),
      })
      .returning()
      .get();
  });
  return { ...toInvite(row, actor.username, now), url: inviteUrl(deps.config, token) };
}

/** Invites not taken yet (pending and expired), newest first. */
export async function listInvites(deps: AppDeps, { page, limit }: PageQuery): Promise<ListResponse<Invite>> {
  const open = isNull(accountInvites.usedAt);
  const rows = await deps.db
    .select({ row: accountInvites, createdBy: users.username })
    .from(accountInvites)
    .leftJoin(users, eq(users.id, accountInvites.createdBy))
    .where(open)
    .orderBy(desc(accountInvites.id))
    .limit(limit)
    .offset((page - 1) * limit)
    .all();
  const total = (await deps.db.select({ n: count() }).from(accountInvites).where(open).get())?.n ?? 0;
  const now = deps.now();
  return { data: rows.map(({ row, createdBy }) => toInvite(row, createdBy, now)), page, limit, total };
}

export async function getInvite(deps: AppDeps, id: number): Promise<Invite> {
  const found = await deps.db
    .select({ row: accountInvites, createdBy: users.username })
    .from(accountInvites)
    .leftJoin(users, eq(users.id, accountInvites.createdBy))
    .where(eq(accountInvites.id, id))
    .get();
  if (!found) throw notFound('Invite');
  return toInvite(found.row, found.createdBy, deps.now());
}

/** Revokes an invite not taken yet: its link then names nothing. */
export async function revokeInvite(deps: AppDeps, id: number): Promise<void> {
  const gone = await deps.db.write((tx) =>
    tx
      .delete(accountInvites)
      .where(and(eq(accountInvites.id, id), isNull(accountInvites.usedAt)))
      .returning({ id: accountInvites.id }),
  );
  if (gone.length === 0) throw notFound('Invite');
}

/** The live invite a token names: 400 with the reason otherwise (used, revoked and unknown read alike). */
async function liveInvite(deps: AppDeps, token: string): Promise<InviteRow> {
  const row = await deps.db
    .select()
    .from(accountInvites)
    .where(eq(accountInvites.tokenHash, hashInviteToken(token)))
    .get();
  if (!row || row.usedAt !== null) throw badRequest(accountMessages.inviteInvalid);
  if (Date.parse(row.expiresAt) <= deps.now().getTime()) throw badRequest(accountMessages.inviteExpired);
  return row;
}

export async function inviteInfo(deps: AppDeps, token: string): Promise<InviteInfo> {
  const row = await liveInvite(deps, token);
  return { username: row.username, role: row.role, expiresAt: row.expiresAt };
}

/**
 * Takes an invite: `hash` turns the chosen password into its stored hash (the sign-in module's hashing cap). The
 * invite is marked used by the same write that makes the account, and only while it is unused and unexpired.
 */
export async function acceptInvite(
  deps: AppDeps,
  body: InviteAccept,
  hash: (password: string) => Promise<string>,
): Promise<{ account: AccountRow; accepted: InviteAccepted; invitedBy: number | null }> {
  const live = await liveInvite(deps, body.token);
  const passwordHash = await hash(body.password);
  const nowIso = deps.now().toISOString();
  try {
    return await deps.db.write(async (tx) => {
      const taken = await tx
        .update(accountInvites)
        .set({ usedAt: nowIso, updatedAt: nowIso })
        .where(
          and(
            eq(accountInvites.tokenHash, hashInviteToken(body.token)),
            isNull(accountInvites.usedAt),
            gt(accountInvites.expiresAt, nowIso),
          ),
        )
        .returning()
        .all();
      const invite = taken[0];
      if (!invite) throw badRequest(accountMessages.inviteInvalid);
      const account = await insertAccount(tx, {
        username: invite.username,
        passwordHash,
        role: invite.role,
        passwordSignIn: true,
      });
      return { account, accepted: { username: invite.username, role: invite.role }, invitedBy: invite.createdBy };
    });
  } catch (error) {
    // An account of that name was made meanwhile (a first sign-in through a provider): the invite stays unused.
    if (isUniqueViolation(error)) throw badRequest(accountMessages.usernameTaken(live.username));
    throw error;
  }
}
