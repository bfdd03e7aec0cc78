import type { Domain, FoundService, Node } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useEffect, useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { Badge } from '../../components/ui/card';
import { Modal } from '../../components/ui/dialog';
import { Pagination } from '../../components/ui/pagination';
import { StatusDot } from '../../components/ui/status-dot';
import { t } from '../../i18n/i18n';
import { serviceOnNodeSearch } from '../../lib/list-search';
import {
  FIND_PAGE_SIZE,
  findDomainsQueryOptions,
  findNodesQueryOptions,
  findServicesQueryOptions,
} from '../../queries/find-services';
import { ServiceStatus, useServiceFacts } from '../services/service-status';

// Ctrl+K "Find": services, nodes and domains by name or address. Arrow keys move through the
// results, Enter in the search box opens the first one, and a service opens on its node's page with its Info shown.

/** The dialog's title in English (the tests look for it); the dialog shows `find.title` in the active language. */
export const FIND_TITLE = 'Find a service, node or domain';

const SEARCH_DELAY_MS = 300;

/** Waits for typing to pause, so each keystroke does not become a request. */
function useSettledText(text: string): string {
  const [settled, setSettled] = useState(text);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(text.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text]);
  return settled;
}

/** Arrow keys move between the results (and from the search box into them); Home/End jump to either end. */
function moveThroughResults(
  event: KeyboardEvent<HTMLElement>,
  list: HTMLElement | null,
  input: HTMLInputElement | null,
): void {
  const links = [...(list?.querySelectorAll<HTMLElement>('a') ?? [])];
  if (links.length === 0) return;
  const index = links.indexOf(document.activeElement as HTMLElement);
  const focus = (element: HTMLElement | null | undefined) => {
    event.preventDefault();
    element?.focus();
  };
  if (event.key === 'ArrowDown') focus(links[Math.min(index + 1, links.length - 1)]);
  else if (event.key === 'ArrowUp') focus(index <= 0 ? input : links[index - 1]);
  else if (event.key === 'Home' && index >= 0) focus(links[0]);
  else if (event.key === 'End' && index >= 0) focus(links[links.length - 1]);
}

const resultClass =
  'flex flex-col gap-1 rounded-md px-3 py-2 hover:bg-gray-100 focus-visible:bg-gray-100 focus-visible:outline-2 focus-visible:outline-brand-600 dark:hover:bg-gray-800 dark:focus-visible:bg-gray-800';

function Group({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section aria-labelledby={id} className="flex flex-col gap-1">
      <h3 id={id} className="px-3 text-xs font-semibold tracking-wide text-gray-600 uppercase dark:text-gray-300">
        {title}
      </h3>
      <ul aria-labelledby={id} className="flex flex-col gap-1">
        {children}
      </ul>
    </section>
  );
}

function ServiceResult({
  found,
  onPick,
  facts,
}: {
  found: FoundService;
  onPick: () => void;
  facts: ReturnType<typeof useServiceFacts>;
}) {
  const { service, type, nodeName } = found;
  return (
    <Link
      to="/nodes/$id"
      params={{ id: String(service.nodeId) }}
      search={serviceOnNodeSearch({ type, id: service.id, name: service.name })}
      onClick={onPick}
      className={resultClass}
    >
      <span className="flex flex-wrap items-center gap-2">
        <span className="font-medium">{service.name}</span>
        <Badge tone={type === 'http' ? 'blue' : 'purple'}>
          {'proto' in service ? service.proto.toUpperCase() : 'HTTP'}
        </Badge>
        <ServiceStatus service={service} facts={facts(service)} />
      </span>
      <span className="text-sm break-all text-gray-700 dark:text-gray-300">{service.publicAccess}</span>
      <span className="text-xs text-gray-600 dark:text-gray-400">{t('find.onNode', { name: nodeName })}</span>
    </Link>
  );
}

function NodeResult({ node, onPick }: { node: Node; onPick: () => void }) {
  return (
    <Link to="/nodes/$id" params={{ id: String(node.id) }} onClick={onPick} className={resultClass}>
      <span className="flex flex-wrap items-center gap-2">
        <span className="font-medium">{node.name}</span>
        {!node.isLocal && <StatusDot status={node.status} />}
        {node.isGateway && <Badge tone="blue">{t('nodes.type.gateway')}</Badge>}
      </span>
      {node.address && <span className="font-mono text-xs text-gray-600 dark:text-gray-400">{node.address}</span>}
    </Link>
  );
}

function DomainResult({ domain, onPick }: { domain: Domain; onPick: () => void }) {
  return (
    <Link to="/domains" search={{ q: domain.domain, open: domain.id }} onClick={onPick} className={resultClass}>
      <span className="font-medium break-all">{domain.domain}</span>
      <span className="text-xs text-gray-600 dark:text-gray-400">
        {domain.ownerNodeName ? t('find.assignedTo', { name: domain.ownerNodeName }) : t('find.adminDomain')}
      </span>
    </Link>
  );
}

