/** Requests per minute as a small line (plain SVG: no chart library on the first page). */
export function Sparkline({
  values,
  label,
  className = 'h-6 w-24',
}: {
  values: readonly number[];
  label: string;
  className?: string;
}) {
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? 100 / (values.length - 1) : 100;
  const points = values.map((value, i) => `${(i * step).toFixed(2)},${(30 - (value / max) * 28).toFixed(2)}`).join(' ');
  return (
    <svg
      viewBox="0 0 100 30"
      preserveAspectRatio="none"
      role="img"
      aria-label={label}
      className={`${className} text-brand-600 dark:text-brand-400`}
    >
      <polyline points={points} fill="none" stroke="currentColor" strokeWidth="2" vectorEffect="non-scaling-stroke" />
    </svg>
  );
}
