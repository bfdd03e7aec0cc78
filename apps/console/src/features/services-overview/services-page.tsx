import { defaults, limits, type ServiceOverview } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useCallback, useState } from 'react';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { EmptyState } from '../../components/ui/empty-state';
import { SelectField } from '../../components/ui/form-field';
import { PageSizeSelect, SearchField, SortableTh } from '../../components/ui/list-controls';
import { ActionMenu, type MenuItem } from '../../components/ui/menu';
import { Pagination, useClampPage } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { StatusDot } from '../../components/ui/status-dot';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import {
  OVERVIEW_KINDS,
  OVERVIEW_STATUSES,
  validateServicesSearch,
  type OverviewSort,
  type ServicesSearch,
} from '../../lib/list-search';
import { domainOptionsQueryOptions } from '../../queries/domains';
import { nodeListQueryOptions } from '../../queries/nodes';
import { useObserveStream } from '../../queries/observe-stream';
import {
  pageFiguresQueryOptions,
  serviceOverviewQueryOptions,
  toOverviewRequest,
} from '../../queries/service-overview';
import { ServiceRowFigures } from '../observe/service-row-figures';
import { ExpiryNote } from '../services/service-expiry';
import { ServiceInfoDialog } from '../services/service-info-dialog';
import { PublicAddress } from '../services/service-list';
import { ServiceStatus } from '../services/service-status';
import type { ServiceFacts } from '../services/service-truth';
import { useServiceActions } from '../services/use-service-actions';
import { t, withSlot, type MessageId } from '../../i18n/i18n';

// /services (beyond the spec's pages): every published service across nodes in one table, searched,
// filtered (status, node, domain, kind), sorted and paged on the server; each row with the same figures as on its
// node's page. The whole view lives in the URL, so Back and shared links return to it.

const STATUS_LABELS: Record<(typeof OVERVIEW_STATUSES)[number], MessageId> = {
  public: 'ui.public',
  disabled: 'services.status.disabled',
  'set-aside': 'services.status.setAside',
  'node-offline': 'services.status.nodeOffline',
  'backend-down': 'services.status.backendDown',
  'certificate-failed': 'services.status.certificateFailed',
};
const KIND_LABELS: Record<(typeof OVERVIEW_KINDS)[number], string> = { http: 'HTTP', tcp: 'TCP', udp: 'UDP' };

const kindOf = (row: ServiceOverview): (typeof OVERVIEW_KINDS)[number] =>
  'proto' in row.service ? row.service.proto : 'http';

const factsOf = (row: ServiceOverview): ServiceFacts => ({ node: row.node, certificate: row.certificate });

function KindBadge({ row }: { row: ServiceOverview }) {
  const kind = kindOf(row);
  return <Badge tone={kind === 'http' ? 'blue' : 'purple'}>{KIND_LABELS[kind]}</Badge>;
}

