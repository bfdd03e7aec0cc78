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
