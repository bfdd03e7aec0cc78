import type { ServiceFigures } from '@postern/contract';
import { formatBytes } from '@postern/contract';
import { HealthBadge } from './health-badge';
import { Sparkline } from './sparkline';

/** A service row's last hour: backend health, requests (or connections), bytes, and a per-minute sparkline. */
export function ServiceRowFigures({ figures, type }: { figures: ServiceFigures | undefined; type: 'http' | 'tcp' }) {
  if (!figures) return null;
  const unit = type === 'http' ? 'req' : 'conn';
  return (
    <div
      className="mt-1 flex flex-wrap items-center gap-x-2 gap-y-1 text-xs text-gray-600 dark:text-gray-300"
      data-testid="service-figures"
    >
      <HealthBadge health={figures.health} />
      <span title="Last hour">
        {figures.requests} {unit}/h
        {figures.errors > 0 && (
          <span className="font-medium text-red-700 dark:text-red-300"> · {figures.errors} err</span>
        )}{' '}
        · {formatBytes(figures.bytes)}
      </span>
      <Sparkline
        values={figures.spark.length > 0 ? figures.spark : [0, 0]}
        errors={figures.errorSpark ?? []}
        isLastPartial
        label={`${figures.requests} ${unit} in the last hour${figures.errors > 0 ? `, ${figures.errors} with errors` : ''}`}
      />
    </div>
  );
}
