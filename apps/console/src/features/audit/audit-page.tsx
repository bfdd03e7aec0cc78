import {
  AUDIT_ACTOR_KINDS,
  AUDIT_EXPORT_MAX_ROWS,
  auditChanges,
  AuditEventSchema,
  defaults,
  limits,
  operations,
  type AuditEntry,
  type AuditFilter,
} from '@postern/contract';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { Fragment, useEffect, useId, useMemo, useState } from 'react';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { SelectField, TextField } from '../../components/ui/form-field';
import { Pagination } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import { formatDateTime } from '../../i18n/format';
import { t } from '../../i18n/i18n';
import { call, saveFile, toDownload } from '../../lib/api';
import { openStream } from '../../lib/sse';
import { showToast } from '../../lib/toast-store';
import { auditKeys, auditListQueryOptions } from '../../queries/audit';
import { nodeListQueryOptions } from '../../queries/nodes';
import { EMPTY_AUDIT_FILTER, toAuditFilter, type AuditFilterValues } from './audit-filters';
import { auditActorText, auditFieldText, auditKindText, auditSentence } from './audit-sentence';

/**
 * The filtered log as CSV. Exported by the server (GET /api/audit/export): the file is the whole filtered log, not
 * the page on screen, streamed and bounded there, with every field a spreadsheet could run as a formula defused.
 */
async function exportCsv(filter: AuditFilter): Promise<void> {
  try {
    saveFile(toDownload(await call(operations.exportAudit, { query: filter }), 'postern-audit.csv'));
  } catch (error) {
    // The API layer told the operator about a failure without an answer or with a 5xx.
    console.error('audit export failed', error);
  }
}

/** /audit (beyond the spec): the append-only audit log, filtered, paged, and live. */
export function AuditPage() {
  const [draft, setDraft] = useState<AuditFilterValues>(EMPTY_AUDIT_FILTER);
  const [applied, setApplied] = useState<AuditFilterValues>(EMPTY_AUDIT_FILTER);
  const [page, setPage] = useState(1);
  const filter = useMemo(() => toAuditFilter(applied), [applied]);
  const query = useQuery({
    ...auditListQueryOptions({ ...filter, page, limit: defaults.pageSize }),
    placeholderData: keepPreviousData,
  });
  const nodes = useQuery(nodeListQueryOptions({ page: 1, limit: limits.listMaxLimit }));
  const queryClient = useQueryClient();
  const [isExporting, setExporting] = useState(false);

  // New entries arrive on the stream with the same filters; the shown page is refetched so paging and total hold.
  useEffect(
    () =>
      openStream({
        path: operations.auditStream.path,
        query: filter,
        schema: AuditEventSchema,
        reconnectMs: 1000,
        onMessage: () => void queryClient.invalidateQueries({ queryKey: auditKeys.all }),
      }),
    [filter, queryClient],
  );

  const set = (key: keyof AuditFilterValues) => (value: string) =>
    setDraft((current) => ({ ...current, [key]: value }));
  const apply = (values: AuditFilterValues) => {
    setApplied(values);
    setPage(1);
  };

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h1 className="text-2xl font-semibold">{t('nav.audit')}</h1>
        <div className="flex flex-wrap items-center gap-3">
          <span className="text-xs text-gray-600 dark:text-gray-300" data-testid="audit-live">
            {t('audit.live')}
          </span>
          <Button
            variant="secondary"
            isLoading={isExporting}
            onClick={() => {
              setExporting(true);
              if ((query.data?.total ?? 0) > AUDIT_EXPORT_MAX_ROWS)
                showToast({
                  // A number argument: grouped in the language's way ('10,000' in English, as before).
                  message: t('audit.exportLimit', { max: AUDIT_EXPORT_MAX_ROWS }),
                  type: 'info',
                });
              void exportCsv(filter).finally(() => setExporting(false));
            }}
          >
            {t('audit.export')}
          </Button>
        </div>
      </div>
      <Card>
        <form
          aria-label={t('audit.filters')}
          className="grid gap-3 p-4 sm:grid-cols-2 lg:grid-cols-3"
          onSubmit={(event) => {
            event.preventDefault();
            apply(draft);
          }}
        >
          <SelectField
            label={t('audit.filter.node')}
            name="node"
            value={draft.node}
            onChange={set('node')}
            options={[
              { value: '', label: t('audit.filter.allNodes') },
              ...(nodes.data?.data ?? []).map((node) => ({ value: String(node.id), label: node.name })),
            ]}
          />
          <TextField
            label={t('audit.filter.domain')}
            name="domain"
            placeholder="app.example.com"
            value={draft.domain}
            onChange={set('domain')}
          />
          <SelectField
            label={t('audit.filter.actor')}
            name="actor"
            value={draft.actor}
            onChange={(value) =>
              setDraft((current) => ({ ...current, actor: AUDIT_ACTOR_KINDS.find((kind) => kind === value) ?? '' }))
            }
            options={[
              { value: '', label: t('audit.filter.anyone') },
              // The API's kinds of actor, as the filter and the CSV export name them (like the action's names).
              ...AUDIT_ACTOR_KINDS.map((kind) => ({ value: kind, label: kind })),
            ]}
          />
          <TextField
            label={t('audit.filter.action')}
            name="action"
            placeholder={t('audit.filter.actionPlaceholder')}
            value={draft.action}
            onChange={set('action')}
          />
          <TextField
            label={t('audit.filter.from')}
            name="from"
            type="datetime-local"
            value={draft.from}
            onChange={set('from')}
          />
          <TextField
            label={t('audit.filter.to')}
            name="to"
            type="datetime-local"
            value={draft.to}
            onChange={set('to')}
          />
          <div className="flex gap-2 sm:col-span-2 lg:col-span-3">
            <Button type="submit">{t('audit.filter.apply')}</Button>
            <Button
              type="button"
              variant="secondary"
              onClick={() => {
                setDraft(EMPTY_AUDIT_FILTER);
                apply(EMPTY_AUDIT_FILTER);
              }}
            >
              {t('ui.clear')}
            </Button>
          </div>
        </form>
      </Card>
      <Card>
        {query.isPending ? (
          <div className="flex justify-center py-10">
            <Spinner label={t('audit.loading')} />
          </div>
        ) : query.isError ? (
          <p className="px-4 py-6 text-sm text-red-600 dark:text-red-400">
            {t('audit.loadError', { error: query.error.message })}
          </p>
        ) : query.data.total === 0 ? (
          <p className="px-4 py-6 text-sm text-gray-500 dark:text-gray-400">{t('audit.noMatch')}</p>
        ) : (
          <>
            <Table>
              <THead>
                <Th className="hidden sm:table-cell">{t('audit.column.when')}</Th>
                <Th>{t('audit.column.what')}</Th>
                <Th>
                  <span className="sr-only">{t('audit.details')}</span>
                </Th>
              </THead>
              <TBody>
                {query.data.data.map((entry) => (
                  <AuditRow key={entry.id} entry={entry} />
                ))}
              </TBody>
            </Table>
            <Pagination
              page={page}
              limit={query.data.limit}
              total={query.data.total}
              onPageChange={setPage}
              isLoading={query.isPlaceholderData}
            />
          </>
        )}
      </Card>
    </div>
  );
}

