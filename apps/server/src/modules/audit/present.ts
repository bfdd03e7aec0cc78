import type { AuditEntry } from '@postern/contract';
import type { auditEvents } from '../../db/schema.js';

export type AuditRow = typeof auditEvents.$inferSelect;

export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    at: row.at,
    // The account and how it signed in: only on a console account's entries (the others have neither).
    actor: {
      kind: row.actorKind,
      name: row.actorName,
      tokenId: row.actorTokenId,
      ...(row.actorKind === 'admin' && { accountId: row.actorAccountId, via: row.actorVia }),
    },
    address: row.address,
    action: row.action,
    target: row.targetType === null ? null : { type: row.targetType, id: row.targetId, name: row.targetName },
    nodeId: row.nodeId,
    domain: row.domain,
    before: row.before ?? null,
    after: row.after ?? null,
    detail: row.detail,
  };
}
