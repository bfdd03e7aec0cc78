import type { HttpService, TcpService } from '@postern/contract';
import { formatBytes } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
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

const ms = (value: number | null) => (value === null ? '–' : `≤ ${value} ms`);

export function ServiceTrafficPanel({ service }: { service: HttpService | TcpService }) {
  const type = 'proto' in service ? 'tcp' : 'http';
  const query = useQuery(serviceTrafficQueryOptions(service.nodeId, type, service.id));
  if (query.isPending) return <p className="text-sm text-gray-500">Loading traffic…</p>;
  if (query.isError) return <p className="text-sm text-red-600 dark:text-red-400">Could not load the traffic.</p>;
  const { summary, points } = query.data;
  return (
    <section className="flex flex-col gap-2" aria-label="Traffic, last hour" data-testid="service-traffic">
      <h3 className="text-sm font-semibold">Traffic, last hour</h3>
      {summary.type === 'http' ? (
        <div className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
          <Figure label="Requests" value={String(summary.requests)} />
          <Figure label="5xx errors" value={String(summary.status['5xx'])} isAlarming={summary.status['5xx'] > 0} />
          <Figure
            label="2xx / 3xx / 4xx"
            value={`${summary.status['2xx']} / ${summary.status['3xx']} / ${summary.status['4xx']}`}
          />
          <Figure label="p50 / p95" value={`${ms(summary.p50Ms)} / ${ms(summary.p95Ms)}`} />
          <Figure label="In / out" value={`${formatBytes(summary.bytesIn)} / ${formatBytes(summary.bytesOut)}`} />
          <Figure label="Open now" value={String(summary.open)} />
        </div>
      ) : (
        <div className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
          <Figure label="Connections" value={String(summary.connections)} />
          <Figure label="Failed" value={String(summary.failed)} isAlarming={summary.failed > 0} />
          <Figure
            label="Mean duration"
            value={summary.avgDurationSeconds === null ? '–' : `${summary.avgDurationSeconds} s`}
          />
          <Figure label="In / out" value={`${formatBytes(summary.bytesIn)} / ${formatBytes(summary.bytesOut)}`} />
          <Figure label="Open now" value={String(summary.open)} />
        </div>
      )}
      <TrafficChart
        points={points}
        stepMinutes={1}
        label={`${type === 'http' ? 'Requests' : 'Connections'} per minute, last hour`}
        unit={type === 'http' ? 'requests' : 'connections'}
        errorUnit={type === 'http' ? '5xx' : 'failed'}
      />
    </section>
  );
}
