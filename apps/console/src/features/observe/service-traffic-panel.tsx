import type { HttpService, TcpService } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { formatBytes, formatNumber } from '../../i18n/format';
import { t } from '../../i18n/i18n';
import { serviceTrafficQueryOptions } from '../../queries/observe';
import { TrafficChart } from './traffic-chart';

// Loaded with the info dialog only (lazy), so the first page carries none of it.

function Figure({ label, value, isAlarming = false }: { label: string; value: string; isAlarming?: boolean }) {
  return (
    <div
      className={`rounded border px-2 py-1 ${isAlarming ? 'border-red-300 bg-red-50 dark:border-red-800 dark:bg-red-950/40' : 'border-gray-200 dark:border-gray-800'}`}
    >
      <div className="text-xs text-gray-600 dark:text-gray-300">{label}</div>
      <div className={`font-semibold ${isAlarming ? 'text-red-700 dark:text-red-300' : ''}`}>{value}</div>
    </div>
  );
}

const ms = (value: number | null) =>
  value === null ? '–' : `≤ ${t('observe.health.latency', { ms: formatNumber(value) })}`;
const count = (value: number) => formatNumber(value);

export function ServiceTrafficPanel({ service }: { service: HttpService | TcpService }) {
  const type = 'proto' in service ? 'tcp' : 'http';
  const query = useQuery(serviceTrafficQueryOptions(service.nodeId, type, service.id));
  if (query.isPending) return <p className="text-sm text-gray-500">{t('observe.traffic.loading')}</p>;
  if (query.isError) return <p className="text-sm text-red-600 dark:text-red-400">{t('observe.traffic.loadError')}</p>;
  const { summary, points } = query.data;
  return (
    <section className="flex flex-col gap-2" aria-label={t('observe.traffic.title')} data-testid="service-traffic">
      <h3 className="text-sm font-semibold">{t('observe.traffic.title')}</h3>
      {summary.type === 'http' ? (
        <div className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
          <Figure label={t('observe.traffic.requests')} value={count(summary.requests)} />
          <Figure
            label={t('observe.traffic.errors5xx')}
            value={count(summary.status['5xx'])}
            isAlarming={summary.status['5xx'] > 0}
          />
          <Figure
            label={t('observe.traffic.statusClasses')}
            value={`${count(summary.status['2xx'])} / ${count(summary.status['3xx'])} / ${count(summary.status['4xx'])}`}
          />
          <Figure label={t('observe.traffic.latency')} value={`${ms(summary.p50Ms)} / ${ms(summary.p95Ms)}`} />
          <Figure
            label={t('observe.traffic.inOut')}
            value={`${formatBytes(summary.bytesIn)} / ${formatBytes(summary.bytesOut)}`}
          />
          <Figure label={t('observe.traffic.openNow')} value={count(summary.open)} />
        </div>
      ) : (
        <div className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
          <Figure label={t('observe.traffic.connections')} value={count(summary.connections)} />
          <Figure label={t('observe.traffic.failed')} value={count(summary.failed)} isAlarming={summary.failed > 0} />
          <Figure
            label={t('observe.traffic.meanDuration')}
            value={
              summary.avgDurationSeconds === null
                ? '–'
                : t('observe.traffic.seconds', { seconds: formatNumber(summary.avgDurationSeconds) })
            }
          />
          <Figure
            label={t('observe.traffic.inOut')}
            value={`${formatBytes(summary.bytesIn)} / ${formatBytes(summary.bytesOut)}`}
          />
          <Figure label={t('observe.traffic.openNow')} value={count(summary.open)} />
        </div>
      )}
      <TrafficChart
        points={points}
        stepMinutes={1}
        label={t(`observe.traffic.chart.${type}`)}
        unit={t(`observe.traffic.unit.${type}`)}
        errorUnit={t(`observe.traffic.errorUnit.${type}`)}
      />
    </section>
  );
}
