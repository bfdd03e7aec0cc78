import type { Domain } from '@postern/contract';
import { Link } from '@tanstack/react-router';
import { t } from '../../i18n/i18n';

/** The 'Owner' column: Admin, or the node whose access token may publish on the domain (linked). */
export function OwnerCell({ domain }: { domain: Pick<Domain, 'ownerNodeId' | 'ownerNodeName'> }) {
  if (domain.ownerNodeId === null)
    return <span className="text-gray-500 dark:text-gray-400">{t('domains.owner.admin')}</span>;
  return (
    <Link
      to="/nodes/$id"
      params={{ id: String(domain.ownerNodeId) }}
      className="font-medium text-brand-600 hover:underline dark:text-blue-400"
    >
      {domain.ownerNodeName ?? t('domains.owner.node', { id: domain.ownerNodeId })}
    </Link>
  );
}