export function FindDialog({ onClose }: { onClose: () => void }) {
  const inputId = useId();
  const inputRef = useRef<HTMLInputElement>(null);
  const resultsRef = useRef<HTMLDivElement>(null);
  const navigate = useNavigate();
  const [text, setText] = useState('');
  const [page, setPage] = useState(1);
  const q = useSettledText(text);
  // A new search starts at its first page (adjusted while rendering, not in an effect).
  const [searched, setSearched] = useState(q);
  if (searched !== q) {
    setSearched(q);
    setPage(1);
  }
  const isSearching = q !== '';
  const services = useQuery({ ...findServicesQueryOptions(q, page), enabled: isSearching });
  const nodes = useQuery({ ...findNodesQueryOptions(q), enabled: isSearching });
  const domains = useQuery({ ...findDomainsQueryOptions(q), enabled: isSearching });
  const facts = useServiceFacts();
  const foundServices = isSearching ? (services.data?.data ?? []) : [];
  const foundNodes = isSearching ? (nodes.data?.data ?? []) : [];
  const foundDomains = isSearching ? (domains.data?.data ?? []) : [];
  const queries = [services, nodes, domains];
  const isLoading = queries.some((query) => query.isPending || query.isPlaceholderData);
  const hasFailed = queries.some((query) => query.isError);
  const total = (services.data?.total ?? 0) + (nodes.data?.total ?? 0) + (domains.data?.total ?? 0);

  /** Enter in the search box: the first result, as a click on it would (its link closes the dialog). */
  const openFirst = () => {
    if (text.trim() !== q || isLoading) return;
    resultsRef.current?.querySelector<HTMLAnchorElement>('a')?.click();
  };

  let status: string;
  if (!isSearching) status = t('find.hint');
  else if (hasFailed) status = t('find.failed');
  else if (isLoading) status = t('find.searching');
  else if (total === 0) status = t('find.nothing', { query: q });
  else
    status = t('find.found', {
      services: services.data?.total ?? 0,
      nodes: nodes.data?.total ?? 0,
      domains: domains.data?.total ?? 0,
      query: q,
    });

  return (
    <Modal open title={t('find.title')} onClose={onClose}>
      <div
        className="flex flex-col gap-3 px-5 py-4"
        onKeyDown={(event) => moveThroughResults(event, resultsRef.current, inputRef.current)}
      >
        <label htmlFor={inputId} className="text-sm font-medium">
          {t('find.label')}
        </label>
        <input
          ref={inputRef}
          id={inputId}
          type="search"
          value={text}
          autoComplete="off"
          placeholder={t('find.placeholder')}
          aria-describedby={`${inputId}-status`}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key !== 'Enter') return;
            event.preventDefault();
            openFirst();
          }}
          className="w-full rounded-md border border-gray-300 bg-white px-3 py-2 text-sm placeholder:text-gray-500 dark:border-gray-600 dark:bg-gray-800 dark:placeholder:text-gray-400"
        />
        <p id={`${inputId}-status`} role="status" className="text-sm text-gray-600 dark:text-gray-300">
          {status}
        </p>
        <div ref={resultsRef} className="flex flex-col gap-3">
          {foundServices.length > 0 && (
            <Group id={`${inputId}-services`} title={t('find.group.services')}>
              {foundServices.map((found) => (
                <li key={`${found.type}:${String(found.service.id)}`}>
                  <ServiceResult found={found} onPick={onClose} facts={facts} />
                </li>
              ))}
            </Group>
          )}
          {foundNodes.length > 0 && (
            <Group id={`${inputId}-nodes`} title={t('find.group.nodes')}>
              {foundNodes.map((node) => (
                <li key={node.id}>
                  <NodeResult node={node} onPick={onClose} />
                </li>
              ))}
            </Group>
          )}
          {foundDomains.length > 0 && (
            <Group id={`${inputId}-domains`} title={t('find.group.domains')}>
              {foundDomains.map((domain) => (
                <li key={domain.id}>
                  <DomainResult domain={domain} onPick={onClose} />
                </li>
              ))}
            </Group>
          )}
        </div>
      </div>
      {services.data && isSearching && (
        <Pagination page={page} limit={FIND_PAGE_SIZE} total={services.data.total} onPageChange={setPage} />
      )}
      {/* A node or domain beyond the first few: their own lists, searched the same way. */}
      {isSearching &&
        ((nodes.data?.total ?? 0) > foundNodes.length || (domains.data?.total ?? 0) > foundDomains.length) && (
          <p className="px-5 pb-4 text-sm">
            {(nodes.data?.total ?? 0) > foundNodes.length && (
              <button
                type="button"
                className="mr-4 text-brand-600 underline dark:text-blue-400"
                onClick={() => {
                  onClose();
                  void navigate({ to: '/nodes', search: { q } });
                }}
              >
                {t('find.allNodes', { count: nodes.data?.total ?? 0 })}
              </button>
            )}
            {(domains.data?.total ?? 0) > foundDomains.length && (
              <button
                type="button"
                className="text-brand-600 underline dark:text-blue-400"
                onClick={() => {
                  onClose();
                  void navigate({ to: '/domains', search: { q } });
                }}
              >
                {t('find.allDomains', { count: domains.data?.total ?? 0 })}
              </button>
            )}
          </p>
        )}
    </Modal>
  );
}
