import { AUDIT_ACTOR_KINDS, AuditEventSchema, defaults, limits, operations, type AuditEntry } from '@postern/contract';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { SelectField, TextField } from '../../components/ui/form-field';
import { Pagination } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import { openStream } from '../../lib/sse';
import { auditKeys, auditListQueryOptions } from '../../queries/audit';
import { nodeListQueryOptions } from '../../queries/nodes';
import {
  describeActor,
  describeChanges,
  EMPTY_AUDIT_FILTER,
  toAuditFilter,
  type AuditFilterValues,
} from './audit-filters';

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
        <h1 className="text-2xl font-semibold">Audit Log</h1>
        <span className="text-xs text-gray-500 dark:text-gray-400" data-testid="audit-live">
          Live: new entries appear as they are recorded
        </span>
      </div>
      <Card>
        <form
          aria-label="Audit filters"
          className="grid gap-3 p-4 sm:grid-cols-2 lg:grid-cols-3"
          onSubmit={(event) => {
            event.preventDefault();
            apply(draft);
          }}
        >
          <SelectField
            label="Node"
            name="node"
            value={draft.node}
            onChange={set('node')}
            options={[
              { value: '', label: 'All nodes' },
              ...(nodes.data?.data ?? []).map((node) => ({ value: String(node.id), label: node.name })),
            ]}
          />
          <TextField
            label="Domain"
            name="domain"
            placeholder="app.example.com"
            value={draft.domain}
            onChange={set('domain')}
          />
          <SelectField
            label="Actor"
            name="actor"
            value={draft.actor}
            onChange={(value) =>
              setDraft((current) => ({ ...current, actor: AUDIT_ACTOR_KINDS.find((kind) => kind === value) ?? '' }))
            }
            options={[
              { value: '', label: 'Anyone' },
              ...AUDIT_ACTOR_KINDS.map((kind) => ({ value: kind, label: kind })),
            ]}
          />
          <TextField
            label="Action"
            name="action"
            placeholder="service or service.update"
            value={draft.action}
            onChange={set('action')}
          />
          <TextField label="From" name="from" type="datetime-local" value={draft.from} onChange={set('from')} />
          <TextField label="To" name="to" type="datetime-local" value={draft.to} onChange={set('to')} />
          <div className="flex gap-2 sm:col-span-2 lg:col-span-3">
            <Button type="submit">Apply Filters</Button>
            <Button
              type="button"
              variant="secondary"
              onClick={() => {
                setDraft(EMPTY_AUDIT_FILTER);
                apply(EMPTY_AUDIT_FILTER);
              }}
            >
              Clear
            </Button>
          </div>
        </form>
      </Card>
      <Card>
        {query.isPending ? (
          <div className="flex justify-center py-10">
            <Spinner label="Loading the audit log" />
          </div>
        ) : query.isError ? (
          <p className="px-4 py-6 text-sm text-red-600 dark:text-red-400">
            Could not load the audit log: {query.error.message}
          </p>
        ) : query.data.total === 0 ? (
          <p className="px-4 py-6 text-sm text-gray-500 dark:text-gray-400">No entries match these filters.</p>
        ) : (
          <>
            <Table>
              <THead>
                <Th>When</Th>
                <Th>Who</Th>
                <Th>Action</Th>
                <Th>Target</Th>
                <Th className="hidden md:table-cell">Changes</Th>
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

function AuditRow({ entry }: { entry: AuditEntry }) {
  const changes = describeChanges(entry.before, entry.after);
  return (
    <Tr>
      <Td className="whitespace-nowrap">{new Date(entry.at).toLocaleString()}</Td>
      <Td>
        <div>{describeActor(entry.actor)}</div>
        {entry.address && <div className="text-xs text-gray-500 dark:text-gray-400">{entry.address}</div>}
      </Td>
      <Td>
        <code className="text-xs">{entry.action}</code>
        {entry.detail && (
          <p className="mt-1 max-w-xs truncate text-xs text-gray-500 dark:text-gray-400" title={entry.detail}>
            {entry.detail}
          </p>
        )}
      </Td>
      <Td>
        {entry.target
          ? `${entry.target.type}${entry.target.id === null ? '' : ` #${entry.target.id}`} ${entry.target.name ?? ''}`
          : '—'}
        {entry.domain && <div className="text-xs text-gray-500 dark:text-gray-400">{entry.domain}</div>}
      </Td>
      <Td className="hidden md:table-cell">
        <ul className="max-w-md text-xs break-all text-gray-600 dark:text-gray-300">
          {changes.slice(0, 6).map((line) => (
            <li key={line}>{line}</li>
          ))}
          {changes.length > 6 && <li>… {changes.length - 6} more</li>}
        </ul>
      </Td>
    </Tr>
  );
}
