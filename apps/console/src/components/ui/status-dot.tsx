import type { NodeStatusValue } from '@postern/contract';

// console-spec §4: online green pulsing, idle orange pulsing, offline red.
const statusClasses: Record<NodeStatusValue, { dot: string; pulse: boolean }> = {
  online: { dot: 'bg-green-500', pulse: true },
  idle: { dot: 'bg-orange-400', pulse: true },
  offline: { dot: 'bg-red-500', pulse: false },
};

export function StatusDot({ status }: { status: NodeStatusValue }) {
  const { dot, pulse } = statusClasses[status];
  return (
    <span className="relative inline-flex size-2.5" title={status} role="img" aria-label={status} data-status={status}>
      {pulse && <span className={`absolute inline-flex size-full animate-ping rounded-full opacity-75 ${dot}`} />}
      <span className={`relative inline-flex size-2.5 rounded-full ${dot}`} />
    </span>
  );
}

/** Services: green when publicly exposed, red when not (console-spec §2). */
export function ExposureDot({ isExposed }: { isExposed: boolean }) {
  return (
    <span
      className={`inline-flex size-2.5 rounded-full ${isExposed ? 'bg-green-500' : 'bg-red-500'}`}
      role="img"
      aria-label={isExposed ? 'Public' : 'Not public'}
      title={isExposed ? 'Public' : 'Not public'}
    />
  );
}
