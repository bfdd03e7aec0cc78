import { operations } from '@postern/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { call } from '../../lib/api';
import { Badge, Card } from '../../components/ui/card';
import { formatRelativeTime } from '../../i18n/format';
import { t } from '../../i18n/i18n';

// What the node's agent last reported about its containers' Docker labels (docs/LABELS.md "Bad labels"): per
// container, what keeps it from being published. Shown only for a node whose agent watches Docker. The texts are
// the tenant's: rendered as text, never as markup.

/** The agent reports after each pass (at least every refresh interval): a minute-old view is close enough. */
const REFRESH_MS = 30_000;

const labelProblemsQueryOptions = (nodeId: number) =>
  queryOptions({
    queryKey: ['nodes', 'detail', nodeId, 'label-problems'] as const,
    queryFn: ({ signal }) => call(operations.getNodeLabelProblems, { params: { id: nodeId }, signal }),
    refetchInterval: REFRESH_MS,
  });

export function LabelProblemsCard({ nodeId }: { nodeId: number }) {
  const { data } = useQuery(labelProblemsQueryOptions(nodeId));
  if (!data?.checkedAt) return null;
  const count = data.problems.length;
  return (
    <Card
      title={t('nodes.labels.title')}
      actions={
        <span className="text-xs text-gray-500 dark:text-gray-400">
          {t('nodes.labels.checked', { time: formatRelativeTime(data.checkedAt) })}
        </span>
      }
    >
      {count === 0 ? (
        <p className="px-4 py-3 text-sm text-gray-600 dark:text-gray-300">{t('nodes.labels.none')}</p>
      ) : (
        <ul className="divide-y divide-gray-200 dark:divide-gray-800" aria-label={t('nodes.labels.list')}>
          {data.problems.map((problem, index) => (
            <li key={index} className="flex flex-col gap-1 px-4 py-2.5 text-sm">
              <span className="flex flex-wrap items-center gap-2">
                <span className="font-mono font-medium break-all">{problem.container}</span>
                {problem.key !== undefined && <Badge>{problem.key}</Badge>}
              </span>
              <span className="break-words text-gray-700 dark:text-gray-300">{problem.message}</span>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
