import type { HttpService, TcpService, TrafficPoint } from '@postern/contract';
import { formatBytes } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { serviceTrafficQueryOptions } from '../../queries/observe';

// Loaded with the info dialog only (lazy), so the first page carries none of it.

/** Requests per minute as bars, 5xx (failed connections) stacked in red; plain SVG. */
export function TrafficChart({ points, label }: { points: readonly TrafficPoint[]; label: string }) {
  const max = Math.max(1, ...points.map((p) => p.requests));
  const width = 100 / Math.max(1, points.length);
  return (
    <svg viewBox="0 0 100 40" preserveAspectRatio="none" role="img" aria-label={label} className="h-28 w-full">
      {points.map((point, i) => {
        const height = (point.requests / max) * 38;
        const errors = (point.errors / max) * 38;
        return (
          <g key={point.minute}>
            <title>{`${new Date(point.minute).toLocaleTimeString()}: ${point.requests}`}</title>
            <rect x={i * width} y={40 - height} width={width * 0.8} height={height} className="fill-brand-500" />
            {errors > 0 && (
              <rect x={i * width} y={40 - errors} width={width * 0.8} height={errors} className="fill-red-500" />
            )}
          </g>
        );
      })}
    </svg>
  );
}

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <div className="rounded border border-gray-200 px-2 py-1 dark:border-gray-800">
      <div className="text-xs text-gray-500 dark:text-gray-400">{label}</div>
      <div className="font-semibold">{value}</div>
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
          <Figure
            label="2xx / 3xx / 4xx / 5xx"
            value={`${summary.status['2xx']} / ${summary.status['3xx']} / ${summary.status['4xx']} / ${summary.status['5xx']}`}
          />
          <Figure label="p50 / p95" value={`${ms(summary.p50Ms)} / ${ms(summary.p95Ms)}`} />
          <Figure label="In / out" value={`${formatBytes(summary.bytesIn)} / ${formatBytes(summary.bytesOut)}`} />
          <Figure label="Open now" value={String(summary.open)} />
        </div>
      ) : (
        <div className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
          <Figure label="Connections" value={String(summary.connections)} />
          <Figure label="Failed" value={String(summary.failed)} />
          <Figure
            label="Mean duration"
            value={summary.avgDurationSeconds === null ? '–' : `${summary.avgDurationSeconds} s`}
          />
          <Figure label="In / out" value={`${formatBytes(summary.bytesIn)} / ${formatBytes(summary.bytesOut)}`} />
          <Figure label="Open now" value={String(summary.open)} />
        </div>
      )}
      <TrafficChart points={points} label={`${type === 'http' ? 'Requests' : 'Connections'} per minute, last hour`} />
    </section>
  );
}
