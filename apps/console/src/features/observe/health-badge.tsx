import type { ServiceHealth } from '@postern/contract';
import { formatNumber, formatRelativeTime } from '../../i18n/format';
import { t, type MessageId } from '../../i18n/i18n';

const STYLES = {
  up: 'bg-green-100 text-green-800 dark:bg-green-900/40 dark:text-green-300',
  down: 'bg-red-100 text-red-800 dark:bg-red-900/40 dark:text-red-300',
  unknown: 'bg-gray-100 text-gray-700 dark:bg-gray-800 dark:text-gray-300',
} as const;
const TEXTS: Record<keyof typeof STYLES, MessageId> = {
  up: 'observe.health.up',
  down: 'observe.health.down',
  unknown: 'observe.health.unknown',
};

/** The backend's state as the gateway's checks see it, with why it is down (the server's words) and since when. */
export function HealthBadge({ health }: { health: ServiceHealth | null }) {
  const state = health?.state ?? 'unknown';
  const title =
    health === null
      ? t('observe.health.notChecked')
      : [
          state === 'down' && health.since
            ? t('observe.health.downSince', { when: formatRelativeTime(health.since) })
            : null,
          health.lastError,
          health.latencyMs !== null ? t('observe.health.latency', { ms: formatNumber(health.latencyMs) }) : null,
        ]
          .filter(Boolean)
          .join(' · ');
  return (
    <span
      className={`inline-flex items-center rounded px-1.5 py-0.5 text-xs font-medium ${STYLES[state]}`}
      title={title}
      data-health={state}
    >
      {t(TEXTS[state])}
    </span>
  );
}