export function ServicesPage() {
  // Not strict, so the page also renders outside the app's route tree (component tests).
  const search = validateServicesSearch(useSearch({ strict: false }));
  const navigate = useNavigate();
  const setView = useCallback(
    (next: Partial<ServicesSearch>, replace = false) =>
      void navigate({ to: '.', search: (prev: ServicesSearch) => ({ ...prev, ...next }), replace }),
    [navigate],
  );
  const request = toOverviewRequest(search);
  const page = request.page;
  const setPage = useCallback((next: number) => setView({ page: next === 1 ? undefined : next }), [setView]);
  const query = useQuery(serviceOverviewQueryOptions(request));
  const rows = query.data?.data ?? [];
  const figures = useQuery(pageFiguresQueryOptions(rows));
  useObserveStream();
  useClampPage(page, request.limit, query.data?.total, setPage);
  const nodes = useQuery(nodeListQueryOptions({ page: 1, limit: limits.listMaxLimit, sort: 'name' }));
  const domains = useQuery(domainOptionsQueryOptions());
  const [infoRow, setInfoRow] = useState<ServiceOverview | null>(null);
  const httpActions = useServiceActions('http');
  const tcpActions = useServiceActions('tcp');

  const onNode = withSlot('services.onNode', 'node');
  const hasFilters = Boolean(search.q ?? search.kind ?? search.status ?? search.node ?? search.domain);
  const clearFilters = () =>
    setView({ q: undefined, kind: undefined, status: undefined, node: undefined, domain: undefined, page: undefined });
  const onSort = (sort: OverviewSort, order: 'asc' | 'desc') => setView({ sort, order, page: undefined });
  const figuresOf = (row: ServiceOverview) =>
    figures.data?.data.find((f) => f.type === row.type && f.id === row.service.id);

  const menuFor = (row: ServiceOverview): MenuItem[] => {
    const actions = row.type === 'http' ? httpActions : tcpActions;
    const { service } = row;
    return [
      { label: t('services.menu.info'), onSelect: () => setInfoRow(row) },
      {
        label: t('services.menu.logs'),
        onSelect: () =>
          void navigate({
            to: '/nodes/$nodeId/$type/$id/logs',
            params: { nodeId: String(service.nodeId), type: row.type, id: String(service.id) },
          }),
      },
      {
        label: t('services.menu.goToNode'),
        onSelect: () => void navigate({ to: '/nodes/$id', params: { id: String(service.nodeId) } }),
      },
      service.enabled
        ? { label: t('services.menu.disable'), onSelect: () => void actions.disableAccess(service) }
        : { label: t('services.menu.enable'), onSelect: () => void actions.enableAccess(service) },
      { label: t('services.menu.delete'), onSelect: () => void actions.remove(service), isDanger: true },
    ];
  };

  // A node or domain named in the URL but not among the first options is still offered, by its id or name.
  const nodeOptions = (nodes.data?.data ?? []).map((node) => ({ value: String(node.id), label: node.name }));
  if (search.node && !nodeOptions.some((option) => option.value === String(search.node)))
    nodeOptions.push({ value: String(search.node), label: t('services.filter.nodeNumber', { id: search.node }) });
  const domainOptions = (domains.data?.data ?? []).map((domain) => ({ value: domain.domain, label: domain.domain }));
  if (search.domain && !domainOptions.some((option) => option.value === search.domain))
    domainOptions.push({ value: search.domain, label: search.domain });

  return (
    <div className="flex flex-col gap-4">
      <h1 className="text-2xl font-bold">{t('services.title')}</h1>
      <form
        aria-label={t('services.filter')}
        onSubmit={(event) => event.preventDefault()}
        className="grid grid-cols-2 gap-3 lg:grid-cols-5"
      >
        <div className="col-span-2 flex flex-col gap-1 lg:col-span-1">
          <span aria-hidden="true" className="text-sm font-medium text-gray-700 dark:text-gray-200">
            {t('services.filter.search')}
          </span>
          <SearchField
            label={t('services.searchAll')}
            value={search.q ?? ''}
            onSearch={(text) => setView({ q: text || undefined, page: undefined }, true)}
          />
        </div>
        <SelectField
          label={t('services.column.status')}
          name="status"
          value={search.status ?? ''}
          onChange={(value) =>
            setView({ status: OVERVIEW_STATUSES.find((status) => status === value), page: undefined })
          }
          options={[
            { value: '', label: t('services.filter.anyStatus') },
            ...OVERVIEW_STATUSES.map((status) => ({ value: status, label: t(STATUS_LABELS[status]) })),
          ]}
        />
        <SelectField
          label={t('services.column.kind')}
          name="kind"
          value={search.kind ?? ''}
          onChange={(value) => setView({ kind: OVERVIEW_KINDS.find((kind) => kind === value), page: undefined })}
          options={[
            { value: '', label: t('services.filter.anyKind') },
            ...OVERVIEW_KINDS.map((kind) => ({ value: kind, label: KIND_LABELS[kind] })),
          ]}
        />
        <SelectField
          label={t('services.column.node')}
          name="node"
          value={search.node ? String(search.node) : ''}
          onChange={(value) => setView({ node: value ? Number(value) : undefined, page: undefined })}
          options={[{ value: '', label: t('services.filter.allNodes') }, ...nodeOptions]}
        />
        <SelectField
          label={t('services.column.domain')}
          name="domain"
          value={search.domain ?? ''}
          onChange={(value) => setView({ domain: value || undefined, page: undefined })}
          options={[{ value: '', label: t('services.filter.allDomains') }, ...domainOptions]}
        />
      </form>
      <Card>
        {query.isPending ? (
          <div className="flex justify-center py-10">
            <Spinner label={t('services.loading')} />
          </div>
        ) : query.isError ? (
          <p className="px-4 py-6 text-sm text-red-600 dark:text-red-400">{t('services.loadError')}</p>
        ) : query.data.total === 0 && !hasFilters ? (
          <EmptyState
            title={t('services.empty')}
            description={t('services.emptyHint')}
            actionLabel={t('services.emptyAction')}
            onAction={() => void navigate({ to: '/nodes' })}
          />
        ) : query.data.total === 0 ? (
          <div
            role="status"
            className="flex flex-col items-center gap-3 px-4 py-10 text-sm text-gray-600 dark:text-gray-300"
          >
            <p>{t('services.noFilterMatch')}</p>
            <Button variant="secondary" onClick={clearFilters}>
              {t('services.clearFilters')}
            </Button>
          </div>
        ) : (
          <>
            <Table>
              <THead>
                <SortableTh
                  label={t('services.column.name')}
                  sortKey="name"
                  sort={search.sort}
                  order={search.order}
                  onSort={onSort}
                />
                <SortableTh
                  label={t('services.column.kind')}
                  sortKey="kind"
                  sort={search.sort}
                  order={search.order}
                  onSort={onSort}
                  className="hidden lg:table-cell"
                />
                <SortableTh
                  label={t('services.column.node')}
                  sortKey="node"
                  sort={search.sort}
                  order={search.order}
                  onSort={onSort}
                  className="hidden md:table-cell"
                />
                <SortableTh
                  label={t('services.column.status')}
                  sortKey="status"
                  sort={search.sort}
                  order={search.order}
                  onSort={onSort}
                  className="hidden sm:table-cell"
                />
                <Th className="hidden sm:table-cell">{t('services.column.publicAccess')}</Th>
                <Th>
                  <span className="sr-only">{t('ui.actions')}</span>
                </Th>
              </THead>
              <TBody>
                {rows.map((row) => (
                  <Tr key={`${row.type}:${String(row.service.id)}`}>
                    <Td className="whitespace-normal">
                      <div className="flex flex-wrap items-center gap-2">
                        <span className="font-medium break-all" data-testid="service-name">
                          {row.service.name}
                        </span>
                        <span className="lg:hidden">
                          <KindBadge row={row} />
                        </span>
                      </div>
                      {/* Phones and tablets show the node and the status under the name. */}
                      <div className="mt-1 text-xs text-gray-600 md:hidden dark:text-gray-300">
                        {onNode[0]}
                        <Link
                          to="/nodes/$id"
                          params={{ id: String(row.node.id) }}
                          className="text-brand-600 hover:underline dark:text-blue-400"
                        >
                          {row.node.name}
                        </Link>
                        {onNode[1]}
                      </div>
                      {/* Phones keep name and menu in view: status and address go under the name. */}
                      <span className="mt-1 flex sm:hidden">
                        <ServiceStatus service={row.service} facts={factsOf(row)} />
                      </span>
                      <div className="mt-1 sm:hidden">
                        <PublicAddress service={row.service} />
                      </div>
                      <ExpiryNote service={row.service} />
                      <ServiceRowFigures figures={figuresOf(row)} type={row.type} />
                      {row.service.applyError && (
                        <p className="mt-1 max-w-xs text-xs break-words text-red-600 dark:text-red-400">
                          {row.service.applyError}
                        </p>
                      )}
                    </Td>
                    <Td className="hidden lg:table-cell">
                      <KindBadge row={row} />
                    </Td>
                    <Td className="hidden md:table-cell">
                      <div className="flex items-center gap-2">
                        {!row.node.isLocal && <StatusDot status={row.node.status} />}
                        <Link
                          to="/nodes/$id"
                          params={{ id: String(row.node.id) }}
                          className="font-medium text-brand-600 hover:underline dark:text-blue-400"
                        >
                          {row.node.name}
                        </Link>
                      </div>
                    </Td>
                    <Td className="hidden sm:table-cell">
                      <ServiceStatus service={row.service} facts={factsOf(row)} />
                    </Td>
                    <Td className="hidden sm:table-cell">
                      <PublicAddress service={row.service} />
                    </Td>
                    <Td className="w-px text-right">
                      <ActionMenu label={t('services.actionsFor', { name: row.service.name })} items={menuFor(row)} />
                    </Td>
                  </Tr>
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
            <div className="flex justify-end border-t border-gray-200 px-4 py-2 dark:border-gray-800">
              <PageSizeSelect
                value={request.limit}
                onChange={(size) => setView({ limit: size === defaults.pageSize ? undefined : size, page: undefined })}
              />
            </div>
          </>
        )}
      </Card>
      <ServiceInfoDialog service={infoRow?.service ?? null} onClose={() => setInfoRow(null)} />
    </div>
  );
}
