import { and, count, desc, eq, gte, like, lt, lte, or, type SQL } from 'drizzle-orm';
import type { AuditEntry, AuditFilter, AuditListQuery, ListResponse } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { auditEvents, nodes } from '../../db/schema.js';
import { toAuditEntry } from './present.js';

const iso = (value: string): string => new Date(value).toISOString();

/** `service` matches every `service.*`; `service.update` only itself. */
const isFamily = (action: string): boolean => !action.includes('.');

export function whereOf(filter: AuditFilter): SQL | undefined {
  const conditions: (SQL | undefined)[] = [
    filter.node === undefined ? undefined : eq(auditEvents.nodeId, filter.node),
    filter.domain === undefined ? undefined : eq(auditEvents.domain, filter.domain),
    filter.actor === undefined ? undefined : eq(auditEvents.actorKind, filter.actor),
    filter.account === undefined ? undefined : eq(auditEvents.actorAccountId, filter.account),
    filter.action === undefined
      ? undefined
      : isFamily(filter.action)
        ? or(eq(auditEvents.action, filter.action), like(auditEvents.action, `${filter.action}.%`))
        : eq(auditEvents.action, filter.action),
    filter.from === undefined ? undefined : gte(auditEvents.at, iso(filter.from)),
    filter.to === undefined ? undefined : lte(auditEvents.at, iso(filter.to)),
  ];
  return and(...conditions);
}

/** A page of entries, newest first. */
export async function listAuditEntries(
  deps: Pick<AppDeps, 'db'>,
  query: AuditListQuery,
): Promise<ListResponse<AuditEntry>> {
  const where = whereOf(query);
  const rows = await selectWithNodeName(deps)
    .where(where)
    .orderBy(desc(auditEvents.id))
    .limit(query.limit)
    .offset((query.page - 1) * query.limit)
    .all();
  const total = (await deps.db.select({ n: count() }).from(auditEvents).where(where).get())?.n ?? 0;
  return {
    data: rows.map(({ row, nodeName }) => ({ ...toAuditEntry(row), nodeName })),
    page: query.page,
    limit: query.limit,
    total,
  };
}

/** Entries with the name their node has now (null: none, or deleted since), for sentences. */
const selectWithNodeName = (deps: Pick<AppDeps, 'db'>) =>
  deps.db
    .select({ row: auditEvents, nodeName: nodes.name })
    .from(auditEvents)
    .leftJoin(nodes, eq(nodes.id, auditEvents.nodeId));

/** Entries matching the filter, newest first, in batches of `batch` read by id (no OFFSET), at most `max` in all. */
export async function* iterateAuditEntries(
  deps: Pick<AppDeps, 'db'>,
  filter: AuditFilter,
  { batch, max }: { batch: number; max: number },
): AsyncGenerator<AuditEntry[]> {
  let before: number | null = null;
  let left = max;
  while (left > 0) {
    const rows = await selectWithNodeName(deps)
      .where(and(whereOf(filter), before === null ? undefined : lt(auditEvents.id, before)))
      .orderBy(desc(auditEvents.id))
      .limit(Math.min(batch, left))
      .all();
    if (rows.length === 0) return;
    left -= rows.length;
    before = rows[rows.length - 1]?.row.id ?? null;
    yield rows.map(({ row, nodeName }) => ({ ...toAuditEntry(row), nodeName }));
  }
}

/** How many entries match the filter. */
export async function countAuditEntries(deps: Pick<AppDeps, 'db'>, filter: AuditFilter): Promise<number> {
  return (await deps.db.select({ n: count() }).from(auditEvents).where(whereOf(filter)).get())?.n ?? 0;
}

/** The same filter, for entries streamed as they are recorded. */
export function matchesAuditFilter(filter: AuditFilter, entry: AuditEntry): boolean {
  if (filter.node !== undefined && entry.nodeId !== filter.node) return false;
  if (filter.domain !== undefined && entry.domain !== filter.domain) return false;
  if (filter.actor !== undefined && entry.actor.kind !== filter.actor) return false;
  if (filter.account !== undefined && entry.actor.accountId !== filter.account) return false;
  if (filter.action !== undefined) {
    const ok =
      entry.action === filter.action || (isFamily(filter.action) && entry.action.startsWith(`${filter.action}.`));
    if (!ok) return false;
  }
  if (filter.from !== undefined && entry.at < iso(filter.from)) return false;
  if (filter.to !== undefined && entry.at > iso(filter.to)) return false;
  return true;
}
