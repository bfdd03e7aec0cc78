import { count, eq } from 'drizzle-orm';
import {
  accessMessages,
  accountMessages,
  type ConsoleProvider,
  type IdentityProvider,
  type IdentityProviderCreate,
  type IdentityProviderDiscovery,
  type IdentityProviderUpdate,
  type ListResponse,
  type PageQuery,
  type ProviderConsoleUpdate,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ReadDb } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { accessPolicies, identityProviders, users } from '../../db/schema.js';
import { applyChanges } from '../../dataplane-apply.js';
import { AppError, badRequest, fieldError, notFound } from '../../errors.js';
import { authorize, type Actor } from '../accounts/policy.js';
import { discoverIssuer, forgetProvider } from './oidc.js';
import { toIdentityProvider } from './present.js';

// The OpenID Connect providers visitors sign in with (the `settings` permission: admins and owners), and which of them
// sign accounts in to the console (docs/api.md "Accounts and roles": the `accounts` permission, owners). The client
// secret is encrypted with the secret key and never returned; a provider a policy or an account uses cannot be deleted.
// A provider that signs accounts in is the owners' to change at all: its issuer, client or group claim decides who
// becomes whom.

const DEFAULT_SCOPES = ['openid', 'email', 'profile'];

const takenMessage = (name: string): string => `An identity provider named ${name} already exists`;

async function usesOf(db: ReadDb, id: number): Promise<number> {
  return (await db.select({ n: count() }).from(accessPolicies).where(eq(accessPolicies.providerId, id)).get())?.n ?? 0;
}

async function accountsOf(db: ReadDb, id: number): Promise<number> {
  return (await db.select({ n: count() }).from(users).where(eq(users.identityProviderId, id)).get())?.n ?? 0;
}

export async function getIdentityProvider(deps: Pick<AppDeps, 'db'>, id: number): Promise<IdentityProvider> {
  const row = await deps.db.select().from(identityProviders).where(eq(identityProviders.id, id)).get();
  if (!row) throw notFound('Identity provider');
  return toIdentityProvider(row, await usesOf(deps.db, id), await accountsOf(deps.db, id));
}

/** A provider that signs accounts in to the console, or is bound to accounts, needs an owner to change it. */
function assertMayChange(actor: Actor, row: typeof identityProviders.$inferSelect, accounts: number): void {
  if (!row.consoleSignIn && accounts === 0) return;
  try {
    authorize(actor, 'accounts');
  } catch (error) {
    if (error instanceof AppError) throw new AppError('forbidden', accountMessages.consoleProvider);
    throw error;
  }
}

export async function listIdentityProviders(
  deps: Pick<AppDeps, 'db'>,
  { page, limit }: PageQuery,
): Promise<ListResponse<IdentityProvider>> {
  const rows = await deps.db
    .select()
    .from(identityProviders)
    .orderBy(identityProviders.id)
    .limit(limit)
    .offset((page - 1) * limit)
    .all();
  const uses = await deps.db
    .select({ id: accessPolicies.providerId, n: count() })
    .from(accessPolicies)
    .groupBy(accessPolicies.providerId)
    .all();
  const byId = new Map(uses.map((row) => [row.id, row.n]));
  const bound = await deps.db
    .select({ id: users.identityProviderId, n: count() })
    .from(users)
    .groupBy(users.identityProviderId)
    .all();
  const accountsById = new Map(bound.map((row) => [row.id, row.n]));
  const total = (await deps.db.select({ n: count() }).from(identityProviders).get())?.n ?? 0;
  return {
    data: rows.map((row) => toIdentityProvider(row, byId.get(row.id) ?? 0, accountsById.get(row.id) ?? 0)),
    page,
    limit,
    total,
  };
}

/** The providers the console's login page offers: names only (the page is public). */
export async function listConsoleProviders(deps: Pick<AppDeps, 'db'>): Promise<{ data: ConsoleProvider[] }> {
  const rows = await deps.db
    .select({ id: identityProviders.id, name: identityProviders.name })
    .from(identityProviders)
    .where(eq(identityProviders.consoleSignIn, true))
    .orderBy(identityProviders.name)
    .all();
  return { data: rows };
}

