import { operations, ServiceTypeSchema } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { Fragment, useId, useState, type ReactNode } from 'react';
import { Breadcrumbs, type Crumb } from '../../components/ui/breadcrumbs';
import { Button } from '../../components/ui/button';
import { t, type MessageId } from '../../i18n/i18n';
import { call } from '../../lib/api';
import type { StreamState } from '../../lib/connection-store';
import { nodeQueryOptions } from '../../queries/nodes';
import type { LogLine } from './log-buffer';
import { LogViewer } from './log-viewer';
import { useLogLines, type LogSource } from './use-log-lines';

// Ids, not texts: a change of language renders again and reads them anew (the console's README, Languages).
const STREAM_STATE_TEXT: Record<StreamState, MessageId> = {
  connecting: 'logs.state.connecting',
  open: 'logs.state.open',
  retrying: 'logs.state.retrying',
};

const stateClasses: Record<StreamState, string> = {
  connecting: 'border-gray-400 text-gray-700 dark:text-gray-300',
  open: 'border-green-600 text-green-800 dark:border-green-500 dark:text-green-300',
  retrying: 'border-yellow-600 text-yellow-900 dark:border-yellow-500 dark:text-yellow-200',
};

function LogsScreen({ crumbs, source, subject }: { crumbs: Crumb[]; source: LogSource | null; subject?: ReactNode }) {
  const [state, setState] = useState<StreamState>('connecting');
  const lines = useLogLines(source, setState);
  // Beyond the spec: auto-updating lines can be paused (WCAG 2.2.2) and narrowed to the lines holding a text. While
  // paused the stream goes on (its last 1000 lines are kept); the view holds still and says how many are waiting.
  const [paused, setPaused] = useState<readonly LogLine[] | null>(null);
  const [filter, setFilter] = useState('');
  const filterId = useId();
  const held = paused ?? lines;
  const lastHeldId = paused?.at(-1)?.id ?? -1;
  const waiting = paused ? lines.filter((line) => line.id > lastHeldId).length : 0;
  const needle = filter.trim().toLowerCase();
  const shown = needle ? held.filter((line) => line.text.toLowerCase().includes(needle)) : held;
  return (
    <div className="space-y-4">
      <Breadcrumbs items={crumbs} />
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div>
          <h1 className="text-xl font-semibold">{t('logs.title')}</h1>
          {subject && <p className="text-sm text-gray-700 dark:text-gray-300">{subject}</p>}
        </div>
        {/* Beyond the spec: whether lines can arrive at all, in words (not by colour alone). */}
        <p role="status" className={`rounded-full border px-3 py-0.5 text-xs font-medium ${stateClasses[state]}`}>
          <span className="sr-only">{t('logs.stream')} </span>
          {t(STREAM_STATE_TEXT[state])}
        </p>
      </div>
      <div className="flex flex-wrap items-center gap-3">
        <Button variant="secondary" onClick={() => setPaused(paused ? null : lines)}>
          {t(paused ? 'logs.resume' : 'logs.pause')}
        </Button>
        <label className="sr-only" htmlFor={filterId}>
          {t('logs.filter')}
        </label>
        <input
          id={filterId}
          type="search"
          value={filter}
          placeholder={t('logs.filterPlaceholder')}
          onChange={(event) => setFilter(event.target.value)}
          className="w-64 max-w-full rounded-md border border-gray-300 bg-white px-3 py-1.5 text-sm placeholder:text-gray-500 dark:border-gray-600 dark:bg-gray-800 dark:placeholder:text-gray-400"
        />
        <p aria-live="polite" className="text-sm text-gray-700 dark:text-gray-300">
          {paused && (waiting > 0 ? t('logs.pausedWaiting', { count: waiting }) : t('logs.paused'))}
        </p>
      </div>
      <LogViewer
        lines={shown}
        emptyText={held.length > 0 ? t('logs.noMatch', { filter: filter.trim() }) : t('logs.waiting')}
      />
    </div>
  );
}

type LogRouteParams = { domain?: string; nodeId?: string; type?: string; id?: string };

/** Not bound to a route object, so the router can mount it anywhere (strict: false). */
function useLogRouteParams(): LogRouteParams {
  return useParams({ strict: false });
}

/** /domains/$domain/logs */
export function DomainLogsPage() {
  const { domain = '' } = useLogRouteParams();
  return (
    <LogsScreen
      crumbs={[{ label: t('logs.crumb.domains'), to: '/domains' }, { label: domain }, { label: t('logs.title') }]}
      source={domain ? { domain } : null}
    />
  );
}

/** /nodes/$nodeId/$type/$id/logs */
export function ServiceLogsPage() {
  const { nodeId = '', type = '', id = '' } = useLogRouteParams();
  return (
    <LogsScreen
      subject={<ServiceSubject nodeId={Number(nodeId)} type={type} id={Number(id)} />}
      crumbs={[
        { label: t('logs.crumb.nodes'), to: '/nodes' },
        { label: t('logs.crumb.services', { type: type.toUpperCase() }), to: `/nodes/${encodeURIComponent(nodeId)}` },
        { label: t('logs.title') },
      ]}
      // An unknown type names no stream: opening it would only fail and retry every second.
      source={ServiceTypeSchema.safeParse(type).success && id ? { type, id } : null}
    />
  );
}

/** Beyond the spec: which service these lines are from, and on which node (once both are loaded). */
function ServiceSubject({ nodeId, type, id }: { nodeId: number; type: string; id: number }) {
  const isValid = ServiceTypeSchema.safeParse(type).success && Number.isInteger(nodeId) && Number.isInteger(id);
  const node = useQuery({ ...nodeQueryOptions(nodeId), enabled: isValid });
  const service = useQuery({
    queryKey: ['services', type, 'one', nodeId, id],
    queryFn: ({ signal }) => call(operations.getService, { params: { nodeId, type, id }, signal }),
    enabled: isValid,
  });
  if (!service.data || !node.data) return null;
  // Both names in bold, where the language puts them.
  const names: Record<string, string> = { '\uE000': service.data.name, '\uE001': node.data.name };
  const parts = t('logs.subject', { service: '\uE000', node: '\uE001' }).split(/([\uE000\uE001])/);
  return (
    <>
      {parts.map((part, index) => (
        <Fragment key={index}>{Object.hasOwn(names, part) ? <strong>{names[part]}</strong> : part}</Fragment>
      ))}
    </>
  );
}
