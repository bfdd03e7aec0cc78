import type { ServiceFigures } from '@postern/contract';
import { formatBytes, formatNumber } from '../../i18n/format';
import { t } from '../../i18n/i18n';
import { HealthBadge } from './health-badge';
import { Sparkline } from './sparkline';

/** A service row's last hour: backend health, requests (or connections), bytes, and a per-minute sparkline. */
export function ServiceRowFigures({ figures, type }: { figures: ServiceFigures | undefined; type: 'http' | 'tcp' }) {
  if (!figures) return null;
  const count = formatNumber(figures.requests);
  const errors = formatNumber(figures.errors);
  return (
    <div
      className="mt-1 flex flex-wrap items-center gap-x-2 gap-y-1 text-xs text-gray-600 dark:text-gray-300"
      data-testid="service-figures"
    >
      <HealthBadge health={figures.health} />
      <span title={t('observe.row.lastHour')}>
        {t(`observe.row.perHour.${type}`, { count })}
        {figures.errors > 0 && (
          <span className="font-medium text-red-700 dark:text-red-300">
            {' · '}
            {t('observe.row.errors', { count: errors })}
          </span>
        )}{' '}
        · {formatBytes(figures.bytes)}
      </span>
      <Sparkline
        values={figures.spark.length > 0 ? figures.spark : [0, 0]}
        errors={figures.errorSpark ?? []}
        isLastPartial
        label={t(`observe.row.spark.${type}`, { count, errors, hasErrors: figures.errors > 0 ? 'yes' : 'no' })}
      />
    </div>
  );
}