/** Whether a provider signs accounts in to the console, and the roles its groups get on a first sign-in. */
export async function updateProviderConsoleSignIn(
  deps: AppDeps,
  id: number,
  body: ProviderConsoleUpdate,
): Promise<IdentityProvider> {
  const changed = await deps.db.write(async (tx) => {
    const rows = await tx
      .update(identityProviders)
      .set({
        ...(body.consoleSignIn !== undefined && { consoleSignIn: body.consoleSignIn }),
        ...(body.groupRoles !== undefined && {
          consoleGroupRoles: body.groupRoles.map(({ group, role }) => ({ group, role })),
        }),
        updatedAt: deps.now().toISOString(),
      })
      .where(eq(identityProviders.id, id))
      .returning({ id: identityProviders.id })
      .all();
    return rows.length;
  });
  if (changed === 0) throw notFound('Identity provider');
  return await getIdentityProvider(deps, id);
}

const withOpenId = (scopes: readonly string[]): string[] => [...new Set(['openid', ...scopes])];

export async function createIdentityProvider(deps: AppDeps, body: IdentityProviderCreate): Promise<IdentityProvider> {
  try {
    const row = await deps.db.write(
      async (tx) =>
        await tx
          .insert(identityProviders)
          .values({
            name: body.name,
            issuer: body.issuer,
            clientId: body.clientId,
            clientSecretEnc: body.clientSecret ? deps.secrets.encrypt(body.clientSecret) : null,
            scopes: withOpenId(body.scopes ?? DEFAULT_SCOPES),
            groupsClaim: body.groupsClaim ?? 'groups',
          })
          .returning()
          .get(),
    );
    return toIdentityProvider(row, 0, 0);
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('name', takenMessage(body.name));
    throw error;
  }
}

export async function updateIdentityProvider(
  deps: AppDeps,
  actor: Actor,
  id: number,
  body: IdentityProviderUpdate,
): Promise<IdentityProvider> {
  const current = await deps.db.select().from(identityProviders).where(eq(identityProviders.id, id)).get();
  if (!current) throw notFound('Identity provider');
  assertMayChange(actor, current, await accountsOf(deps.db, id));
  const issuerChanged = body.issuer !== undefined && body.issuer !== current.issuer;
  try {
    await deps.db.write(async (tx) => {
      await tx
        .update(identityProviders)
        .set({
          ...(body.name !== undefined && { name: body.name }),
          ...(body.issuer !== undefined && { issuer: body.issuer }),
          ...(body.clientId !== undefined && { clientId: body.clientId }),
          ...(body.clientSecret !== undefined && {
            clientSecretEnc: body.clientSecret === null ? null : deps.secrets.encrypt(body.clientSecret),
          }),
          ...(body.scopes !== undefined && { scopes: withOpenId(body.scopes) }),
          ...(body.groupsClaim !== undefined && { groupsClaim: body.groupsClaim }),
          updatedAt: deps.now().toISOString(),
        })
        .where(eq(identityProviders.id, id))
        .run();
      // Another issuer is another set of accounts: sessions made through the old one end (a new epoch).
      if (issuerChanged) {
        const users = await tx
          .select({ id: accessPolicies.id, epoch: accessPolicies.epoch })
          .from(accessPolicies)
          .where(eq(accessPolicies.providerId, id))
          .all();
        for (const policy of users)
          await tx
            .update(accessPolicies)
            .set({ epoch: policy.epoch + 1 })
            .where(eq(accessPolicies.id, policy.id))
            .run();
      }
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('name', takenMessage(body.name ?? current.name));
    throw error;
  }
  forgetProvider(deps.secrets, id);
  if (issuerChanged) await applyChanges(deps);
  return await getIdentityProvider(deps, id);
}

export async function deleteIdentityProvider(deps: AppDeps, actor: Actor, id: number): Promise<void> {
  const current = await deps.db.select().from(identityProviders).where(eq(identityProviders.id, id)).get();
  if (!current) throw notFound('Identity provider');
  const accounts = await accountsOf(deps.db, id);
  assertMayChange(actor, current, accounts);
  const uses = await usesOf(deps.db, id);
  if (uses > 0) throw badRequest(accessMessages.providerInUse(current.name, uses));
  if (accounts > 0)
    throw badRequest(
      `${current.name} is bound to ${accounts} ${accounts === 1 ? 'account' : 'accounts'}: unbind them (Accounts) first`,
    );
  await deps.db.write(async (tx) => {
    await tx.delete(identityProviders).where(eq(identityProviders.id, id)).run();
  });
  forgetProvider(deps.secrets, id);
}

/** "Test connection": 422 on `issuer` with the reason when discovery fails. */
export async function discoverIdentityProvider(issuer: string): Promise<IdentityProviderDiscovery> {
  try {
    return await discoverIssuer(issuer);
  } catch (error) {
    const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : '';
    throw fieldError('issuer', `Discovery at ${issuer} failed: ${reason || 'no answer'}`.slice(0, 400));
  }
}
