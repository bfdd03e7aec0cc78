import {
  AUDIT_EXPORT_MAX_ROWS,
  describeAuditActor,
  describeAuditChanges,
  describeAuditEntry,
  type AuditEntry,
  type AuditFilter,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { countAuditEntries, iterateAuditEntries } from './query.js';

// The audit log as CSV: the filtered list, streamed in batches read by id so memory stays flat, and
// bounded (AUDIT_EXPORT_MAX_ROWS). Every column comes from the entry's contract view, whose snapshots were scrubbed
// of secrets when recorded (recorder.ts), so the file holds nothing the audit page does not show.

const BATCH = 500;

export const AUDIT_CSV_COLUMNS = [
  'id',
  'time',
  'sentence',
  'actor',
  'actor_kind',
  'token_id',
  'address',
  'action',
  'target_type',
  'target_id',
  'target_name',
  'node_id',
  'node_name',
  'domain',
  'detail',
  'changes',
] as const;

/**
 * One CSV field (RFC 4180: quoted, quotes doubled). A value a spreadsheet would run as a formula (starting with
 * `=`, `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`: names come from node tokens, so a tenant could
 * otherwise plant a formula in the operator's spreadsheet (OWASP "CSV injection").
 */
export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return `"${safe.replaceAll('"', '""')}"`;
}

export function auditCsvRow(entry: AuditEntry): string {
  const fields = [
    entry.id,
    entry.at,
    describeAuditEntry(entry),
    describeAuditActor(entry.actor),
    entry.actor.kind,
    entry.actor.tokenId,
    entry.address,
    entry.action,
    entry.target?.type,
    entry.target?.id,
    entry.target?.name,
    entry.nodeId,
    entry.nodeName,
    entry.domain,
    entry.detail,
    describeAuditChanges(entry.before, entry.after).join('; '),
  ];
  return `${fields.map(csvField).join(',')}\r\n`;
}

export interface AuditExport {
  /** Entries matching the filter; more than `max` means the file stops at `max`. */
  matching: number;
  max: number;
  lines: AsyncGenerator<string>;
}

export async function exportAuditCsv(
  deps: Pick<AppDeps, 'db' | 'audit'>,
  filter: AuditFilter,
  max: number = AUDIT_EXPORT_MAX_ROWS,
): Promise<AuditExport> {
  await deps.audit.flush();
  const matching = await countAuditEntries(deps, filter);
  async function* lines(): AsyncGenerator<string> {
    yield `${AUDIT_CSV_COLUMNS.map(csvField).join(',')}\r\n`;
    for await (const entries of iterateAuditEntries(deps, filter, { batch: BATCH, max })) {
      yield entries.map(auditCsvRow).join('');
    }
  }
  return { matching, max, lines: lines() };
}
