import { and, eq, sql } from 'drizzle-orm';
import { ACCESS_COOKIE_PREFIX, ACCESS_PATH, isSafeReturnPath, normalizePathLocation } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { ACCESS_KEY_ID, accessCookieKey, type AccessPolicyRow } from '../../db/access-state.js';
import { accessShareLinks, domains, httpServices, identityProviders } from '../../db/schema.js';
import { hashGated, type PasswordChecks } from '../auth/service.js';
import { verifyPassword } from '../auth/passwords.js';
import { clientKeyOf } from '../auth/rate-limit.js';
import { isLetIn } from './allow-list.js';
import { accessCookieName, verifyAccessCookie } from './cookie.js';
import { finishSignIn, providerConfig, startSignIn, type OidcIdentity } from './oidc.js';
import { effectivePolicyOf, type HttpServiceRef } from './policies.js';
import { hashShareToken } from './share-links.js';
import { createVisitorSession, revokeSessionsBySid } from './visitor-sessions.js';
import { visitorClientKey, visitorLimitName } from './visitor-checks.js';

// The sign-in exchange's logic (docs/ACCESS.md): which service and policy a request on a protected host is about,
// the password, single sign-on and share-link steps, sign-out. exchange-routes.ts turns the outcomes into pages,
// cookies and redirects; nothing here knows HTTP beyond the values it is given.

/** A service on the host that asked, with the policy protecting it. */
export interface ProtectedService {
  service: HttpServiceRef;
  policy: AccessPolicyRow;
  providerName: string | null;
}

export const OIDC_COOKIE = `${ACCESS_COOKIE_PREFIX}oidc`;
export const OIDC_COOKIE_SECONDS = 600;

/** The host a request came for (nginx sets Host to $host), lower-cased, without a port; null when unusable. */
export function requestHost(header: string | undefined): string | null {
  const host = (header ?? '').toLowerCase().replace(/:\d+$/, '');
  return /^[a-z0-9.-]{1,253}$/.test(host) ? host : null;
}

const serviceColumns = {
  id: httpServices.id,
  nodeId: httpServices.nodeId,
  name: httpServices.name,
  domain: httpServices.domain,
  domainId: domains.id,
  pathLocation: httpServices.pathLocation,
};

const isUnder = (path: string, prefix: string): boolean =>
  prefix === '/' || path === prefix || path.startsWith(`${prefix}/`);

/**
 * The protected service `serviceId` names on `host` (what nginx put in the sign-in URL), or, without one, the
 * service whose path is the longest prefix of `returnPath`. Null: nothing protected here.
 */
export async function findProtectedService(
  deps: Pick<AppDeps, 'db' | 'config'>,
  host: string,
  serviceId: number | null,
  returnPath: string | null,
): Promise<ProtectedService | null> {
  if (host === deps.config.publicHost.toLowerCase()) return null;
  const rows = await deps.db
    .select(serviceColumns)
    .from(httpServices)
    .innerJoin(domains, eq(domains.domain, httpServices.domain))
    .where(and(eq(httpServices.domain, host), eq(httpServices.enabled, true)))
    .all();
  const path = (returnPath ?? '/').split('?')[0] ?? '/';
  const chosen =
    serviceId !== null
      ? rows.find((row) => row.id === serviceId)
      : rows
          .filter((row) => isUnder(path, normalizePathLocation(row.pathLocation)))
          .sort((a, b) => b.pathLocation.length - a.pathLocation.length)[0];
  if (!chosen) return null;
  const service: HttpServiceRef = { ...chosen, domain: chosen.domain };
  const { row } = await effectivePolicyOf(deps.db, service);
  if (row?.mode !== 'protected') return null;
  const provider =
    row.providerId === null
      ? undefined
      : await deps.db
          .select({ name: identityProviders.name })
          .from(identityProviders)
          .where(eq(identityProviders.id, row.providerId))
          .get();
  return { service, policy: row, providerName: provider?.name ?? null };
}

/** Where to go after signing in: the return path when it is a safe one, else the service's own path. */
export function returnPathOf(rd: string | undefined, service: HttpServiceRef): string | null {
  if (rd === undefined || rd === '') return normalizePathLocation(service.pathLocation);
  return isSafeReturnPath(rd) ? rd : null;
}