/** One entry as a sentence; its details (action, who, from where, the fields changed) one click away. */
function AuditRow({ entry }: { entry: AuditEntry }) {
  const [isOpen, setOpen] = useState(false);
  const detailsId = useId();
  const changes = auditChanges(entry.before, entry.after);
  const sentence = auditSentence(entry);
  const when = formatDateTime(entry.at);
  return (
    <Fragment>
      <Tr>
        <Td className="hidden sm:table-cell">
          <time dateTime={entry.at}>{when}</time>
        </Td>
        <Td className="whitespace-normal">
          <span className="break-words">{sentence}</span>
          {/* Phones show the time under the sentence: the sentence and its Details stay in view. */}
          <time dateTime={entry.at} className="block text-xs text-gray-600 sm:hidden dark:text-gray-300">
            {when}
          </time>
        </Td>
        <Td className="w-px text-right">
          <Button
            variant="ghost"
            className="px-2"
            aria-expanded={isOpen}
            aria-controls={detailsId}
            aria-label={t('audit.detailsOf', { sentence })}
            onClick={() => setOpen((open) => !open)}
          >
            {t('audit.details')}
          </Button>
        </Td>
      </Tr>
      {isOpen && (
        <tr id={detailsId}>
          <td colSpan={3} className="bg-gray-50 px-4 py-3 break-all dark:bg-gray-950/40">
            <dl className="grid gap-x-6 gap-y-1 text-xs sm:grid-cols-[max-content_1fr]">
              <dt className="font-medium text-gray-600 dark:text-gray-300">{t('audit.field.action')}</dt>
              <dd>
                <code>{entry.action}</code>
              </dd>
              <dt className="font-medium text-gray-600 dark:text-gray-300">{t('audit.field.who')}</dt>
              <dd>
                {entry.actor.tokenId === null
                  ? auditActorText(entry.actor)
                  : t('audit.field.token', { who: auditActorText(entry.actor), id: String(entry.actor.tokenId) })}
              </dd>
              <dt className="font-medium text-gray-600 dark:text-gray-300">{t('audit.field.from')}</dt>
              <dd className="break-all">{entry.address ?? '—'}</dd>
              {entry.target && (
                <>
                  <dt className="font-medium text-gray-600 dark:text-gray-300">{t('audit.field.target')}</dt>
                  <dd className="break-all">
                    {/* The kind in words; the id and the name are data (a kind the console does not know: a value). */}
                    {auditKindText(entry.target.type) ?? <code>{entry.target.type}</code>}
                    {entry.target.id === null ? '' : ` #${String(entry.target.id)}`} {entry.target.name ?? ''}
                  </dd>
                </>
              )}
              {entry.domain && (
                <>
                  <dt className="font-medium text-gray-600 dark:text-gray-300">{t('audit.field.domain')}</dt>
                  <dd className="break-all">{entry.domain}</dd>
                </>
              )}
              {entry.detail && (
                <>
                  <dt className="font-medium text-gray-600 dark:text-gray-300">{t('audit.field.detail')}</dt>
                  <dd className="break-words">{entry.detail}</dd>
                </>
              )}
              <dt className="font-medium text-gray-600 dark:text-gray-300">{t('audit.field.changes')}</dt>

              <dd>
                {changes.length === 0 ? (
                  '—'
                ) : (
                  <ul className="break-all">
                    {/* `field: before → after` (the CSV export's form): the field's label, its values as the API's JSON
                        (data, in <code>). The parts are elements of their own: the line holds no loose text. */}
                    {changes.map(({ field, before, value }) => (
                      <li key={field}>
                        <span>{auditFieldText(field) ?? <code>{field}</code>}</span>
                        <span>{': '}</span>
                        {before !== null && (
                          <>
                            <code>{before}</code>
                            <span>{' → '}</span>
                          </>
                        )}
                        <code>{value}</code>
                      </li>
                    ))}
                  </ul>
                )}
              </dd>
            </dl>
          </td>
        </tr>
      )}
    </Fragment>
  );
}
