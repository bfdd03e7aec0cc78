import type { Node, NodeCreated } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useCallback, useState } from 'react';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { EmptyState } from '../../components/ui/empty-state';
import { PageSizeSelect, SearchField, SortableTh } from '../../components/ui/list-controls';
import { PlusIcon, ServerIcon } from '../../components/ui/icons';
import { ActionMenu } from '../../components/ui/menu';
import { Pagination, useClampPage } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { StatusDot } from '../../components/ui/status-dot';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import type { NodeTypeFilter } from '../../queries/nodes';
import type { NodeSortKey, NodesSearch } from '../../lib/list-search';
import { NODE_PAGE_SIZE, nodeListQueryOptions, useNodeListStream } from '../../queries/nodes';
import { NodeFormDialog } from './node-form-dialog';
import { nodeTypeLabel, nodeTypeTone } from './node-type';
import { NodeReadyDialog } from './node-ready-dialog';
import { useNodeActions } from './use-node-actions';
import { useCanOnEveryNode } from '../../queries/account';
import { formatBytes, formatRelativeTime } from '../../i18n/format';
import { activeLanguage, SOURCE_LANGUAGE, t, type MessageId } from '../../i18n/i18n';

// Ids, not texts: a change of language renders again and reads them anew (the console's README, Languages).
const filters: { label: MessageId; value: NodeTypeFilter }[] = [
  { label: 'nodes.filter.all', value: undefined },
  { label: 'nodes.filter.nodes', value: 'nodes' },
  { label: 'nodes.filter.gateways', value: 'gateways' },
];

/**
 * The list's "(KB)" columns (the spec's "Screens and routes") in that unit: 1024 bytes, 2 decimals, grouped thousands
 * (the spec's en-US form in English, the active language's marks otherwise).
 */
