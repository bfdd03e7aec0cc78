import type { AuditActorKind, AuditFilter } from '@postern/contract';

// The audit page's filter form, the pure part: form texts in, the API's filter out (empty fields are left out).

export type AuditFilterValues = {
  node: string;
  domain: string;
  actor: '' | AuditActorKind;
  action: string;
  from: string;
  to: string;
};

export const EMPTY_AUDIT_FILTER: AuditFilterValues = { node: '', domain: '', actor: '', action: '', from: '', to: '' };

/** A `datetime-local` value is local time without a zone: the browser's clock says which instant it is. */
const localToIso = (value: string): string | undefined => {
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
};

export function toAuditFilter(values: AuditFilterValues): AuditFilter {
  const filter: AuditFilter = {};
  if (/^\d+$/.test(values.node)) filter.node = Number(values.node);
  if (values.domain.trim() !== '') filter.domain = values.domain.trim().toLowerCase();
  if (values.actor !== '') filter.actor = values.actor;
  if (values.action.trim() !== '') filter.action = values.action.trim();
  const from = values.from === '' ? undefined : localToIso(values.from);
  const to = values.to === '' ? undefined : localToIso(values.to);
  if (from) filter.from = from;
  if (to) filter.to = to;
  return filter;
}

/** What the entry's actor column reads. */
export function describeActor(actor: { kind: AuditActorKind; name: string | null; tokenId: number | null }): string {
  if (actor.kind === 'system') return 'gateway';
  if (actor.kind === 'node') return `token #${actor.tokenId ?? '?'} ${actor.name ?? ''}`.trim();
  if (actor.kind === 'anonymous') return actor.name ? `anonymous (${actor.name})` : 'anonymous';
  return actor.name ?? 'admin';
}

/** The fields an entry changed, as `field: before → after` lines (creation and deletion show one side). */
export function describeChanges(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): string[] {
  const show = (value: unknown): string => (value === undefined ? '—' : JSON.stringify(value));
  if (!before || !after) {
    const side = after ?? before;
    return side ? Object.entries(side).map(([key, value]) => `${key}: ${show(value)}`) : [];
  }
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys
    .filter((key) => show(before[key]) !== show(after[key]))
    .map((key) => `${key}: ${show(before[key])} → ${show(after[key])}`);
}
