import type { ServiceHealth } from '@postern/contract';
import { formatRelativeTime } from '@postern/contract';

const STYLES = {
  up: 'bg-green-100 text-green-800 dark:bg-green-900/40 dark:text-green-300',
  down: 'bg-red-100 text-red-800 dark:bg-red-900/40 dark:text-red-300',
  unknown: 'bg-gray-100 text-gray-700 dark:bg-gray-800 dark:text-gray-300',
} as const;
const TEXTS = { up: 'Up', down: 'Down', unknown: 'Unchecked' } as const;

/** The backend's state as the gateway's checks see it, with why it is down and since when. */
export function HealthBadge({ health }: { health: ServiceHealth | null }) {
  const state = health?.state ?? 'unknown';
  const title =
    health === null
      ? 'Not checked'
      : [
          state === 'down' && health.since ? `Down since ${formatRelativeTime(health.since)}` : null,
          health.lastError,
          health.latencyMs !== null ? `${health.latencyMs} ms` : null,
        ]
          .filter(Boolean)
          .join(' · ');
  return (
    <span
      className={`inline-flex items-center rounded px-1.5 py-0.5 text-xs font-medium ${STYLES[state]}`}
      title={title}
      data-health={state}
    >
      {TEXTS[state]}
    </span>
  );
}
