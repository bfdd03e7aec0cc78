import { eq } from 'drizzle-orm';
import type { OperationName } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { accessSessions, accessShareLinks, domains, httpServices } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { getDomainAccess, getServiceAccess } from '../access/policies.js';
import { toShareLink, toVisitorSession } from '../access/present.js';
import { getIdentityProvider } from '../access/providers.js';

// The operator's (and node tokens') access changes in the audit log (docs/ACCESS.md), recorded like every other API
// change by operation-audit.ts: each operation names its action and target kind; this file finds and loads the targets.

export type AccessKind = 'provider' | 'domain-access' | 'service-access' | 'share-link' | 'visitor-session';

export const accessAudited: Partial<Record<OperationName, { action: string; kind: AccessKind }>> = {
  createIdentityProvider: { action: 'access.provider-create', kind: 'provider' },
  updateIdentityProvider: { action: 'access.provider-update', kind: 'provider' },
  deleteIdentityProvider: { action: 'access.provider-delete', kind: 'provider' },
  updateProviderConsoleSignIn: { action: 'access.provider-console', kind: 'provider' },
  updateDomainAccess: { action: 'access.policy-update', kind: 'domain-access' },
  updateServiceAccess: { action: 'access.policy-update', kind: 'service-access' },
  agentUpdateServiceAccess: { action: 'access.policy-update', kind: 'service-access' },
  createShareLink: { action: 'access.share-link-create', kind: 'share-link' },
  agentCreateShareLink: { action: 'access.share-link-create', kind: 'share-link' },
  revokeShareLink: { action: 'access.share-link-revoke', kind: 'share-link' },
  agentRevokeShareLink: { action: 'access.share-link-revoke', kind: 'share-link' },
  revokeVisitorSession: { action: 'access.session-revoke', kind: 'visitor-session' },
};

const TYPES: Record<AccessKind, string> = {
  provider: 'identity-provider',
  'domain-access': 'domain',
  'service-access': 'http',
  'share-link': 'share-link',
  'visitor-session': 'visitor-session',
};

/** What the audit layer needs (operation-audit.ts's Ref), plus the access kind and the service it hangs on. */
export interface AccessRef {
  type: string;
  id: number | null;
  nodeId: number | null;
  access: AccessKind;
  serviceId: number | null;
}

const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);

export function accessRefOf(
  kind: AccessKind,
  params: Record<string, unknown>,
  agentNodeId: number | null,
  createdId: number | null,
): AccessRef {
  const nodeId = agentNodeId ?? num(params.nodeId);
  const serviceId = kind === 'provider' || kind === 'domain-access' ? null : num(params.id);
  const id =
    kind === 'share-link'
      ? (num(params.linkId) ?? createdId)
      : kind === 'visitor-session'
        ? num(params.sessionId)
        : (num(params.id) ?? createdId);
  return { type: TYPES[kind], id, nodeId, access: kind, serviceId };
}

export const isAccessRef = (ref: { type: string }): ref is AccessRef => 'access' in ref;

async function serviceFacts(deps: AppDeps, serviceId: number | null) {
  if (serviceId === null) return null;
  const row = await deps.db
    .select({ nodeId: httpServices.nodeId, name: httpServices.name, domain: httpServices.domain })
    .from(httpServices)
    .where(eq(httpServices.id, serviceId))
    .get();
  return row ? { ...row, domain: row.domain || null } : null;
}

/** The target's view now (before the handler, or after it answered); null when it does not exist (yet). */
export async function loadAccessSnapshot(
  deps: AppDeps,
  ref: AccessRef,
): Promise<{
  view: Record<string, unknown>;
  name: string | null;
  nodeId: number | null;
  domain: string | null;
} | null> {
  if (ref.id === null) return null;
  try {
    switch (ref.access) {
      case 'provider': {
        const { created_at: _c, updated_at: _u, policies: _p, ...view } = await getIdentityProvider(deps, ref.id);
        return { view, name: view.name, nodeId: null, domain: null };
      }
      case 'domain-access': {
        const view = await getDomainAccess(deps, ref.id);
        const owner = await deps.db
          .select({ owner: domains.ownerNodeId })
          .from(domains)
          .where(eq(domains.id, ref.id))
          .get();
        return { view, name: view.domain, nodeId: owner?.owner ?? null, domain: view.domain };
      }
      case 'service-access': {
        if (ref.nodeId === null) return null;
        const view = await getServiceAccess(deps, ref.nodeId, ref.id);
        const service = await serviceFacts(deps, ref.id);
        return { view, name: service?.name ?? null, nodeId: view.nodeId, domain: view.domain };
      }
      case 'share-link': {
        const row = await deps.db.select().from(accessShareLinks).where(eq(accessShareLinks.id, ref.id)).get();
        if (!row) return null;
        const service = await serviceFacts(deps, row.httpServiceId);
        const { created_at: _c, lastUsedAt: _l, uses: _n, ...view } = toShareLink(row);
        return { view, name: row.name, nodeId: service?.nodeId ?? ref.nodeId, domain: service?.domain ?? null };
      }
      case 'visitor-session': {
        const row = await deps.db.select().from(accessSessions).where(eq(accessSessions.id, ref.id)).get();
        if (!row) return null;
        const service = await serviceFacts(deps, row.httpServiceId);
        const { created_at: _c, ...view } = toVisitorSession(row);
        return { view, name: row.email ?? row.subject, nodeId: service?.nodeId ?? ref.nodeId, domain: row.host };
      }
    }
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return null;
    throw error;
  }
}
