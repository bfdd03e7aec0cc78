import type { NodeStatusValue } from '@postern/contract';
import { t, type MessageId } from '../../i18n/i18n';

// The spec's "States and transitions": online green pulsing, idle orange pulsing, offline red. The word is shown beside
// the dot so the status does not rest on colour alone (WCAG 1.4.1); the dot keeps the name for assistive technology,
// the word is hidden from it so it is read once.
// The dot's name is the status in lower case, as the spec words it ('online'); the word beside it is capitalised.
const statusClasses: Record<NodeStatusValue, { dot: string; pulse: boolean; label: MessageId; name: MessageId }> = {
  online: { dot: 'bg-green-500', pulse: true, label: 'ui.online', name: 'ui.status.online' },
  idle: { dot: 'bg-orange-400', pulse: true, label: 'ui.idle', name: 'ui.status.idle' },
  offline: { dot: 'bg-red-500', pulse: false, label: 'ui.offline', name: 'ui.status.offline' },
};

export function StatusDot({ status }: { status: NodeStatusValue }) {
  const { dot, pulse, label, name } = statusClasses[status];
  return (
    <span className="inline-flex items-center gap-1.5">
      <span
        className="relative inline-flex size-2.5"
        title={t(name)}
        role="img"
        aria-label={t(name)}
        data-status={status}
      >
        {pulse && <span className={`absolute inline-flex size-full animate-ping rounded-full opacity-75 ${dot}`} />}
        <span className={`relative inline-flex size-2.5 rounded-full ${dot}`} />
      </span>
      <span aria-hidden="true" className="text-xs text-gray-700 dark:text-gray-300">
        {t(label)}
      </span>
    </span>
  );
}

/** Services: green when publicly exposed, red when not (the spec's "Screens and routes"). */
export function ExposureDot({ isExposed }: { isExposed: boolean }) {
  return (
    <span
      className={`inline-flex size-2.5 rounded-full ${isExposed ? 'bg-green-500' : 'bg-red-500'}`}
      role="img"
      aria-label={t(isExposed ? 'ui.public' : 'ui.notPublic')}
      title={t(isExposed ? 'ui.public' : 'ui.notPublic')}
    />
  );
}

/** The dot with its word beside it. */
export function ExposureStatus({ isExposed }: { isExposed: boolean }) {
  return (
    <span className="inline-flex items-center gap-1.5">
      <ExposureDot isExposed={isExposed} />
      <span aria-hidden="true" className="text-xs text-gray-700 dark:text-gray-300">
        {t(isExposed ? 'ui.public' : 'ui.notPublic')}
      </span>
    </span>
  );
}
