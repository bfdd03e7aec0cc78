import { createHash, randomBytes } from 'node:crypto';
import { and, count, desc, eq, gt, isNull } from 'drizzle-orm';
import {
  ACCESS_PATH,
  accessMessages,
  type ListResponse,
  type PageQuery,
  type ShareLink,
  type ShareLinkCreate,
  type ShareLinkCreated,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { Tx } from '../../db/client.js';
import { accessSessions, accessShareLinks } from '../../db/schema.js';
import { applyChanges } from '../../dataplane-apply.js';
import { badRequest, fieldError, notFound } from '../../errors.js';
import { httpPublicAccess } from '../services/present.js';
import { resolveExpiry } from '../services/expiry.js';
import { effectivePolicyOf, findHttpService, type AccessCaller } from './policies.js';
import { toShareLink } from './present.js';

// Share links (docs/ACCESS.md "Share links"): a random token in a URL shown once, kept as a SHA-256 hash. Using one
// makes a session (exchange.ts); revoking one ends the sessions made with it on every gateway.

export const hashShareToken = (token: string): string => createHash('sha256').update(token).digest('hex');

const isUnder = (path: string, prefix: string): boolean =>
  prefix === '/' || path === prefix || path.startsWith(`${prefix}/`);

export async function listShareLinks(
  deps: Pick<AppDeps, 'db'>,
  nodeId: number,
  serviceId: number,
  { page, limit }: PageQuery,
): Promise<ListResponse<ShareLink>> {
  await findHttpService(deps.db, nodeId, serviceId);
  const where = eq(accessShareLinks.httpServiceId, serviceId);
  const rows = await deps.db
    .select()
    .from(accessShareLinks)
    .where(where)
    .orderBy(desc(accessShareLinks.id))
    .limit(limit)
    .offset((page - 1) * limit)
    .all();
  const total = (await deps.db.select({ n: count() }).from(accessShareLinks).where(where).get())?.n ?? 0;
  return { data: rows.map(toShareLink), page, limit, total };
}

export async function createShareLink(
  deps: AppDeps,
  nodeId: number,
  serviceId: number,
  body: ShareLinkCreate,
  caller: AccessCaller,
): Promise<ShareLinkCreated> {
  const service = await findHttpService(deps.db, nodeId, serviceId);
  const { row: policy } = await effectivePolicyOf(deps.db, service);
  if (service.domain === null || policy?.mode !== 'protected' || !policy.shareLinks)
    throw badRequest(accessMessages.shareLinksOff);
  if (body.pathPrefix && !isUnder(body.pathPrefix, service.pathLocation))
    throw fieldError(
      'pathPrefix',
      `This field must be the service's path (${service.pathLocation}) or a path below it`,
    );
  const expiresAt = resolveExpiry(deps, body) ?? null;
  const token = randomBytes(32).toString('base64url');
  const row = await deps.db.write(
    async (tx) =>
      await tx
        .insert(accessShareLinks)
        .values({
          httpServiceId: serviceId,
          name: body.name,
          tokenHash: hashShareToken(token),
          pathPrefix: body.pathPrefix ?? null,
          expiresAt,
          createdBy: caller,
        })
        .returning()
        .get(),
  );
  const base = httpPublicAccess(deps.config, service.domain, '');
  return { ...toShareLink(row), url: `${base}${ACCESS_PATH}/share?token=${token}` };
}

/** Marks the live sessions made with `linkId` revoked (inside the caller's write). */
export async function revokeSessionsOfLink(tx: Tx, linkId: number, now: string): Promise<void> {
  await tx
    .update(accessSessions)
    .set({ revokedAt: now })
    .where(
      and(eq(accessSessions.shareLinkId, linkId), isNull(accessSessions.revokedAt), gt(accessSessions.expiresAt, now)),
    )
    .run();
}

export async function revokeShareLink(
  deps: AppDeps,
  nodeId: number,
  serviceId: number,
  linkId: number,
): Promise<ShareLink> {
  await findHttpService(deps.db, nodeId, serviceId);
  const now = deps.now().toISOString();
  const row = await deps.db.write(async (tx) => {
    const link = await tx
      .select()
      .from(accessShareLinks)
      .where(and(eq(accessShareLinks.id, linkId), eq(accessShareLinks.httpServiceId, serviceId)))
      .get();
    if (!link) return null;
    if (link.revokedAt !== null) return link;
    await revokeSessionsOfLink(tx, linkId, now);
    return await tx
      .update(accessShareLinks)
      .set({ revokedAt: now, updatedAt: now })
      .where(eq(accessShareLinks.id, linkId))
      .returning()
      .get();
  });
  if (!row) throw notFound('Share link');
  await applyChanges(deps);
  return toShareLink(row);
}