// ---- Password -------------------------------------------------------------------------------------------------

export type PasswordOutcome =
  | { kind: 'ok'; cookie: string; maxAge: number }
  | { kind: 'wrong' }
  | { kind: 'limited'; retryAfterSeconds: number }
  | { kind: 'busy' };

export async function signInWithPassword(
  deps: AppDeps,
  checks: PasswordChecks,
  target: ProtectedService,
  host: string,
  ip: string,
  password: string,
): Promise<PasswordOutcome> {
  const { policy, service } = target;
  if (policy.passwordHash === null) return { kind: 'wrong' };
  const reservation = await checks.limiter.reserve(visitorClientKey(clientKeyOf(ip)), visitorLimitName(policy.id));
  if (!reservation.attempt) return { kind: 'limited', retryAfterSeconds: reservation.retryAfterSeconds };
  const hash = policy.passwordHash;
  let isRight: boolean;
  try {
    isRight = await hashGated(checks, () => verifyPassword(hash, password), reservation.attempt);
  } catch {
    return { kind: 'busy' };
  }
  if (!isRight) return { kind: 'wrong' };
  await reservation.attempt.succeed();
  const session = await createVisitorSession(deps, {
    policy,
    serviceId: service.id,
    host,
    method: 'password',
    address: ip,
  });
  return { kind: 'ok', ...session };
}

// ---- Single sign-on ---------------------------------------------------------------------------------------------

/** What the start keeps for the callback, encrypted in a short-lived cookie (any gateway may get the callback). */
interface OidcState {
  state: string;
  nonce: string;
  verifier: string;
  policyId: number;
  serviceId: number;
  rd: string;
  host: string;
  expires: number;
}

export async function providerOf(deps: Pick<AppDeps, 'db'>, policy: AccessPolicyRow) {
  if (policy.providerId === null) return null;
  return (
    (await deps.db.select().from(identityProviders).where(eq(identityProviders.id, policy.providerId)).get()) ?? null
  );
}

export async function startSingleSignOn(
  deps: AppDeps,
  target: ProtectedService,
  host: string,
  origin: string,
  rd: string,
): Promise<{ url: string; stateCookie: string } | null> {
  const provider = await providerOf(deps, target.policy);
  if (!provider) return null;
  const config = await providerConfig(provider, deps.secrets, deps.now().getTime());
  const started = await startSignIn(config, provider, `${origin}${ACCESS_PATH}/callback`);
  const state: OidcState = {
    state: started.state,
    nonce: started.nonce,
    verifier: started.verifier,
    policyId: target.policy.id,
    serviceId: target.service.id,
    rd,
    host,
    expires: deps.now().getTime() + OIDC_COOKIE_SECONDS * 1000,
  };
  return { url: started.url, stateCookie: deps.secrets.encrypt(JSON.stringify(state)) };
}

export type SsoOutcome =
  | { kind: 'ok'; cookie: string; maxAge: number; rd: string; identity: OidcIdentity; target: ProtectedService }
  | { kind: 'refused'; identity: OidcIdentity; target: ProtectedService; reason: 'not-listed' | 'unverified' }
  | { kind: 'expired' }
  | { kind: 'failed'; message: string; target: ProtectedService | null };

/** The provider sent the visitor back: check the state, redeem the code, check the allow-lists, make the session. */
export async function finishSingleSignOn(
  deps: AppDeps,
  host: string,
  stateCookie: string | undefined,
  callbackUrl: URL,
  ip: string,
): Promise<SsoOutcome> {
  let saved: OidcState;
  try {
    saved = JSON.parse(deps.secrets.decrypt(stateCookie ?? '')) as OidcState;
  } catch {
    return { kind: 'expired' };
  }
  if (saved.host !== host || saved.expires < deps.now().getTime()) return { kind: 'expired' };
  // The policy as it is now (it may have changed while the visitor was at the provider).
  const target = await findProtectedService(deps, host, saved.serviceId, saved.rd);
  if (target?.policy.id !== saved.policyId) return { kind: 'expired' };
  const provider = await providerOf(deps, target.policy);
  if (!provider) return { kind: 'expired' };
  let identity: OidcIdentity;
  try {
    const config = await providerConfig(provider, deps.secrets, deps.now().getTime());
    identity = await finishSignIn(config, provider, callbackUrl, saved);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { kind: 'failed', message, target };
  }
  if (identity.emailUnverified) return { kind: 'refused', identity, target, reason: 'unverified' };
  if (!isLetIn(target.policy, identity.email, identity.groups))
    return { kind: 'refused', identity, target, reason: 'not-listed' };
  const session = await createVisitorSession(deps, {
    policy: target.policy,
    serviceId: target.service.id,
    host,
    method: 'sso',
    user: identity.name ?? identity.email ?? identity.subject,
    email: identity.email,
    groups: identity.groups,
    address: ip,
  });
  return { kind: 'ok', ...session, rd: saved.rd, identity, target };
}

