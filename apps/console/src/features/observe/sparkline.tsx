/**
 * Requests per minute as a small line, and the minutes with errors (5xx, failed connections) as red marks on it
 * (plain SVG: no chart library on the first page). The last value is the unfinished current minute: it is left out
 * (`isLastPartial`), or the line would fall at every row's end as if the service had stopped.
 */
export function Sparkline({
  values,
  errors = [],
  isLastPartial = false,
  label,
  className = 'h-6 w-24',
}: {
  values: readonly number[];
  /** Errors per point, aligned with `values`. */
  errors?: readonly number[];
  isLastPartial?: boolean;
  label: string;
  className?: string;
}) {
  const shown = isLastPartial && values.length > 2 ? values.slice(0, -1) : values;
  const max = Math.max(1, ...shown);
  const step = shown.length > 1 ? 100 / (shown.length - 1) : 100;
  const y = (value: number) => (30 - (value / max) * 28).toFixed(2);
  const points = shown.map((value, i) => `${(i * step).toFixed(2)},${y(value)}`).join(' ');
  return (
    <svg
      viewBox="0 0 100 30"
      preserveAspectRatio="none"
      role="img"
      aria-label={label}
      className={`${className} text-brand-600 dark:text-brand-400`}
    >
      <polyline points={points} fill="none" stroke="currentColor" strokeWidth="2" vectorEffect="non-scaling-stroke" />
      {shown.map((_, i) =>
        (errors[i] ?? 0) > 0 ? (
          <line
            key={i}
            x1={i * step}
            x2={i * step}
            y1={30}
            y2={Math.min(Number(y(errors[i] ?? 0)), 24)}
            className="stroke-red-600 dark:stroke-red-400"
            strokeWidth="3"
            vectorEffect="non-scaling-stroke"
            data-error="true"
          />
        ) : null,
      )}
    </svg>
  );
}
