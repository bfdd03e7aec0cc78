import { count, eq, inArray } from 'drizzle-orm';
import {
  accountMessages,
  ROLES,
  rolePermissions,
  type Account,
  type AccountUpdate,
  type CurrentAccount,
  type ListResponse,
  type PageQuery,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ReadDb } from '../../db/client.js';
import { identityProviders, nodes, recoveryCodes, users } from '../../db/schema.js';
import { badRequest, fieldError, notFound } from '../../errors.js';
import { voidChallenges } from '../auth/challenges.js';
import { announceEnded, deleteAccountSessions, type SessionIdentity } from '../auth/sessions.js';
import { effectiveNodeScope } from './node-scope.js';
import { toAccount } from './present.js';
import { findAccount, otherEnabledOwners, type AccountRow } from './repository.js';

// Accounts, managed by owners (docs/api.md "Accounts and roles"): role, enabled, password sign-in, a lost second
// factor reset, an identity unbound, deletion. The route's permission (`accounts`) is checked by the policy before
// any of this runs; what only the rows can tell is checked here, inside the write: never the last owner, never one's
// own account (that is Settings'), never an account locked out of every way in. Disabling, demoting, deleting and a
// reset second factor end the account's sessions in the same write and announce it, so every gateway refuses them at
// once and ends their event streams within 1 s.

async function providerNameOf(db: ReadDb, id: number | null): Promise<string | null> {
  if (id === null) return null;
  const row = await db
    .select({ name: identityProviders.name })
    .from(identityProviders)
    .where(eq(identityProviders.id, id))
    .get();
  return row?.name ?? null;
}

export async function getAccount(deps: Pick<AppDeps, 'db'>, id: number): Promise<Account> {
  const row = await findAccount(deps.db, id);
  if (!row) throw notFound('Account');
  return toAccount(row, await providerNameOf(deps.db, row.identityProviderId));
}

export async function listAccounts(
  deps: Pick<AppDeps, 'db'>,
  { page, limit }: PageQuery,
): Promise<ListResponse<Account>> {
  const rows = await deps.db
    .select({ row: users, providerName: identityProviders.name })
    .from(users)
    .leftJoin(identityProviders, eq(identityProviders.id, users.identityProviderId))
    .orderBy(users.id)
    .limit(limit)
    .offset((page - 1) * limit)
    .all();
  const total = (await deps.db.select({ n: count() }).from(users).get())?.n ?? 0;
  return { data: rows.map(({ row, providerName }) => toAccount(row, providerName)), page, limit, total };
}

/** Who is signed in, and what the role may do (the console hides the rest). */
export async function currentAccount(deps: Pick<AppDeps, 'db'>, session: SessionIdentity): Promise<CurrentAccount> {
  const account = await getAccount(deps, session.userId);
  const { id, username, role, passwordSignIn, twoFactor, identity } = account;
  return {
    id,
    username,
    role,
    passwordSignIn,
    twoFactor,
    identity,
    via: session.via,
    permissions: [...rolePermissions[role]],
    // The session's, read with its account: the scope that counts for this role (accounts/node-scope.ts).
    nodes: session.nodeScope === null ? null : [...session.nodeScope],
  };
}

/** The owners' own account is theirs to change in Settings; another owner acts on it here. */
function assertNotOwn(actor: SessionIdentity, id: number): void {
  if (actor.userId === id) throw badRequest(accountMessages.ownAccount);
}

/**
 * The node scope to store (accounts/node-scope.ts): the ids sorted without repeats, null for every node; a 422 on
 * `nodes` for an id that is no node (read inside the write, so a node deleted meanwhile is not kept).
 */
async function checkedNodeScope(tx: ReadDb, ids: readonly number[] | null): Promise<number[] | null> {
  if (ids === null || ids.length === 0) return null;
  const wanted = [...new Set(ids)].sort((a, b) => a - b);
  const found = new Set(
    (await tx.select({ id: nodes.id }).from(nodes).where(inArray(nodes.id, wanted)).all()).map((row) => row.id),
  );
  const unknown = wanted.filter((id) => !found.has(id));
  if (unknown.length > 0) throw fieldError('nodes', accountMessages.unknownNodes(unknown));
  return wanted;
}

/** Whether scope `after` lets see less than `before` (null: every node). */
function isNarrower(after: readonly number[] | null, before: readonly number[] | null): boolean {
  if (after === null) return false;
  return before === null || before.some((id) => !after.includes(id));
}

