import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import {
  accountMessages,
  highestRole,
  roleLabels,
  type IdentityLink,
  type LoginResponse,
  type SecondFactorChallenge,
  type SsoFinished,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { isUniqueViolation } from '../../db/errors.js';
import { identityProviders, users } from '../../db/schema.js';
import { AppError, badRequest } from '../../errors.js';
import { finishSignIn, providerConfig, startSignIn, type OidcIdentity } from '../access/oidc.js';
import { insertAccount, type AccountRow } from '../accounts/repository.js';
import { consolePublicUrl } from '../system/console-certificate.js';
import { accountActor, authEvent, passwordAccepted, recheckFailed, type Client } from './auth-audit.js';
import type { ChallengeStore } from './challenges.js';
import { hashPassword } from './passwords.js';
import { assertMaySignIn, startSession, type PasswordChecks, type ReportFailure } from './service.js';
import type { SessionIdentity } from './sessions.js';
import { requirePassword } from './two-factor.js';

// Signing in to the console through an identity provider (docs/api.md "Accounts and roles"): the OpenID
// Connect providers of visitor access (access/oidc.ts: discovery, code flow with PKCE, state and nonce) whose owners
// let them sign accounts in. The console's page asks for the provider's URL (`start`), the provider sends the browser
// back to `<console>/login/callback`, and the page hands the query it got to `finish`. What the start must remember
// travels encrypted in an HttpOnly cookie of 10 minutes, so the callback may reach any gateway.
//
// An account is matched by its bound identity: the provider's row, its issuer as it was when bound, and the subject
// (never the email, which a provider may let users change). An identity is bound by its account (Settings: the
// password again, then the provider) or, for a member of a group the owners gave a role, made on a first sign-in.
// The account's own second factor is asked after the provider too.

/** Seconds between the start and the provider's redirect back. */
export const SSO_STATE_SECONDS = 600;

type ProviderRow = typeof identityProviders.$inferSelect;

interface SsoState {
  state: string;
  nonce: string;
  verifier: string;
  providerId: number;
  /** `link`: bind the identity to `accountId` (who gave the password at the start). */
  purpose: 'sign-in' | 'link';
  accountId: number | null;
  expires: number;
}

const redirectUri = (config: AppDeps['config']): string => `${consolePublicUrl(config)}/login/callback`;

/** How a session signed in through a provider is named (sessions, the audit log, "Signed in as"). */
export const ssoVia = (provider: { name: string }): string => `single sign-on (${provider.name})`;

async function consoleProvider(deps: AppDeps, id: number): Promise<ProviderRow> {
  const row = await deps.db.select().from(identityProviders).where(eq(identityProviders.id, id)).get();
  if (!row?.consoleSignIn) throw badRequest(accountMessages.providerNotForConsole);
  return row;
}

async function start(
  deps: AppDeps,
  provider: ProviderRow,
  purpose: SsoState['purpose'],
  accountId: number | null,
): Promise<{ url: string; stateCookie: string }> {
  let started;
  try {
    const config = await providerConfig(provider, deps.secrets, deps.now().getTime());
    started = await startSignIn(config, provider, redirectUri(deps.config));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw badRequest(`${provider.name} could not be reached: ${reason}`.slice(0, 400));
  }
  const state: SsoState = {
    state: started.state,
    nonce: started.nonce,
    verifier: started.verifier,
    providerId: provider.id,
    purpose,
    accountId,
    expires: deps.now().getTime() + SSO_STATE_SECONDS * 1000,
  };
  return { url: started.url, stateCookie: deps.secrets.encrypt(JSON.stringify(state)) };
}

/** The login page's button: the provider's authorization URL and the state cookie. */
export async function startSso(deps: AppDeps, providerId: number): Promise<{ url: string; stateCookie: string }> {
  return await start(deps, await consoleProvider(deps, providerId), 'sign-in', null);
}

/** Settings: bind one's own account to an identity of the provider. The password again, as for two-factor setup. */
export async function startIdentityLink(
  deps: AppDeps,
  checks: PasswordChecks,
  client: Client,
  session: SessionIdentity,
  body: IdentityLink,
): Promise<{ url: string; stateCookie: string }> {
  const provider = await consoleProvider(deps, body.providerId);
  const user = await deps.db.select().from(users).where(eq(users.id, session.userId)).get();
  if (!user) throw new AppError('unauthorized', 'Session ended');
  const report: ReportFailure = (reason) => recheckFailed(deps, client, user, 'identity link', reason);
  await (await requirePassword(checks, client, user, body.password, report)).succeed();
  return await start(deps, provider, 'link', user.id);
}

function readState(deps: AppDeps, cookie: string | undefined): SsoState | null {
  if (!cookie) return null;
  try {
    const state = JSON.parse(deps.secrets.decrypt(cookie)) as SsoState;
    return state.expires > deps.now().getTime() ? state : null;
  } catch {
    return null;
  }
}

const EXPIRED = 'The sign-in through the identity provider has expired or was started elsewhere: start it again';

/** Who the provider says signed in; 401 with the reason when the exchange fails. */
async function identityOf(deps: AppDeps, provider: ProviderRow, state: SsoState, query: string): Promise<OidcIdentity> {
  if (!query.startsWith('?')) throw new AppError('unauthorized', EXPIRED);
  try {
    const config = await providerConfig(provider, deps.secrets, deps.now().getTime());
    return await finishSignIn(config, provider, new URL(`${redirectUri(deps.config)}${query}`), state);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new AppError('unauthorized', `Signing in through ${provider.name} failed: ${reason}`.slice(0, 400));
  }
}

/** The account bound to this identity of this provider (its issuer as bound: a changed issuer matches nobody). */
async function boundAccount(deps: AppDeps, provider: ProviderRow, subject: string): Promise<AccountRow | undefined> {
  return await deps.db
    .select()
    .from(users)
    .where(
      and(
        eq(users.identityProviderId, provider.id),
        eq(users.identityIssuer, provider.issuer),
        eq(users.identitySubject, subject),
      ),
    )
    .get();
}

const isUsername = (value: string): boolean => /^[a-z0-9._@+-]{1,64}$/.test(value);

/**
 * A first sign-in of someone the provider puts in a group the owners gave a role: the account is made (named by
 * the verified email, else the provider's username), bound to the identity, password sign-in off.
 */
async function provision(
  deps: AppDeps,
  client: Client,
  provider: ProviderRow,
  identity: OidcIdentity,
): Promise<AccountRow> {
  const who = identity.email ?? identity.name ?? identity.subject;
  const mapped = provider.consoleGroupRoles.filter((entry) => identity.groups.includes(entry.group));
  const role = highestRole(mapped.map((entry) => entry.role));
  if (role === null)
    throw new AppError(
      'forbidden',
      `No console account is bound to ${who} at ${provider.name}: ask an owner for an invite, then link the identity under Settings`,
    );
  if (identity.emailUnverified)
    throw new AppError('forbidden', `${provider.name} says the email ${who} is not verified: no account is made`);
  const username = (identity.email ?? identity.name ?? '').toLowerCase();
  if (!isUsername(username))
    throw new AppError('forbidden', `${provider.name} gave no email or username an account can be named by`);
  // A password nobody knows: this account signs in through the provider only (password sign-in is off).
  const passwordHash = await hashPassword(randomBytes(32).toString('base64url'));
  let account: AccountRow;
  try {
    account = await deps.db.write(async (tx) => {
      const taken = await tx
        .select({ id: users.id })
        .from(users)
        .where(eq(sql`lower(${users.username})`, username))
        .get();
      if (taken)
        throw new AppError(
          'forbidden',
          `An account named ${username} exists but is not bound to this identity: sign in with its password and link ${provider.name} under Settings`,
        );
      return await insertAccount(tx, {
        username,
        passwordHash,
        role,
        passwordSignIn: false,
        identity: {
          providerId: provider.id,
          issuer: provider.issuer,
          subject: identity.subject,
          email: identity.email,
        },
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('forbidden', `${who} was signed in meanwhile: sign in again`);
    throw error;
  }
  const groups = mapped.filter((entry) => entry.role === role).map((entry) => entry.group);
  await deps.audit.record({
    actor: accountActor(account, ssoVia(provider)),
    address: client.ip,
    action: 'account.create',
    target: { type: 'account', id: account.id, name: account.username },
    after: { username: account.username, role: account.role, passwordSignIn: false },
    detail: `first sign-in through ${provider.name}, member of ${groups.join(', ')}: ${roleLabels[role]}`,
  });
  return account;
}

/** The provider sent the browser back: a session (or the second factor's challenge), or the identity bound. */
export async function finishSso(
  deps: AppDeps,
  challenges: ChallengeStore,
  client: Client,
  stateCookie: string | undefined,
  query: string,
): Promise<SsoFinished> {
  const state = readState(deps, stateCookie);
  if (!state) throw new AppError('unauthorized', EXPIRED);
  const provider = await deps.db
    .select()
    .from(identityProviders)
    .where(eq(identityProviders.id, state.providerId))
    .get();
  if (!provider?.consoleSignIn) throw new AppError('unauthorized', accountMessages.providerNotForConsole);
  const identity = await identityOf(deps, provider, state, query);
  if (state.purpose === 'link') return await link(deps, client, provider, identity, state.accountId);
  const account =
    (await boundAccount(deps, provider, identity.subject)) ?? (await provision(deps, client, provider, identity));
  assertMaySignIn(account);
  await deps.db.write(async (tx) => {
    await tx.update(users).set({ identityEmail: identity.email }).where(eq(users.id, account.id)).run();
  });
  const via = ssoVia(provider);
  if (account.totpSecretEnc !== null) {
    const challenge: SecondFactorChallenge = { twoFactorRequired: true, ...(await challenges.issue(account.id, via)) };
    await passwordAccepted(deps, client, account);
    return challenge;
  }
  const session: LoginResponse = await startSession(deps, account.id, via);
  await authEvent(deps, client, account, 'sso', via);
  return session;
}

async function link(
  deps: AppDeps,
  client: Client,
  provider: ProviderRow,
  identity: OidcIdentity,
  accountId: number | null,
): Promise<SsoFinished> {
  const account =
    accountId === null ? undefined : await deps.db.select().from(users).where(eq(users.id, accountId)).get();
  if (!account) throw new AppError('unauthorized', EXPIRED);
  assertMaySignIn(account);
  try {
    await deps.db.write(async (tx) => {
      await tx
        .update(users)
        .set({
          identityProviderId: provider.id,
          identityIssuer: provider.issuer,
          identitySubject: identity.subject,
          identityEmail: identity.email,
          updatedAt: deps.now().toISOString(),
        })
        .where(eq(users.id, account.id))
        .run();
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw badRequest(`This identity of ${provider.name} is bound to another account already`);
    throw error;
  }
  await deps.audit.record({
    actor: accountActor(account),
    address: client.ip,
    action: 'account.identity-link',
    target: { type: 'account', id: account.id, name: account.username },
    after: { provider: provider.name, email: identity.email },
    detail: `bound to ${identity.email ?? identity.name ?? identity.subject} at ${provider.name}`,
  });
  return { linked: true, provider: provider.name };
}
