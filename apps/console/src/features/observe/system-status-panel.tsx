import { useQuery } from '@tanstack/react-query';
import { formatBytes, formatNumber, formatRelativeTime } from '../../i18n/format';
import { t } from '../../i18n/i18n';
import { useObserveStream } from '../../queries/observe-stream';
import { systemStatusQueryOptions } from '../../queries/system-status';
import { TrafficChart } from './traffic-chart';

/** The home page's figures: the last 24 h of traffic, backend health, and the last drift check. */
export function SystemStatusPanel() {
  const query = useQuery(systemStatusQueryOptions());
  useObserveStream();
  if (!query.isSuccess) return null;
  const { traffic, health, drift } = query.data;
  return (
    <section
      aria-label={t('status.title')}
      data-testid="system-status"
      className="flex flex-col gap-3 rounded-lg border border-gray-200 bg-white p-5 shadow-sm dark:border-gray-800 dark:bg-gray-900"
    >
      <h2 className="text-base font-semibold">{t('status.title')}</h2>
      <div className="grid grid-cols-2 gap-3 text-sm md:grid-cols-5">
        <div>
          <div className="text-gray-600 dark:text-gray-300">{t('status.requests')}</div>
          <div className="text-lg font-semibold" data-testid="total-requests">
            {formatNumber(traffic.requests)}
          </div>
        </div>
        <div>
          <div className="text-gray-600 dark:text-gray-300">{t('status.connections')}</div>
          <div className="text-lg font-semibold">{formatNumber(traffic.connections)}</div>
        </div>
        <div>
          <div className="text-gray-600 dark:text-gray-300">{t('status.errors')}</div>
          <div
            className={`text-lg font-semibold ${traffic.errors > 0 ? 'text-red-700 dark:text-red-300' : ''}`}
            data-testid="total-errors"
          >
            {formatNumber(traffic.errors)}
          </div>
        </div>
        <div>
          <div className="text-gray-600 dark:text-gray-300">{t('status.inOut')}</div>
          <div className="text-lg font-semibold">
            {formatBytes(traffic.bytesIn)} / {formatBytes(traffic.bytesOut)}
          </div>
        </div>
        <div>
          <div className="text-gray-600 dark:text-gray-300">{t('status.backends')}</div>
          <div className="text-lg font-semibold" data-testid="health-counts">
            {t('status.up', { count: formatNumber(health.up) })} ·{' '}
            <span className={health.down > 0 ? 'text-red-600 dark:text-red-400' : ''}>
              {t('status.down', { count: formatNumber(health.down) })}
            </span>
          </div>
        </div>
      </div>
      <TrafficChart
        points={traffic.points}
        stepMinutes={10}
        label={t('status.chartLabel')}
        unit={t('status.chartUnit')}
        errorUnit={t('status.chartErrorUnit')}
        className="h-20"
      />
      <p className="text-sm" data-testid="drift-status">
        {drift === null
          ? t('status.driftNotRun')
          : drift.differences.length === 0
            ? t('status.driftClean', { when: formatRelativeTime(drift.checkedAt) })
            : t('status.driftFound', {
                when: formatRelativeTime(drift.checkedAt),
                count: drift.differences.length,
                repaired: drift.repaired ? 'yes' : 'no',
              })}
      </p>
      {drift !== null && drift.differences.length > 0 && (
        <ul className="list-disc pl-5 text-xs text-gray-600 dark:text-gray-300">
          {drift.differences.map((difference) => (
            <li key={difference}>{difference}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
