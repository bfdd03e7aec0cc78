import { and, eq, gt, inArray, isNull } from 'drizzle-orm';
import {
  accessLimits,
  accessMessages,
  strictnessViolations,
  type DomainAccess,
  type DomainAccessUpdate,
  type ServiceAccess,
  type ServiceAccessUpdate,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { Tx, ReadDb } from '../../db/client.js';
import { effectivePolicy, policyRuleOf, type AccessPolicyRow, type PolicyColumns } from '../../db/access-state.js';
import { accessPolicies, accessSessions, domains, httpServices, identityProviders } from '../../db/schema.js';
import { applyChanges } from '../../dataplane-apply.js';
import { fieldError, notFound } from '../../errors.js';
import { hashPassword } from '../auth/passwords.js';
import { hashGated } from '../auth/service.js';
import { isLetIn } from './allow-list.js';
import { PUBLIC_POLICY, toAccessPolicy } from './present.js';
import { visitorChecksFor } from './visitor-checks.js';

// Access policies of domains and HTTP services (docs/ACCESS.md "The policy model"). An edit is checked whole (the
// stored policy with the request over it), written in one transaction with the revocations it causes, then applied.
// A node's token may only make its own service stricter than the domain's policy, and never touches one the
// operator set.

export type AccessCaller = 'admin' | 'node';

type PolicyInput = Omit<DomainAccessUpdate, 'mode'>;

/** A policy as it will be stored (the password as its hash). */
type MergedPolicy = PolicyColumns;

export interface HttpServiceRef {
  id: number;
  nodeId: number;
  name: string;
  /** null: no domain. */
  domain: string | null;
  domainId: number | null;
  pathLocation: string;
}

/** The HTTP service `id` of `nodeId` (404 otherwise: another node's service names nothing). */
export async function findHttpService(db: ReadDb, nodeId: number, id: number): Promise<HttpServiceRef> {
  const row = await db
    .select({
      id: httpServices.id,
      nodeId: httpServices.nodeId,
      name: httpServices.name,
      domain: httpServices.domain,
      domainId: domains.id,
      pathLocation: httpServices.pathLocation,
    })
    .from(httpServices)
    .leftJoin(domains, eq(domains.domain, httpServices.domain))
    .where(and(eq(httpServices.id, id), eq(httpServices.nodeId, nodeId)))
    .get();
  if (!row) throw notFound('Service');
  return { ...row, domain: row.domain === '' ? null : row.domain };
}

export async function policyOfDomain(db: ReadDb, domainId: number | null): Promise<AccessPolicyRow | null> {
  if (domainId === null) return null;
  return (await db.select().from(accessPolicies).where(eq(accessPolicies.domainId, domainId)).get()) ?? null;
}

export async function policyOfService(db: ReadDb, serviceId: number): Promise<AccessPolicyRow | null> {
  return (await db.select().from(accessPolicies).where(eq(accessPolicies.httpServiceId, serviceId)).get()) ?? null;
}

export async function providerNames(db: ReadDb): Promise<Map<number, string>> {
  const rows = await db.select({ id: identityProviders.id, name: identityProviders.name }).from(identityProviders);
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** The policy that applies to a service, with where it comes from. */
export async function effectivePolicyOf(
  db: ReadDb,
  service: HttpServiceRef,
): Promise<{ row: AccessPolicyRow | null; source: 'service' | 'domain' | 'none' }> {
  if (service.domain === null) return { row: null, source: 'none' };
  return effectivePolicy(await policyOfService(db, service.id), await policyOfDomain(db, service.domainId));
}

// ---- Views -------------------------------------------------------------------------------------------------

export async function getDomainAccess(deps: Pick<AppDeps, 'db'>, domainId: number): Promise<DomainAccess> {
  const domain = await deps.db.select().from(domains).where(eq(domains.id, domainId)).get();
  if (!domain) throw notFound('Domain');
  const names = await providerNames(deps.db);
  return { domainId, domain: domain.domain, policy: toAccessPolicy(await policyOfDomain(deps.db, domainId), names) };
}

export async function viewServiceAccess(db: ReadDb, service: HttpServiceRef): Promise<ServiceAccess> {
  const names = await providerNames(db);
  const own = await policyOfService(db, service.id);
  const domainPolicy = await policyOfDomain(db, service.domainId);
  const effective =
    service.domain === null ? { row: null, source: 'none' as const } : effectivePolicy(own, domainPolicy);
  return {
    serviceId: service.id,
    nodeId: service.nodeId,
    domain: service.domain,
    mode: own === null ? 'inherit' : own.mode,
    own: own === null ? null : toAccessPolicy(own, names),
    setBy: own?.setBy ?? null,
    domainPolicy: service.domain === null ? null : toAccessPolicy(domainPolicy, names),
    effective: { ...toAccessPolicy(effective.row, names), source: effective.source },
  };
}

export async function getServiceAccess(deps: Pick<AppDeps, 'db'>, nodeId: number, id: number): Promise<ServiceAccess> {
  return await viewServiceAccess(deps.db, await findHttpService(deps.db, nodeId, id));
}

// ---- Edits -------------------------------------------------------------------------------------------------

/** The stored policy (or the defaults) with the request's fields over it, and the password hash it will have. */
function merge(
  current: AccessPolicyRow | null,
  mode: 'public' | 'protected',
  body: PolicyInput,
  passwordHash: string | null,
): MergedPolicy {
  const base = current ?? { ...PUBLIC_POLICY, sessionSeconds: accessLimits.sessionSecondsDefault };
  return {
    mode,
    providerId: body.providerId === undefined ? base.providerId : body.providerId,
    allowEmails: body.allowEmails ?? base.allowEmails,
    allowEmailDomains: body.allowEmailDomains ?? base.allowEmailDomains,
    allowGroups: body.allowGroups ?? base.allowGroups,
    passwordHash,
    shareLinks: body.shareLinks ?? base.shareLinks,
    bypassPaths: body.bypassPaths ?? base.bypassPaths,
    bypassNetworks: body.bypassNetworks ?? base.bypassNetworks,
    sessionSeconds: body.sessionSeconds ?? base.sessionSeconds,
  };
}

/** Stands for a password that is hashed only once every other rule holds (argon2 costs ~20 MiB and tens of ms). */
const PENDING_HASH = 'pending';

/** The hash the merged policy will have: kept (absent), none (null), or the new password's (hashed later). */
const draftHash = (current: AccessPolicyRow | null, password: string | null | undefined): string | null =>
  password === undefined ? (current?.passwordHash ?? null) : password === null ? null : PENDING_HASH;

/** The draft with its new password hashed (through the visitors' hash gate). */
async function withPasswordHashed(
  deps: Pick<AppDeps, 'db' | 'now'>,
  draft: MergedPolicy,
  password: string | null | undefined,
): Promise<MergedPolicy> {
  if (typeof password !== 'string') return draft;
  return { ...draft, passwordHash: await hashGated(visitorChecksFor(deps), () => hashPassword(password)) };
}

/** What a protected policy must have: a way in, an existing provider, someone on its lists. */
async function assertUsable(db: ReadDb, policy: MergedPolicy, hasDomain: boolean): Promise<void> {
  if (policy.mode !== 'protected') return;
  if (!hasDomain) throw fieldError('mode', accessMessages.needsDomain);
  if (policy.providerId === null && policy.passwordHash === null && !policy.shareLinks)
    throw fieldError('mode', accessMessages.noWayIn);
  if (policy.providerId !== null) {
    const provider = await db
      .select({ id: identityProviders.id })
      .from(identityProviders)
      .where(eq(identityProviders.id, policy.providerId))
      .get();
    if (!provider) throw fieldError('providerId', accessMessages.providerNotFound);
    if (policy.allowEmails.length + policy.allowEmailDomains.length + policy.allowGroups.length === 0)
      throw fieldError('allowEmails', accessMessages.noAllowList);
  }
}

/**
 * Whether an edit ends every cookie of the policy (a new epoch): a change of mode, provider, password or session
 * length. Narrower lists and share links turned off end only the sessions they concern (`sessionsToRevoke`).
 */
function needsNewEpoch(current: AccessPolicyRow, next: MergedPolicy, passwordChanged: boolean): boolean {
  return (
    current.mode !== next.mode ||
    current.providerId !== next.providerId ||
    passwordChanged ||
    current.sessionSeconds !== next.sessionSeconds
  );
}

/** The live sessions of `policyId` the new policy no longer lets in. */
async function sessionsToRevoke(tx: Tx, policyId: number, next: MergedPolicy, now: string): Promise<number[]> {
  const live = await tx
    .select()
    .from(accessSessions)
    .where(
      and(eq(accessSessions.policyId, policyId), isNull(accessSessions.revokedAt), gt(accessSessions.expiresAt, now)),
    )
    .all();
  return live
    .filter((session) => {
      if (session.method === 'share') return !next.shareLinks;
      if (session.method === 'password') return next.passwordHash === null;
      return next.providerId === null || !isLetIn(next, session.email, session.groups);
    })
    .map((session) => session.id);
}

/** Writes `next` as the policy of a domain or a service (insert or update) with the revocations it causes. */
async function writePolicy(
  deps: Pick<AppDeps, 'db' | 'now'>,
  owner: { domainId: number } | { httpServiceId: number },
  current: AccessPolicyRow | null,
  next: MergedPolicy,
  passwordChanged: boolean,
  setBy: AccessCaller,
): Promise<void> {
  const now = deps.now().toISOString();
  await deps.db.write(async (tx) => {
    if (current === null) {
      await tx
        .insert(accessPolicies)
        .values({ ...owner, ...next, setBy })
        .run();
      return;
    }
    const epoch = needsNewEpoch(current, next, passwordChanged) ? current.epoch + 1 : current.epoch;
    const revoke = epoch === current.epoch ? await sessionsToRevoke(tx, current.id, next, now) : [];
    await tx
      .update(accessPolicies)
      .set({ ...next, epoch, setBy, updatedAt: now })
      .where(eq(accessPolicies.id, current.id))
      .run();
    if (revoke.length > 0)
      await tx.update(accessSessions).set({ revokedAt: now }).where(inArray(accessSessions.id, revoke)).run();
  });
}

export async function updateDomainAccess(
  deps: AppDeps,
  domainId: number,
  { mode, ...body }: DomainAccessUpdate,
): Promise<DomainAccess> {
  const domain = await deps.db.select({ id: domains.id }).from(domains).where(eq(domains.id, domainId)).get();
  if (!domain) throw notFound('Domain');
  const current = await policyOfDomain(deps.db, domainId);
  const draft = merge(current, mode ?? current?.mode ?? 'public', body, draftHash(current, body.password));
  await assertUsable(deps.db, draft, true);
  const next = await withPasswordHashed(deps, draft, body.password);
  await writePolicy(deps, { domainId }, current, next, body.password !== undefined, 'admin');
  await applyChanges(deps);
  return await getDomainAccess(deps, domainId);
}

export async function updateServiceAccess(
  deps: AppDeps,
  nodeId: number,
  serviceId: number,
  { mode, ...body }: ServiceAccessUpdate,
  caller: AccessCaller,
): Promise<ServiceAccess> {
  const service = await findHttpService(deps.db, nodeId, serviceId);
  const current = await policyOfService(deps.db, serviceId);
  const domainPolicy = await policyOfDomain(deps.db, service.domainId);
  if (caller === 'node' && current?.setBy === 'admin') throw fieldError('mode', accessMessages.setByOperator);
  const target = mode ?? current?.mode ?? 'inherit';
  if (target === 'inherit') {
    const stray = Object.keys(body).find((key) => body[key as keyof PolicyInput] !== undefined);
    if (stray) throw fieldError(stray, accessMessages.inheritHasNoFields);
    // Dropping its own policy leaves the domain's: never weaker than what a token is held to.
    if (current !== null)
      await deps.db.write(async (tx) => {
        await tx.delete(accessPolicies).where(eq(accessPolicies.id, current.id)).run();
      });
    await applyChanges(deps, { type: 'http', id: serviceId });
    return await viewServiceAccess(deps.db, service);
  }
  const draft = merge(current, target, body, draftHash(current, body.password));
  await assertUsable(deps.db, draft, service.domain !== null);
  if (caller === 'node') {
    const violation = strictnessViolations(policyRuleOf(draft), domainPolicy ? policyRuleOf(domainPolicy) : null)[0];
    if (violation) throw fieldError(violation.field, violation.message);
  }
  const next = await withPasswordHashed(deps, draft, body.password);
  await writePolicy(deps, { httpServiceId: serviceId }, current, next, body.password !== undefined, caller);
  await applyChanges(deps, { type: 'http', id: serviceId });
  return await viewServiceAccess(deps.db, service);
}
