import { operations } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { useEffect } from 'react';
import { call } from '../../lib/api';
import { parseServiceKey, type NodeDetailSearch } from '../../lib/list-search';
import { serviceKeys } from '../../queries/services';
import { ServiceInfoDialog } from './service-info-dialog';

/** Where the node page's service tables are, so a service named in the URL is scrolled into view. */
export const serviceCardId = (type: 'http' | 'tcp') => `${type}-services`;

/**
 * The node page opened on one service (`?service=http:12`, from Ctrl+K or the home page): that service's Info, over
 * its table searched for it and scrolled into view. Closing the Info drops it from the URL.
 */
export function ServiceInfoFromUrl({ nodeId }: { nodeId: number }) {
  const search: Record<string, unknown> = useSearch({ strict: false });
  const key = parseServiceKey(search.service);
  const navigate = useNavigate();
  const query = useQuery({
    queryKey: [...serviceKeys.all, 'one', nodeId, key?.type, key?.id] as const,
    queryFn: ({ signal }) =>
      key
        ? call(operations.getService, { params: { nodeId, type: key.type, id: key.id }, signal })
        : Promise.resolve(null),
    enabled: key !== undefined,
  });
  const service = key ? (query.data ?? null) : null;

  useEffect(() => {
    if (service && key) document.getElementById(serviceCardId(key.type))?.scrollIntoView({ block: 'start' });
  }, [service, key?.type]); // eslint-disable-line react-hooks/exhaustive-deps -- `key` is rebuilt every render

  return (
    <ServiceInfoDialog
      service={service}
      onClose={() =>
        void navigate({
          to: '.',
          search: (prev: NodeDetailSearch) => ({ ...prev, service: undefined }),
          replace: true,
          resetScroll: false,
        })
      }
    />
  );
}
