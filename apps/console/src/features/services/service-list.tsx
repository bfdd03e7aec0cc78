import type { ServiceType } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { lazy, Suspense, useCallback, useState, type ReactNode } from 'react';
import { PageSizeSelect, SearchField, SortableTh } from '../../components/ui/list-controls';
import { ActionMenu, type MenuItem } from '../../components/ui/menu';
import { Pagination, useClampPage } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import { serviceFiguresQueryOptions } from '../../queries/observe';
import { useObserveStream } from '../../queries/observe-stream';
import {
  SERVICE_PAGE_SIZES,
  serviceViewFromSearch,
  serviceViewToSearch,
  type NodeDetailSearch,
  type ServiceListView,
  type ServiceSortKey,
} from '../../lib/list-search';
import { serviceListQueryOptions, type AnyService, type ServiceScope } from '../../queries/services';
import { LabelSourceBadge } from './label-source-badge';
import { ExpiryNote } from './service-expiry';
import { ServiceRowFigures } from '../observe/service-row-figures';
import { ServiceInfoDialog } from './service-info-dialog';
import { describeBackend } from './service-display';
import { ServiceStatus, useServiceFacts } from './service-status';
import type { ServiceFacts } from './service-truth';
import { useServiceActions } from './use-service-actions';
import { useCan } from '../../queries/account';
import { t, type MessageId } from '../../i18n/i18n';

type Service = AnyService;

// Beyond the spec (docs/ACCESS.md): an HTTP service's policy, share links and visitor sessions; loaded on first use.
const VisitorAccessDialog = lazy(() =>
  import('../access/visitor-access-dialog').then((module) => ({ default: module.VisitorAccessDialog })),
);

type ServiceListProps = {
  type: ServiceType;
  /** Inside a node the rows can be edited; elsewhere (a domain's row) they link to their node instead. */
  scope: ServiceScope;
  /** Shown when the list is empty. */
  empty: ReactNode;
  /** Node scope: opens the edit form for a row. */
  onEdit?: (service: Service) => void;
  /** Search, page, page size and sort: the pages keep them in the URL; without them the table keeps its own. */
  view?: ServiceListView;
  onViewChange?: (next: Partial<ServiceListView>, replace?: boolean) => void;
  /** What the page knows of every row's node (the node page) or certificate (a domain's row). */
  facts?: ServiceFacts;
};

/** A table's view held in component state (tables whose view is not part of the URL). */
export function useLocalServiceView(): [ServiceListView, (next: Partial<ServiceListView>) => void] {
  const [view, setView] = useState<ServiceListView>({});
  return [view, useCallback((next: Partial<ServiceListView>) => setView((current) => ({ ...current, ...next })), [])];
}

/**
 * A table's search, page, page size and sort in the page's URL (Back returns to the same view; a link shares it).
 * `prefix` tells apart pages holding several pairs of tables (the domains list's expanded rows).
 */
export function useUrlServiceView(
  type: ServiceType,
  prefix = '',
): [ServiceListView, (next: Partial<ServiceListView>, replace?: boolean) => void] {
  // Not strict: the tables also render outside their routes (component tests); each reads its own keys only.
  const search: Record<string, unknown> = useSearch({ strict: false });
  const navigate = useNavigate();
  const onViewChange = useCallback(
    (next: Partial<ServiceListView>, replace = false) =>
      void navigate({
        to: '.',
        search: (prev: NodeDetailSearch) => ({ ...prev, ...serviceViewToSearch(next, type, prefix) }),
        replace,
        resetScroll: false,
      }),
    [navigate, type, prefix],
  );
  return [serviceViewFromSearch(search, type, prefix), onViewChange];
}

const searchLabels: Record<ServiceType, MessageId> = {
  http: 'services.searchHttp',
  tcp: 'services.searchTcp',
};

/** The public address (wrapping, never pushing the row's menu out of view) and where the gateway forwards to. */
export function PublicAddress({ service }: { service: AnyService }) {
  return (
    <div className="min-w-32 break-all whitespace-normal">
      <a
        href={service.publicAccess}
        target="_blank"
        rel="noreferrer"
        className="text-brand-600 hover:underline dark:text-blue-400"
      >
        {service.publicAccess}
      </a>
      <p className="text-xs text-gray-600 dark:text-gray-300">
        {t('services.proxyTo', { backend: describeBackend(service) })}
      </p>
    </div>
  );
}

