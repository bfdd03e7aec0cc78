import { and, eq, gt, isNotNull } from 'drizzle-orm';
import { strictnessViolations, type PolicyRule } from '@postern/contract';
import type { DesiredAccess, DesiredAccessPolicy } from '../model/desired-state.js';
import type { SecretBox } from '../secrets.js';
import type { ReadDb } from './client.js';
import { accessPolicies, accessSessions, domains, httpServices } from './schema.js';

// Access policies as the data plane needs them (docs/ACCESS.md): which policy applies to each HTTP service, and the
// policies, cookie key and revoked sessions nginx checks visitors with. The modules (modules/access) resolve the
// effective policy through the same function, so the API shows what nginx applies.

export type AccessPolicyRow = typeof accessPolicies.$inferSelect;

/** The id of the cookie key nginx accepts: the key is derived from the secret key every gateway shares. */
export const ACCESS_KEY_ID = '1';

/** The 32-byte key visitor cookies are signed with (HKDF of the secret key: the same on every gateway). */
export const accessCookieKey = (secrets: SecretBox): Uint8Array => secrets.deriveKey(`access-cookie/${ACCESS_KEY_ID}`);

/** The columns the "only stricter" rule reads (a stored row, or a policy about to be stored). */
export type PolicyColumns = Pick<
  AccessPolicyRow,
  | 'mode'
  | 'providerId'
  | 'allowEmails'
  | 'allowEmailDomains'
  | 'allowGroups'
  | 'passwordHash'
  | 'shareLinks'
  | 'bypassPaths'
  | 'bypassNetworks'
  | 'sessionSeconds'
>;

export function policyRuleOf(row: PolicyColumns): PolicyRule {
  return {
    mode: row.mode,
    providerId: row.providerId,
    allowEmails: row.allowEmails,
    allowEmailDomains: row.allowEmailDomains,
    allowGroups: row.allowGroups,
    hasPassword: row.passwordHash !== null,
    shareLinks: row.shareLinks,
    bypassPaths: row.bypassPaths,
    bypassNetworks: row.bypassNetworks,
    sessionSeconds: row.sessionSeconds,
  };
}

export type EffectiveSource = 'service' | 'domain' | 'none';

/**
 * The policy nginx applies to a service: its own, else its domain's. A service policy a node's token set counts
 * only while it is at least as strict as the domain's (docs/ACCESS.md): an operator who tightens the domain later is
 * never undone by a tenant's older, weaker choice. A public policy (or none) protects nothing: null.
 */
export function effectivePolicy(
  own: AccessPolicyRow | null,
  domain: AccessPolicyRow | null,
): { row: AccessPolicyRow | null; source: EffectiveSource } {
  const ownCounts =
    own !== null &&
    (own.setBy === 'admin' ||
      strictnessViolations(policyRuleOf(own), domain ? policyRuleOf(domain) : null).length === 0);
  if (ownCounts) return { row: own, source: 'service' };
  if (domain !== null) return { row: domain, source: 'domain' };
  return { row: null, source: 'none' };
}

/** The id of the protected policy that applies, or null (public). */
export const protectingPolicyId = (own: AccessPolicyRow | null, domain: AccessPolicyRow | null): number | null => {
  const { row } = effectivePolicy(own, domain);
  return row?.mode === 'protected' ? row.id : null;
};

/** Every HTTP service's protecting policy id (only services with one are in the map). */
export async function loadServicePolicies(db: ReadDb): Promise<Map<number, number>> {
  const policies = await db.select().from(accessPolicies).all();
  if (policies.length === 0) return new Map();
  const byDomainId = new Map<number, AccessPolicyRow>();
  const byService = new Map<number, AccessPolicyRow>();
  for (const row of policies) {
    if (row.domainId !== null) byDomainId.set(row.domainId, row);
    if (row.httpServiceId !== null) byService.set(row.httpServiceId, row);
  }
  const services = await db
    .select({ id: httpServices.id, domainId: domains.id })
    .from(httpServices)
    .leftJoin(domains, eq(domains.domain, httpServices.domain))
    .all();
  const out = new Map<number, number>();
  for (const service of services) {
    const own = byService.get(service.id) ?? null;
    const domain = service.domainId === null ? null : (byDomainId.get(service.domainId) ?? null);
    const id = protectingPolicyId(own, domain);
    if (id !== null) out.set(service.id, id);
  }
  return out;
}

/** What nginx needs of the protected policies, the cookie key and the revocations not yet expired. */
export async function loadAccessState(db: ReadDb, secrets: SecretBox, now: Date): Promise<DesiredAccess> {
  const rows = await db.select().from(accessPolicies).where(eq(accessPolicies.mode, 'protected')).all();
  const policies: DesiredAccessPolicy[] = rows.map((row) => ({
    id: row.id,
    epoch: row.epoch,
    bypassPaths: row.bypassPaths,
    bypassNetworks: row.bypassNetworks,
  }));
  const revokedRows = await db
    .select({ sid: accessSessions.sid, expiresAt: accessSessions.expiresAt })
    .from(accessSessions)
    .where(and(isNotNull(accessSessions.revokedAt), gt(accessSessions.expiresAt, now.toISOString())))
    .all();
  return {
    key: { id: ACCESS_KEY_ID, secret: Buffer.from(accessCookieKey(secrets)).toString('base64') },
    policies,
    revoked: new Map(revokedRows.map((row) => [row.sid, Math.ceil(Date.parse(row.expiresAt) / 1000)])),
  };
}
