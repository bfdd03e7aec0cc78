import {
  accessLimits,
  type AccessPolicy,
  type IdentityProvider,
  type ShareLink,
  type VisitorSession,
} from '@postern/contract';
import type { AccessPolicyRow } from '../../db/access-state.js';
import type { accessSessions, accessShareLinks, identityProviders } from '../../db/schema.js';

// Rows → the contract's views. Secrets (password hash, client secret, share-link token hash, session id) never
// leave here: each view says only whether one is set.

/** What a domain without a policy (or a service without a domain) shows: public. */
export const PUBLIC_POLICY: AccessPolicy = {
  mode: 'public',
  providerId: null,
  providerName: null,
  allowEmails: [],
  allowEmailDomains: [],
  allowGroups: [],
  passwordSet: false,
  shareLinks: false,
  bypassPaths: [],
  bypassNetworks: [],
  sessionSeconds: accessLimits.sessionSecondsDefault,
};

export function toAccessPolicy(row: AccessPolicyRow | null, providerNames: ReadonlyMap<number, string>): AccessPolicy {
  if (row === null) return PUBLIC_POLICY;
  return {
    mode: row.mode,
    providerId: row.providerId,
    providerName: row.providerId === null ? null : (providerNames.get(row.providerId) ?? null),
    allowEmails: row.allowEmails,
    allowEmailDomains: row.allowEmailDomains,
    allowGroups: row.allowGroups,
    passwordSet: row.passwordHash !== null,
    shareLinks: row.shareLinks,
    bypassPaths: row.bypassPaths,
    bypassNetworks: row.bypassNetworks,
    sessionSeconds: row.sessionSeconds,
  };
}

export function toIdentityProvider(
  row: typeof identityProviders.$inferSelect,
  policies: number,
  accounts: number,
): IdentityProvider {
  return {
    id: row.id,
    name: row.name,
    issuer: row.issuer,
    clientId: row.clientId,
    hasClientSecret: row.clientSecretEnc !== null,
    scopes: row.scopes,
    groupsClaim: row.groupsClaim,
    policies,
    consoleSignIn: row.consoleSignIn,
    groupRoles: row.consoleGroupRoles,
    accounts,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function toShareLink(row: typeof accessShareLinks.$inferSelect): ShareLink {
  return {
    id: row.id,
    serviceId: row.httpServiceId,
    name: row.name,
    pathPrefix: row.pathPrefix,
    expiresAt: row.expiresAt,
    revoked: row.revokedAt !== null,
    lastUsedAt: row.lastUsedAt,
    uses: row.uses,
    created_at: row.createdAt,
  };
}

export function toVisitorSession(row: typeof accessSessions.$inferSelect): VisitorSession {
  return {
    id: row.id,
    serviceId: row.httpServiceId,
    method: row.method,
    user: row.subject,
    email: row.email,
    groups: row.groups,
    address: row.address,
    shareLinkId: row.shareLinkId,
    created_at: row.createdAt,
    expiresAt: row.expiresAt,
    revoked: row.revokedAt !== null,
  };
}