/** A paged (5 by default) list of one type of services, with the row menu of the spec's "Screens and routes". */
export function ServiceList({ type, scope, empty, onEdit, facts, ...controlled }: ServiceListProps) {
  const [localView, setLocalView] = useLocalServiceView();
  const view = controlled.view ?? localView;
  const onViewChange = controlled.onViewChange ?? setLocalView;
  const page = view.page ?? 1;
  const setPage = useCallback((next: number) => onViewChange({ page: next === 1 ? undefined : next }), [onViewChange]);
  const [infoService, setInfoService] = useState<Service | null>(null);
  const [visitorService, setVisitorService] = useState<Service | null>(null);
  const query = useQuery(serviceListQueryOptions(type, scope, view));
  const figures = useQuery(serviceFiguresQueryOptions(scope.kind === 'node' ? scope.nodeId : null));
  useObserveStream();
  const figuresOf = (id: number) => figures.data?.data.find((f) => f.type === type && f.id === id);
  const actions = useServiceActions(type);
  const factsOf = useServiceFacts(facts);
  const navigate = useNavigate();
  // A viewer reads; changes are for the roles that may operate (the contract's role table).
  const mayOperate = useCan('operate');

  const rows = query.data?.data ?? [];
  useClampPage(page, query.data?.limit ?? 1, query.isSuccess ? query.data.total : undefined, setPage);
  const onSort = (sort: ServiceSortKey, order: 'asc' | 'desc') => onViewChange({ sort, order, page: undefined });

  const menuFor = (service: Service): MenuItem[] => [
    { label: t('services.menu.info'), onSelect: () => setInfoService(service) },
    {
      label: t('services.menu.logs'),
      onSelect: () =>
        void navigate({
          to: '/nodes/$nodeId/$type/$id/logs',
          params: { nodeId: String(service.nodeId), type, id: String(service.id) },
        }),
    },
    {
      label: t('access.title'),
      onSelect: () => setVisitorService(service),
      isHidden: !('pathLocation' in service) || !mayOperate,
    },
    scope.kind === 'node'
      ? { label: t('services.menu.edit'), onSelect: () => onEdit?.(service), isHidden: !onEdit || !mayOperate }
      : {
          label: t('services.menu.goToNode'),
          onSelect: () => void navigate({ to: '/nodes/$id', params: { id: String(service.nodeId) } }),
        },
    service.enabled
      ? {
          label: t('services.menu.disable'),
          onSelect: () => void actions.disableAccess(service),
          isHidden: !mayOperate,
        }
      : {
          label: t('services.menu.enable'),
          onSelect: () => void actions.enableAccess(service),
          isHidden: !mayOperate,
        },
    {
      label: t('services.menu.delete'),
      onSelect: () => void actions.remove(service),
      isDanger: true,
      isHidden: !mayOperate,
    },
  ];

  if (query.isPending) {
    return (
      <div className="flex justify-center py-8">
        <Spinner label={t('services.loading')} />
      </div>
    );
  }
  if (query.isError) {
    return <p className="px-4 py-6 text-sm text-red-600 dark:text-red-400">{t('services.loadError')}</p>;
  }
  if (query.data.total === 0 && !view.q) return <>{empty}</>;

  const limit = query.data.limit;
  return (
    <>
      <div className="flex flex-wrap items-center justify-between gap-2 px-4 py-2">
        <SearchField
          label={t(searchLabels[type])}
          value={view.q ?? ''}
          onSearch={(text) => onViewChange({ q: text || undefined, page: undefined }, true)}
        />
        <PageSizeSelect
          sizes={SERVICE_PAGE_SIZES}
          value={limit}
          onChange={(size) =>
            onViewChange({ limit: size === SERVICE_PAGE_SIZES[0] ? undefined : size, page: undefined })
          }
        />
      </div>
      {rows.length === 0 ? (
        <p role="status" className="px-4 py-6 text-center text-sm text-gray-600 dark:text-gray-300">
          {t('services.noMatch', { type: type === 'http' ? 'HTTP' : 'TCP', query: view.q ?? '' })}
        </p>
      ) : (
        <Table>
          <THead>
            <SortableTh
              label={t('services.column.name')}
              sortKey="name"
              sort={view.sort}
              order={view.order}
              onSort={onSort}
            />
            <SortableTh
              label={t('services.column.status')}
              sortKey="status"
              sort={view.sort}
              order={view.order}
              onSort={onSort}
              className="hidden sm:table-cell"
            />
            <Th className="hidden sm:table-cell">{t('services.column.publicAccess')}</Th>
            <Th>
              <span className="sr-only">{t('ui.actions')}</span>
            </Th>
          </THead>
          <TBody>
            {rows.map((service) => (
              <Tr key={service.id}>
                <Td className="whitespace-normal">
                  <span className="font-medium break-all" data-testid="service-name">
                    {service.name}
                  </span>
                  <LabelSourceBadge source={service.source} />
                  {/* Phones show the status and the address under the name: name and menu stay in view. */}
                  <span className="mt-1 flex sm:hidden">
                    <ServiceStatus service={service} facts={factsOf(service)} />
                  </span>
                  <div className="mt-1 sm:hidden">
                    <PublicAddress service={service} />
                  </div>
                  <ExpiryNote service={service} />
                  <ServiceRowFigures figures={figuresOf(service.id)} type={type} />
                  {service.applyError && (
                    <p className="mt-1 max-w-xs text-xs break-words text-red-600 dark:text-red-400">
                      {service.applyError}
                    </p>
                  )}
                </Td>
                <Td className="hidden sm:table-cell">
                  <ServiceStatus service={service} facts={factsOf(service)} />
                </Td>
                <Td className="hidden sm:table-cell">
                  <PublicAddress service={service} />
                </Td>
                <Td className="w-px text-right">
                  <ActionMenu label={t('services.actionsFor', { name: service.name })} items={menuFor(service)} />
                </Td>
              </Tr>
            ))}
          </TBody>
        </Table>
      )}
      <Pagination
        page={page}
        limit={limit}
        total={query.data.total}
        onPageChange={setPage}
        isLoading={query.isPlaceholderData}
      />
      <ServiceInfoDialog service={infoService} onClose={() => setInfoService(null)} />
      {visitorService && 'pathLocation' in visitorService && (
        <Suspense fallback={null}>
          <VisitorAccessDialog service={visitorService} onClose={() => setVisitorService(null)} />
        </Suspense>
      )}
    </>
  );
}
