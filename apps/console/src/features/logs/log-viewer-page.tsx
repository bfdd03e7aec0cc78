import { ServiceTypeSchema } from '@postern/contract';
import { useParams } from '@tanstack/react-router';
import { Breadcrumbs, type Crumb } from '../../components/ui/breadcrumbs';
import { LogViewer } from './log-viewer';
import { useLogLines, type LogSource } from './use-log-lines';

const PAGE_TITLE = 'Real Time Logs';

function LogsScreen({ crumbs, source }: { crumbs: Crumb[]; source: LogSource | null }) {
  const lines = useLogLines(source);
  return (
    <div className="space-y-4">
      <Breadcrumbs items={crumbs} />
      <h1 className="text-xl font-semibold">{PAGE_TITLE}</h1>
      <LogViewer lines={lines} />
    </div>
  );
}

type LogRouteParams = { domain?: string; nodeId?: string; type?: string; id?: string };

/** Not bound to a route object, so the router can mount it anywhere (strict: false). */
function useLogRouteParams(): LogRouteParams {
  return useParams({ strict: false }) as LogRouteParams;
}

/** /domains/$domain/logs */
export function DomainLogsPage() {
  const { domain = '' } = useLogRouteParams();
  return (
    <LogsScreen
      crumbs={[{ label: 'Domains', to: '/domains' }, { label: domain }, { label: PAGE_TITLE }]}
      source={domain ? { domain } : null}
    />
  );
}

/** /nodes/$nodeId/$type/$id/logs */
export function ServiceLogsPage() {
  const { nodeId = '', type = '', id = '' } = useLogRouteParams();
  return (
    <LogsScreen
      crumbs={[
        { label: 'Nodes', to: '/nodes' },
        { label: `${type.toUpperCase()} Services`, to: `/nodes/${encodeURIComponent(nodeId)}` },
        { label: PAGE_TITLE },
      ]}
      // An unknown type names no stream: opening it would only fail and retry every second.
      source={ServiceTypeSchema.safeParse(type).success && id ? { type, id } : null}
    />
  );
}
