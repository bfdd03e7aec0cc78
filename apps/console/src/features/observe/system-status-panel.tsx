import { formatBytes, formatRelativeTime } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
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
      aria-label="System status"
      data-testid="system-status"
      className="flex flex-col gap-3 rounded-lg border border-gray-200 bg-white p-5 shadow-sm dark:border-gray-800 dark:bg-gray-900"
    >
      <h2 className="text-base font-semibold">System status</h2>
      <div className="grid grid-cols-2 gap-3 text-sm md:grid-cols-5">
        <div>
          <div className="text-gray-600 dark:text-gray-300">Requests, 24 h</div>
          <div className="text-lg font-semibold" data-testid="total-requests">
            {traffic.requests}
          </div>
        </div>
        <div>
          <div className="text-gray-600 dark:text-gray-300">TCP/UDP connections, 24 h</div>
          <div className="text-lg font-semibold">{traffic.connections}</div>
        </div>
        <div>
          <div className="text-gray-600 dark:text-gray-300">Errors, 24 h (5xx, failed)</div>
          <div
            className={`text-lg font-semibold ${traffic.errors > 0 ? 'text-red-700 dark:text-red-300' : ''}`}
            data-testid="total-errors"
          >
            {traffic.errors}
          </div>
        </div>
        <div>
          <div className="text-gray-600 dark:text-gray-300">In / out, 24 h</div>
          <div className="text-lg font-semibold">
            {formatBytes(traffic.bytesIn)} / {formatBytes(traffic.bytesOut)}
          </div>
        </div>
        <div>
          <div className="text-gray-600 dark:text-gray-300">Backends</div>
          <div className="text-lg font-semibold" data-testid="health-counts">
            {health.up} up ·{' '}
            <span className={health.down > 0 ? 'text-red-600 dark:text-red-400' : ''}>{health.down} down</span>
          </div>
        </div>
      </div>
      <TrafficChart
        points={traffic.points}
        stepMinutes={10}
        label="Requests and connections per 10 minutes, last 24 hours"
        unit="requests and connections"
        errorUnit="errors"
        className="h-20"
      />
      <p className="text-sm" data-testid="drift-status">
        {drift === null
          ? 'Drift check: not run yet.'
          : drift.differences.length === 0
            ? `Drift check ${formatRelativeTime(drift.checkedAt)}: nginx and WireGuard serve what the database says.`
            : `Drift check ${formatRelativeTime(drift.checkedAt)}: ${drift.differences.length} difference(s), ${drift.repaired ? 'repaired' : 'not repaired'}.`}
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