export function formatKilobytes(bytes: number): string {
  const language = activeLanguage() === SOURCE_LANGUAGE ? 'en-US' : activeLanguage();
  return (bytes / 1024).toLocaleString(language, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

function NodeRow({ node, menu }: { node: Node; menu: ReturnType<typeof useNodeActions>['menuItems'] }) {
  return (
    <Tr>
      <Td className="w-px sm:w-24">{node.isLocal ? null : <StatusDot status={node.status} />}</Td>
      <Td className="whitespace-normal">
        <Link
          to="/nodes/$id"
          params={{ id: String(node.id) }}
          className="font-medium break-all text-brand-600 hover:underline dark:text-blue-400"
        >
          {node.name}
        </Link>
        {/* Phones keep status, name and actions in view; the type and handshake go under the name. */}
        <div className="mt-1 flex flex-wrap items-center gap-2 text-xs text-gray-600 sm:hidden dark:text-gray-300">
          <Badge tone={nodeTypeTone(node)}>{nodeTypeLabel(node)}</Badge>
          {formatRelativeTime(node.latestHandshakeTimestamp)}
        </div>
      </Td>
      <Td className="hidden sm:table-cell">
        <Badge tone={nodeTypeTone(node)}>{nodeTypeLabel(node)}</Badge>
      </Td>
      <Td className="hidden sm:table-cell">{formatRelativeTime(node.latestHandshakeTimestamp)}</Td>
      <Td className="hidden md:table-cell" title={formatBytes(node.transferRx)}>
        {formatKilobytes(node.transferRx)}
      </Td>
      <Td className="hidden md:table-cell" title={formatBytes(node.transferTx)}>
        {formatKilobytes(node.transferTx)}
      </Td>
      <Td className="w-12 text-right">
        <ActionMenu
          label={t('nodes.actionsFor', { name: node.name })}
          items={menu(node, { withView: true, withExpose: true, withDelete: true })}
        />
      </Td>
    </Tr>
  );
}

export function NodesPage() {
  const search = useSearch({ from: '/signed-in/nodes' });
  const navigate = useNavigate({ from: '/nodes' });
  const { type, q, sort, order } = search;
  const page = search.page ?? 1;
  const limit = search.limit ?? NODE_PAGE_SIZE;
  // Each change of view is a history entry (Back returns to it); typing replaces the entry it started.
  const setView = useCallback(
    (next: Partial<NodesSearch>, replace = false) =>
      void navigate({ search: (prev) => ({ ...prev, ...next }), replace }),
    [navigate],
  );
  const setPage = useCallback((next: number) => setView({ page: next === 1 ? undefined : next }), [setView]);
  const [isFormOpen, setFormOpen] = useState(false);
  const [createdNode, setCreatedNode] = useState<NodeCreated | null>(null);
  const params = { page, limit, type, q, sort, order };
  const { data, isPending, isError, isPlaceholderData } = useQuery(nodeListQueryOptions(params));
  const actions = useNodeActions();
  useClampPage(page, limit, data?.total, setPage);
  useNodeListStream(params);
  const onSort = (key: NodeSortKey, direction: 'asc' | 'desc') =>
    setView({ sort: key, order: direction, page: undefined });
  const isSearching = Boolean(q);

  const openForm = () => setFormOpen(true);
  // Adding a node is for accounts that see every node (a limited one could not see the node it made).
  const mayAdd = useCanOnEveryNode('operate');
  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h1 className="text-2xl font-bold">{t('nav.nodes')}</h1>
        {mayAdd && (
          <Button onClick={openForm}>
            <PlusIcon className="size-4" /> {t('nodes.addClient')}
          </Button>
        )}
      </div>
      <div className="flex flex-wrap items-center justify-between gap-3">
        <div role="group" aria-label={t('nodes.filter')} className="flex flex-wrap gap-2">
          {filters.map((filter) => (
            <button
              key={filter.label}
              type="button"
              aria-pressed={type === filter.value}
              onClick={() => setView({ type: filter.value, page: undefined })}
              className={`rounded-full border px-3 py-1 text-sm ${type === filter.value ? 'border-brand-600 bg-brand-600 text-white' : 'border-gray-300 bg-white text-gray-700 hover:bg-gray-50 dark:border-gray-600 dark:bg-gray-800 dark:text-gray-200'}`}
            >
              {t(filter.label)}
            </button>
          ))}
        </div>
        <SearchField
          label={t('nodes.search')}
          value={q ?? ''}
          onSearch={(text) => setView({ q: text || undefined, page: undefined }, true)}
        />
      </div>
      <Card>
        {isPending ? (
          <div className="flex justify-center py-10">
            <Spinner className="size-6" />
          </div>
        ) : isError ? (
          <EmptyState title={t('nodes.loadError')} description={t('nodes.loadErrorHint')} />
        ) : data.data.length === 0 && isSearching ? (
          <p role="status" className="px-4 py-10 text-center text-sm text-gray-600 dark:text-gray-300">
            {t('nodes.noMatch', { query: q ?? '' })}
          </p>
        ) : data.data.length === 0 ? (
          <EmptyState
            icon={<ServerIcon />}
            title={t('nodes.empty')}
            description={t('nodes.emptyHint')}
            actionLabel={t('nodes.addNode')}
            {...(mayAdd ? { onAction: openForm } : {})}
          />
        ) : (
          <>
            <Table>
              <THead>
                <SortableTh
                  label={t('nodes.column.status')}
                  sortKey="status"
                  sort={sort}
                  order={order}
                  onSort={onSort}
                />
                <SortableTh label={t('nodes.column.name')} sortKey="name" sort={sort} order={order} onSort={onSort} />
                <Th className="hidden sm:table-cell">{t('nodes.column.type')}</Th>
                <SortableTh
                  label={t('nodes.column.handshake')}
                  sortKey="handshake"
                  sort={sort}
                  order={order}
                  onSort={onSort}
                  className="hidden sm:table-cell"
                />
                <Th className="hidden md:table-cell">{t('nodes.column.received')}</Th>
                <Th className="hidden md:table-cell">{t('nodes.column.transmitted')}</Th>
                <Th>
                  <span className="sr-only">{t('ui.actions')}</span>
                </Th>
              </THead>
              <TBody>
                {data.data.map((node) => (
                  <NodeRow key={node.id} node={node} menu={actions.menuItems} />
                ))}
              </TBody>
            </Table>
            <Pagination
              page={data.page}
              limit={data.limit}
              total={data.total}
              onPageChange={setPage}
              isLoading={isPlaceholderData}
            />
            <div className="flex justify-end border-t border-gray-200 px-4 py-2 dark:border-gray-800">
              <PageSizeSelect
                value={limit}
                onChange={(size) => setView({ limit: size === NODE_PAGE_SIZE ? undefined : size, page: undefined })}
              />
            </div>
          </>
        )}
      </Card>
      {actions.dialogs}
      <NodeFormDialog open={isFormOpen} onClose={() => setFormOpen(false)} onCreated={setCreatedNode} />
      <NodeReadyDialog node={createdNode} onClose={() => setCreatedNode(null)} />
    </div>
  );
}
