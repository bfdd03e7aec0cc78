import type { Node, NodeCreated } from '@postern/contract';
import { formatBytes, formatRelativeTime } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { EmptyState } from '../../components/ui/empty-state';
import { PlusIcon, ServerIcon } from '../../components/ui/icons';
import { ActionMenu } from '../../components/ui/menu';
import { Pagination, useClampPage } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { StatusDot } from '../../components/ui/status-dot';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import type { NodeTypeFilter } from '../../queries/nodes';
import { NODE_PAGE_SIZE, nodeListQueryOptions, useNodeListStream } from '../../queries/nodes';
import { NodeFormDialog } from './node-form-dialog';
import { nodeTypeLabel, nodeTypeTone } from './node-type';
import { NodeReadyDialog } from './node-ready-dialog';
import { useNodeActions } from './use-node-actions';

const filters: { label: string; value: NodeTypeFilter }[] = [
  { label: 'View All', value: undefined },
  { label: 'Nodes', value: 'nodes' },
  { label: 'Gateways', value: 'gateways' },
];


/** The list's "(KB)" columns (console-spec §2) in that unit: 1024 bytes, 2 decimals, grouped thousands. */
export function formatKilobytes(bytes: number): string {
  return (bytes / 1024).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

function NodeRow({ node, menu }: { node: Node; menu: ReturnType<typeof useNodeActions>['menuItems'] }) {
  return (
    <Tr>
      <Td className="w-10">{node.isLocal ? null : <StatusDot status={node.status} />}</Td>
      <Td>
        <Link to="/nodes/$id" params={{ id: String(node.id) }} className="font-medium text-brand-600 hover:underline dark:text-blue-400">
          {node.name}
        </Link>
      </Td>
      <Td>
        <Badge tone={nodeTypeTone(node)}>{nodeTypeLabel(node)}</Badge>
      </Td>
      <Td>{formatRelativeTime(node.latestHandshakeTimestamp)}</Td>
      <Td title={formatBytes(node.transferRx)}>{formatKilobytes(node.transferRx)}</Td>
      <Td title={formatBytes(node.transferTx)}>{formatKilobytes(node.transferTx)}</Td>
      <Td className="w-12 text-right">
        <ActionMenu label={`Actions for ${node.name}`} items={menu(node, { withView: true, withExpose: true, withDelete: true })} />
      </Td>
    </Tr>
  );
}

export function NodesPage() {
  const [type, setType] = useState<NodeTypeFilter>(undefined);
  const [page, setPage] = useState(1);
  const [isFormOpen, setFormOpen] = useState(false);
  const [createdNode, setCreatedNode] = useState<NodeCreated | null>(null);
  const params = { page, limit: NODE_PAGE_SIZE, type };
  const { data, isPending, isError } = useQuery(nodeListQueryOptions(params));
  const actions = useNodeActions();
  useClampPage(page, NODE_PAGE_SIZE, data?.total, setPage);
  useNodeListStream(params);

  const openForm = () => setFormOpen(true);
  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h1 className="text-2xl font-bold">Client / Nodes</h1>
        <Button onClick={openForm}>
          <PlusIcon className="size-4" /> Add Client
        </Button>
      </div>
      <div role="group" aria-label="Filter nodes" className="flex flex-wrap gap-2">
        {filters.map((filter) => (
          <button
            key={filter.label}
            type="button"
            aria-pressed={type === filter.value}
            onClick={() => {
              setType(filter.value);
              setPage(1);
            }}
            className={`rounded-full border px-3 py-1 text-sm ${type === filter.value ? 'border-brand-600 bg-brand-600 text-white' : 'border-gray-300 bg-white text-gray-700 hover:bg-gray-50 dark:border-gray-600 dark:bg-gray-800 dark:text-gray-200'}`}
          >
            {filter.label}
          </button>
        ))}
      </div>
      <Card>
        {isPending ? (
          <div className="flex justify-center py-10"><Spinner className="size-6" /></div>
        ) : isError || !data ? (
          <EmptyState title="Nodes could not be loaded" description="Check your connection and reload the page." />
        ) : data.data.length === 0 ? (
          <EmptyState icon={<ServerIcon />} title="No nodes yet" description="Nodes are the machines that connect to this gateway over WireGuard; their status and traffic appear here. Add a node first, then run the command it shows on that machine." actionLabel="Add Node" onAction={openForm} />
        ) : (
          <>
            <Table>
              <THead>
                <Th><span className="sr-only">Status</span></Th>
                <Th>Name</Th>
                <Th>Type</Th>
                <Th>Latest Handshake</Th>
                <Th>Received (KB)</Th>
                <Th>Transmitted (KB)</Th>
                <Th><span className="sr-only">Actions</span></Th>
              </THead>
              <TBody>
                {data.data.map((node) => (
                  <NodeRow key={node.id} node={node} menu={actions.menuItems} />
                ))}
              </TBody>
            </Table>
            <Pagination page={data.page} limit={data.limit} total={data.total} onPageChange={setPage} />
          </>
        )}
      </Card>
      {actions.dialogs}
      <NodeFormDialog open={isFormOpen} onClose={() => setFormOpen(false)} onCreated={setCreatedNode} />
      <NodeReadyDialog node={createdNode} onClose={() => setCreatedNode(null)} />
    </div>
  );
}
