import type { TrafficPoint } from '@postern/contract';
import { useId, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { formatNumber } from '../../i18n/format';
import { t } from '../../i18n/i18n';
import { barShares, describePoint, niceMax, timeTicks, type ChartUnits } from './chart-scale';

// Traffic per minute (or per 10 minutes) as bars: a time axis, the value axis' top, errors stacked in red at the
// bottom of each bar (never too thin to see), and the unfinished last point drawn hollow so it does not read as a drop.
// Values show on hover, and by keyboard: the chart is a slider over its points (arrows, Home, End, Page Up/Down),
// whose value text is the point in words. Plain SVG and HTML: no chart library.

const HEIGHT = 100;

type Props = ChartUnits & {
  points: readonly TrafficPoint[];
  /** Minutes per point (1: the info view's hour; 10: the home page's day). */
  stepMinutes: number;
  /** The chart's name, e.g. "Requests per minute, last hour". */
  label: string;
  className?: string;
};

export function TrafficChart({ points, stepMinutes, label, unit, errorUnit, className = 'h-32' }: Props) {
  const id = useId();
  const [active, setActive] = useState<number | null>(null);
  const count = points.length;
  const max = niceMax(points.map((point) => point.requests));
  const width = 100 / Math.max(1, count);
  const ticks = timeTicks(points, stepMinutes);
  const lastIndex = count - 1;
  const describe = (index: number) => {
    const point = points[index];
    return point ? describePoint(point, stepMinutes, index === lastIndex, { unit, errorUnit }) : '';
  };
  // Keyboard and screen readers start on the last finished point.
  const current = active ?? Math.max(0, lastIndex - 1);

  const onKeyDown = (event: KeyboardEvent) => {
    const moves: Record<string, number> = {
      ArrowLeft: current - 1,
      ArrowDown: current - 1,
      ArrowRight: current + 1,
      ArrowUp: current + 1,
      PageDown: current - 10,
      PageUp: current + 10,
      Home: 0,
      End: lastIndex,
    };
    const next = moves[event.key];
    if (next === undefined) return;
    event.preventDefault();
    setActive(Math.min(lastIndex, Math.max(0, next)));
  };
  const onPointer = (event: MouseEvent<HTMLDivElement>) => {
    const box = event.currentTarget.getBoundingClientRect();
    if (box.width === 0) return;
    const index = Math.floor(((event.clientX - box.left) / box.width) * count);
    setActive(Math.min(lastIndex, Math.max(0, index)));
  };

  if (count === 0) return null;
  return (
    <figure className="flex flex-col gap-1" data-testid="traffic-chart">
      <div className="flex gap-2">
        {/* The value axis: its top and zero. */}
        <div
          aria-hidden="true"
          className={`flex flex-col justify-between text-right text-xs text-gray-600 dark:text-gray-300 ${className}`}
        >
          <span>{formatNumber(max)}</span>
          <span>0</span>
        </div>
        <div className="relative flex-1">
          <div
            role="slider"
            tabIndex={0}
            aria-label={label}
            aria-valuemin={0}
            aria-valuemax={lastIndex}
            aria-valuenow={current}
            aria-valuetext={describe(current)}
            aria-describedby={`${id}-legend`}
            onKeyDown={onKeyDown}
            onMouseMove={onPointer}
            onMouseLeave={() => setActive(null)}
            onBlur={() => setActive(null)}
            onFocus={() => setActive(current)}
            className={`relative w-full rounded border-b border-l border-gray-300 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600 dark:border-gray-600 ${className}`}
          >
            <svg viewBox={`0 0 100 ${HEIGHT}`} preserveAspectRatio="none" className="size-full" aria-hidden="true">
              {points.map((point, index) => {
                const { total, errors } = barShares(point, max);
                const isPartial = index === lastIndex;
                const x = index * width;
                const barWidth = width * 0.8;
                return (
                  <g key={point.minute} data-partial={isPartial || undefined}>
                    {index === active && (
                      <rect
                        x={x - width * 0.1}
                        y={0}
                        width={width}
                        height={HEIGHT}
                        className="fill-gray-200 dark:fill-gray-700"
                      />
                    )}
                    {total > 0 && (
                      <rect
                        x={x}
                        y={HEIGHT - total * HEIGHT}
                        width={barWidth}
                        height={total * HEIGHT}
                        vectorEffect="non-scaling-stroke"
                        strokeDasharray={isPartial ? '3 2' : undefined}
                        className={
                          isPartial
                            ? 'fill-transparent stroke-brand-600 dark:stroke-blue-400'
                            : 'fill-brand-500 dark:fill-blue-400'
                        }
                      />
                    )}
                    {errors > 0 && (
                      <rect
                        x={x}
                        y={HEIGHT - errors * HEIGHT}
                        width={barWidth}
                        height={errors * HEIGHT}
                        className="fill-red-600 dark:fill-red-400"
                        data-error="true"
                      />
                    )}
                  </g>
                );
              })}
            </svg>
          </div>
          {active !== null && (
            <div
              aria-hidden="true"
              data-testid="chart-tooltip"
              className="pointer-events-none absolute -top-2 z-10 rounded bg-gray-900 px-2 py-1 text-xs whitespace-nowrap text-white shadow dark:bg-gray-100 dark:text-gray-900"
              style={{
                left: `${Math.min(Math.max((active + 0.5) * width, 15), 85)}%`,
                transform: 'translate(-50%, -100%)',
              }}
            >
              {describe(active)}
            </div>
          )}
          {/* The time axis: round times under their bars. */}
          <div aria-hidden="true" className="relative h-4 text-xs text-gray-600 dark:text-gray-300">
            {ticks.map((tick) => (
              <span
                key={tick.label}
                className="absolute -translate-x-1/2 whitespace-nowrap"
                style={{ left: `${tick.position * width}%` }}
              >
                {tick.label}
              </span>
            ))}
          </div>
        </div>
      </div>
      <figcaption
        id={`${id}-legend`}
        className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-gray-600 dark:text-gray-300"
      >
        <span className="inline-flex items-center gap-1">
          <span aria-hidden="true" className="inline-block size-2.5 rounded-sm bg-brand-500 dark:bg-blue-400" />
          {unit}
        </span>
        <span className="inline-flex items-center gap-1">
          <span aria-hidden="true" className="inline-block size-2.5 rounded-sm bg-red-600 dark:bg-red-400" />
          {errorUnit}
        </span>
        <span className="inline-flex items-center gap-1">
          <span
            aria-hidden="true"
            className="inline-block size-2.5 rounded-sm border border-dashed border-brand-600 dark:border-blue-400"
          />
          {stepMinutes === 1 ? t('chart.thisMinute') : t('chart.thisPeriod')}
        </span>
      </figcaption>
    </figure>
  );
}
