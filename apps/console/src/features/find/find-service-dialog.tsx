import type { FoundService } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { Badge } from '../../components/ui/card';
import { Modal } from '../../components/ui/dialog';
import { Pagination } from '../../components/ui/pagination';
import { ExposureStatus } from '../../components/ui/status-dot';
import { FIND_PAGE_SIZE, findServicesQueryOptions } from '../../queries/find-services';
import { isPubliclyExposed } from '../services/service-display';

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

function ResultLink({ found, onPick }: { found: FoundService; onPick: () => void }) {
  const { service, type, nodeName } = found;
  // The node page's table of that type, searched for the service's name: the service is the first row.
  const search = type === 'http' ? { httpQ: service.name } : { tcpQ: service.name };
  return (
    <Link
      to="/nodes/$id"
      params={{ id: String(service.nodeId) }}
      search={search}
      onClick={onPick}
      className="flex flex-col gap-1 rounded-md px-3 py-2 hover:bg-gray-100 focus-visible:bg-gray-100 focus-visible:outline-2 focus-visible:outline-brand-600 dark:hover:bg-gray-800 dark:focus-visible:bg-gray-800"
    >
      <span className="flex flex-wrap items-center gap-2">
        <span className="font-medium">{service.name}</span>
        <Badge tone={type === 'http' ? 'blue' : 'purple'}>
          {type === 'http' ? 'HTTP' : 'proto' in service ? service.proto.toUpperCase() : 'TCP'}
        </Badge>
        <ExposureStatus isExposed={isPubliclyExposed(service)} />
      </span>
      <span className="text-sm break-all text-gray-700 dark:text-gray-300">{service.publicAccess}</span>
      <span className="text-xs text-gray-600 dark:text-gray-400">on node {nodeName}</span>
    </Link>
  );
}

/** "Find service": every node's services by name or public address, each linking to its node's service table. */
export function FindServiceDialog({ onClose }: { onClose: () => void }) {
  const inputId = useId();
  const inputRef = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const [text, setText] = useState('');
  const [page, setPage] = useState(1);
  const q = useSettledText(text);
  // A new search starts at its first page (adjusted while rendering, not in an effect).
  const [searched, setSearched] = useState(q);
  if (searched !== q) {
    setSearched(q);
    setPage(1);
  }
  const query = useQuery({ ...findServicesQueryOptions(q, page), enabled: q !== '' });
  const found = query.data?.data ?? [];

  return (
    <Modal open title="Find service" onClose={onClose}>
      <div
        className="flex flex-col gap-3 px-5 py-4"
        onKeyDown={(event) => moveThroughResults(event, listRef.current, inputRef.current)}
      >
        <label htmlFor={inputId} className="text-sm font-medium">
          Name or public address
        </label>
        <input
          ref={inputRef}
          id={inputId}
          type="search"
          value={text}
          autoComplete="off"
          placeholder="e.g. grafana, app.example.com/api or 30001"
          aria-describedby={`${inputId}-status`}
          onChange={(event) => setText(event.target.value)}
          className="w-full rounded-md border border-gray-300 bg-white px-3 py-2 text-sm placeholder:text-gray-500 dark:border-gray-600 dark:bg-gray-800 dark:placeholder:text-gray-400"
        />
        <p id={`${inputId}-status`} role="status" className="text-sm text-gray-600 dark:text-gray-300">
          {q === ''
            ? 'Type a service name, a domain, a path or a port.'
            : query.isError
              ? 'The services could not be searched. Check your connection and try again.'
              : query.isPending || query.isPlaceholderData
                ? 'Searching…'
                : query.data.total === 0
                  ? `No services match “${q}”.`
                  : `${query.data.total} ${query.data.total === 1 ? 'service matches' : 'services match'} “${q}”.`}
        </p>
        {found.length > 0 && (
          <ul ref={listRef} aria-label="Matching services" className="flex flex-col gap-1">
            {found.map((item) => (
              <li key={`${item.type}:${item.service.id}`}>
                <ResultLink found={item} onPick={onClose} />
              </li>
            ))}
          </ul>
        )}
      </div>
      {query.data && <Pagination page={page} limit={FIND_PAGE_SIZE} total={query.data.total} onPageChange={setPage} />}
    </Modal>
  );
}
