import type { ServiceType } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState, type ReactNode } from 'react';
import { ActionMenu, type MenuItem } from '../../components/ui/menu';
import { Pagination } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { ExposureDot } from '../../components/ui/status-dot';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import { serviceFiguresQueryOptions } from '../../queries/observe';
import { usePageStepBack } from '../../lib/use-page-step-back';
import { serviceListQueryOptions, type AnyService, type ServiceScope } from '../../queries/services';
import { ExpiryNote } from './service-expiry';
import { ServiceRowFigures } from '../observe/service-row-figures';
import { ServiceInfoDialog } from './service-info-dialog';
import { describeBackend, isPubliclyExposed } from './service-display';
import { useServiceActions } from './use-service-actions';

type Service = AnyService;

type ServiceListProps = {
  type: ServiceType;
  /** Inside a node the rows can be edited; elsewhere (a domain's row) they link to their node instead. */
  scope: ServiceScope;
  /** Shown when the list is empty. */
  empty: ReactNode;
  /** Node scope: opens the edit form for a row. */
  onEdit?: (service: Service) => void;
};

/** A paged (5) list of one type of services, with the row menu of console-spec §2. */
export function ServiceList({ type, scope, empty, onEdit }: ServiceListProps) {
  const [page, setPage] = useState(1);
  const [infoService, setInfoService] = useState<Service | null>(null);
  const query = useQuery(serviceListQueryOptions(type, scope, page));
  const figures = useQuery(serviceFiguresQueryOptions(scope.kind === 'node' ? scope.nodeId : null));
  const figuresOf = (id: number) => figures.data?.data.find((f) => f.type === type && f.id === id);
  const actions = useServiceActions(type);
  const navigate = useNavigate();

  const rows = query.data?.data ?? [];
  usePageStepBack(query.isSuccess && rows.length === 0 && page > 1, setPage);

  const menuFor = (service: Service): MenuItem[] => [
    { label: 'Info', onSelect: () => setInfoService(service) },
    {
      label: 'Logs Monitor',
      onSelect: () =>
        void navigate({
          to: '/nodes/$nodeId/$type/$id/logs',
          params: { nodeId: String(service.nodeId), type, id: String(service.id) },
        }),
    },
    scope.kind === 'node'
      ? { label: 'Edit Service', onSelect: () => onEdit?.(service), isHidden: !onEdit }
      : { label: 'Go to node', onSelect: () => void navigate({ to: '/nodes/$id', params: { id: String(service.nodeId) } }) },
    service.enabled
      ? { label: 'Disable Access', onSelect: () => void actions.disableAccess(service) }
      : { label: 'Enable Access', onSelect: () => void actions.enableAccess(service) },
    { label: 'Delete Service', onSelect: () => void actions.remove(service), isDanger: true },
  ];

  if (query.isPending) {
    return (
      <div className="flex justify-center py-8">
        <Spinner label="Loading services" />
      </div>
    );
  }
  if (query.isError) {
    return <p className="px-4 py-6 text-sm text-red-600 dark:text-red-400">Could not load the services.</p>;
  }
  if (query.data.total === 0) return <>{empty}</>;

  return (
    <>
      <Table>
        <THead>
          <Th>Name</Th>
          <Th>Public Access</Th>
          <Th>
            <span className="sr-only">Actions</span>
          </Th>
        </THead>
        <TBody>
          {rows.map((service) => (
            <Tr key={service.id}>
              <Td>
                <div className="flex items-center gap-2">
                  <ExposureDot isExposed={isPubliclyExposed(service)} />
                  <span className="font-medium">{service.name}</span>
                </div>
                <ExpiryNote service={service} />
                <ServiceRowFigures figures={figuresOf(service.id)} type={type} />
                {service.applyError && (
                  <p className="mt-1 max-w-xs truncate text-xs text-red-600 dark:text-red-400" title={service.applyError}>
                    {service.applyError}
                  </p>
                )}
              </Td>
              <Td>
                {/* Long URLs wrap instead of pushing the menu out of a phone's view. */}
                <div className="min-w-40 whitespace-normal break-all">
                  <a href={service.publicAccess} target="_blank" rel="noreferrer" className="text-brand-600 hover:underline">
                    {service.publicAccess}
                  </a>
                  <p className="text-xs text-gray-500 dark:text-gray-400">Proxy → {describeBackend(service)}</p>
                </div>
              </Td>
              <Td className="w-px text-right">
                <ActionMenu label={`Actions for ${service.name}`} items={menuFor(service)} />
              </Td>
            </Tr>
          ))}
        </TBody>
      </Table>
      <Pagination page={page} limit={query.data.limit} total={query.data.total} onPageChange={setPage} />
      <ServiceInfoDialog service={infoService} onClose={() => setInfoService(null)} />
    </>
  );
}
