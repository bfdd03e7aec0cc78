import { useQuery } from '@tanstack/react-query';
import { useNavigate, useParams } from '@tanstack/react-router';
import { Breadcrumbs } from '../../components/ui/breadcrumbs';
import { EmptyState } from '../../components/ui/empty-state';
import { Spinner } from '../../components/ui/spinner';
import { downloadNodeConfig, nodeQueryOptions, useNodeStream } from '../../queries/nodes';
import { HttpServicesCard, TcpServicesCard } from '../services/service-cards';
import { ServiceInfoFromUrl } from '../services/service-info-from-url';
import { TokensCard } from '../tokens/tokens-card';
import { NodeConfigStatusCard, NodeConnectCard, NodeHeaderCard, NodeInfoTable } from './node-detail-cards';
import { LabelProblemsCard } from './label-problems-card';
import { useNodeActions } from './use-node-actions';
import { useCan } from '../../queries/account';
import { t } from '../../i18n/i18n';

export function NodeDetailPage() {
  const { id: idParam } = useParams({ from: '/signed-in/nodes/$id' });
  const id = Number(idParam);
  const navigate = useNavigate();
  const { data: node, isPending } = useQuery({ ...nodeQueryOptions(id), enabled: Number.isInteger(id) && id > 0 });
  // A node's config and tokens let someone act as the node: not for a viewer (the contract's role table).
  const mayReadSecrets = useCan('read-secrets');
  const actions = useNodeActions({ onDeleted: () => void navigate({ to: '/nodes' }) });
  // Subscribed once the node is loaded; closed when the page is left (the spec's "Screens and routes").
  useNodeStream(id, Boolean(node));

  if (isPending && Number.isInteger(id)) return <Spinner className="mx-auto size-8" />;
  if (!node) {
    return (
      <>
        <Breadcrumbs items={[{ label: t('nav.nodes'), to: '/nodes' }]} />
        <EmptyState
          title={t('nodes.detail.notFound')}
          description={t('nodes.detail.notFoundHint')}
          actionLabel={t('nodes.detail.back')}
          onAction={() => void navigate({ to: '/nodes' })}
        />
      </>
    );
  }

  const download = () =>
    void downloadNodeConfig(node.id).catch((error: unknown) => console.error('download config failed', error));
  return (
    <div className="flex flex-col gap-6">
      <Breadcrumbs items={[{ label: t('nav.nodes'), to: '/nodes' }, { label: node.name }]} />
      <NodeHeaderCard node={node} menuItems={actions.menuItems(node)} />
      {!node.isLocal && (
        <div className="grid gap-6 lg:grid-cols-2">
          <NodeInfoTable node={node} />
          {mayReadSecrets && <TokensCard node={node} />}
        </div>
      )}
      <HttpServicesCard node={node} />
      <TcpServicesCard node={node} />
      <LabelProblemsCard nodeId={node.id} />
      {!node.isLocal && (
        <div className="grid gap-6 lg:grid-cols-2">
          <NodeConnectCard node={node} />
          {mayReadSecrets && <NodeConfigStatusCard node={node} onDownload={download} />}
        </div>
      )}
      {actions.dialogs}
      <ServiceInfoFromUrl nodeId={node.id} />
    </div>
  );
}
