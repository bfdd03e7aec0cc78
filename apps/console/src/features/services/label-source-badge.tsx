import type { ServiceSource } from '@postern/contract';
import { Badge } from '../../components/ui/card';
import { t } from '../../i18n/i18n';

/**
 * Marks a service the node's agent published from a container's Docker labels (docs/LABELS.md), in lists: its
 * labels are its configuration, so where it comes from is said before anyone edits it.
 */
export function LabelSourceBadge({ source }: { source: ServiceSource | null | undefined }) {
  if (!source) return null;
  const where = t('services.labels.title', { container: source.container, key: source.key });
  return (
    <span className="ml-2 inline-flex align-middle" title={where} aria-label={where} role="note">
      <Badge tone="purple">{t('services.labels.badge')}</Badge>
    </span>
  );
}