/** Whether `row` is an owner the gateway could not lose: no other enabled owner. */
async function isLastOwner(tx: ReadDb, row: AccountRow): Promise<boolean> {
  return row.role === 'owner' && (await otherEnabledOwners(tx, row.id)) === 0;
}

export async function updateAccount(
  deps: AppDeps,
  actor: SessionIdentity,
  id: number,
  body: AccountUpdate,
): Promise<Account> {
  const endsSessions = await deps.db.write(async (tx) => {
    const row = await findAccount(tx, id);
    if (!row) throw notFound('Account');
    const disabling = body.enabled === false && row.enabled;
    const demoting = body.role !== undefined && body.role !== 'owner' && row.role === 'owner';
    if (disabling) assertNotOwn(actor, id);
    if ((disabling || demoting) && (await isLastOwner(tx, row))) throw badRequest(accountMessages.lastOwner);
    if (body.passwordSignIn === false && row.identitySubject === null)
      throw badRequest(accountMessages.passwordSignInNeedsIdentity);
    const nodeScope = body.nodes === undefined ? undefined : await checkedNodeScope(tx, body.nodes);
    await tx
      .update(users)
      .set({
        ...(body.role !== undefined && { role: body.role }),
        ...(body.enabled !== undefined && { enabled: body.enabled }),
        ...(body.passwordSignIn !== undefined && { passwordSignIn: body.passwordSignIn }),
        ...(nodeScope !== undefined && { nodeScope }),
        updatedAt: deps.now().toISOString(),
      })
      .where(eq(users.id, id))
      .run();
    // A disabled or demoted account's sessions end with the change: whoever holds one signs in again and gets
    // exactly the new role (a promotion takes effect on the next request without that). A narrowed node scope is a
    // demotion too: an event stream opened before it (a node's, the node list's) must not go on showing a node.
    const lowered = body.role !== undefined && ROLES.indexOf(body.role) > ROLES.indexOf(row.role);
    const narrowed = isNarrower(
      effectiveNodeScope(body.role ?? row.role, nodeScope === undefined ? row.nodeScope : nodeScope),
      effectiveNodeScope(row.role, row.nodeScope),
    );
    if (disabling || lowered || narrowed) {
      await deleteAccountSessions(tx, id);
      await voidChallenges(tx, id);
      return true;
    }
    return false;
  });
  if (endsSessions) await announceEnded(deps);
  return await getAccount(deps, id);
}

export async function deleteAccount(deps: AppDeps, actor: SessionIdentity, id: number): Promise<void> {
  assertNotOwn(actor, id);
  await deps.db.write(async (tx) => {
    const row = await findAccount(tx, id);
    if (!row) throw notFound('Account');
    if (await isLastOwner(tx, row)) throw badRequest(accountMessages.lastOwner);
    // Sessions, challenges and recovery codes go with the row (foreign keys); its audit entries stay, by name and id.
    await tx.delete(users).where(eq(users.id, id)).run();
  });
  await announceEnded(deps);
}

/** A lost authenticator: another owner turns the account's two-factor sign-in off; its sessions end. */
export async function resetAccountTwoFactor(deps: AppDeps, actor: SessionIdentity, id: number): Promise<Account> {
  assertNotOwn(actor, id);
  await deps.db.write(async (tx) => {
    const row = await findAccount(tx, id);
    if (!row) throw notFound('Account');
    if (row.totpSecretEnc === null) throw badRequest(accountMessages.twoFactorNotOn);
    await tx
      .update(users)
      .set({ totpSecretEnc: null, totpPendingSecretEnc: null, totpLastStep: null, updatedAt: deps.now().toISOString() })
      .where(eq(users.id, id))
      .run();
    await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, id)).run();
    await voidChallenges(tx, id);
    // Whoever held a session may be whoever has the lost device.
    await deleteAccountSessions(tx, id);
  });
  await announceEnded(deps);
  return await getAccount(deps, id);
}

/** Unbinds the account's provider identity; refused while that identity is its only way in. */
export async function unlinkAccountIdentity(deps: AppDeps, id: number): Promise<Account> {
  await deps.db.write(async (tx) => {
    const row = await findAccount(tx, id);
    if (!row) throw notFound('Account');
    if (row.identitySubject === null) throw badRequest('This account has no identity of a provider bound to it');
    if (!row.passwordSignIn) throw badRequest(accountMessages.unlinkWouldLockOut);
    await tx
      .update(users)
      .set({
        identityProviderId: null,
        identityIssuer: null,
        identitySubject: null,
        identityEmail: null,
        updatedAt: deps.now().toISOString(),
      })
      .where(eq(users.id, id))
      .run();
  });
  return await getAccount(deps, id);
}