// ---- Share links ------------------------------------------------------------------------------------------------

export type ShareOutcome =
  | { kind: 'ok'; cookie: string; maxAge: number; path: string; target: ProtectedService; linkName: string }
  | { kind: 'refused'; reason: 'unknown' | 'revoked' | 'expired' | 'off'; target: ProtectedService | null };

export async function useShareLink(deps: AppDeps, host: string, token: string, ip: string): Promise<ShareOutcome> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return { kind: 'refused', reason: 'unknown', target: null };
  const link = await deps.db
    .select()
    .from(accessShareLinks)
    .where(eq(accessShareLinks.tokenHash, hashShareToken(token)))
    .get();
  if (!link) return { kind: 'refused', reason: 'unknown', target: null };
  const target = await findProtectedService(deps, host, link.httpServiceId, null);
  if (!target) return { kind: 'refused', reason: 'unknown', target: null };
  if (link.revokedAt !== null) return { kind: 'refused', reason: 'revoked', target };
  const now = deps.now();
  if (link.expiresAt !== null && Date.parse(link.expiresAt) <= now.getTime())
    return { kind: 'refused', reason: 'expired', target };
  if (!target.policy.shareLinks) return { kind: 'refused', reason: 'off', target };
  const path = link.pathPrefix ?? normalizePathLocation(target.service.pathLocation);
  const session = await createVisitorSession(deps, {
    policy: target.policy,
    serviceId: target.service.id,
    host,
    method: 'share',
    shareLinkId: link.id,
    pathPrefix: path,
    notAfter: link.expiresAt,
    user: `share:${link.name}`,
    address: ip,
  });
  await deps.db.write(async (tx) => {
    await tx
      .update(accessShareLinks)
      .set({ uses: sql`${accessShareLinks.uses} + 1`, lastUsedAt: now.toISOString() })
      .where(eq(accessShareLinks.id, link.id))
      .run();
  });
  return { kind: 'ok', ...session, path, target, linkName: link.name };
}

// ---- Sign-out ---------------------------------------------------------------------------------------------------

/** Every visitor cookie of this host the browser sent: name and value. */
export function visitorCookies(header: string | undefined): { name: string; value: string }[] {
  if (!header) return [];
  return header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part.startsWith(ACCESS_COOKIE_PREFIX) && !part.startsWith(`${OIDC_COOKIE}=`))
    .slice(0, 20)
    .map((part) => {
      const at = part.indexOf('=');
      return { name: part.slice(0, at), value: part.slice(at + 1) };
    })
    .filter((cookie) => /^__Host-postern-\d{1,16}$/.test(cookie.name));
}

/** Revokes the sessions of the cookies a visitor sent (valid ones, of this host): on every gateway at once. */
export async function signOut(
  deps: AppDeps,
  host: string,
  cookies: readonly { name: string; value: string }[],
): Promise<{ revoked: boolean; names: string[] }> {
  const key = accessCookieKey(deps.secrets);
  const sids: string[] = [];
  for (const cookie of cookies) {
    const payload = verifyAccessCookie(key, ACCESS_KEY_ID, host, cookie.value);
    if (payload && accessCookieName(payload.p) === cookie.name) sids.push(payload.s);
  }
  const names = [...new Set(cookies.map((cookie) => cookie.name))];
  return { revoked: await revokeSessionsBySid(deps, sids), names };
}
