import type { Domain } from '@postern/contract';
import { useNavigate } from '@tanstack/react-router';
import { ChevronDownIcon, ChevronRightIcon } from '../../components/ui/icons';
import { ActionMenu } from '../../components/ui/menu';
import { Td, Tr } from '../../components/ui/table';
import { CertificateCell } from './certificate-cell';
import { DomainServices } from './domain-services';
import { OwnerCell } from './owner-cell';
import { useCanOnEveryNode, useSeesEveryNode } from '../../queries/account';
import { formatDate } from '../../i18n/format';
import { t } from '../../i18n/i18n';

/** Expand toggle, Domain, SSL Certs, Owner, Created At, actions. */
export const DOMAIN_COLUMN_COUNT = 6;

/** One domain: its columns and menu, and when expanded a row with its services below. */
export function DomainRow({
  domain,
  isExpanded,
  onToggle,
  onEdit,
  onUpload,
  onDelete,
}: {
  domain: Domain;
  isExpanded: boolean;
  onToggle: () => void;
  onEdit: () => void;
  onUpload: () => void;
  onDelete: () => void;
}) {
  const navigate = useNavigate();
  // A viewer reads; changes are for the roles that may operate (the contract's role table). An account limited to
  // some nodes reads too, and a domain's whole log (every node's services on it) is not for it (docs/api.md).
  const mayOperate = useCanOnEveryNode('operate');
  const seesEveryNode = useSeesEveryNode();
  return (
    <>
      <Tr>
        <Td>
          <button
            type="button"
            onClick={onToggle}
            aria-expanded={isExpanded}
            aria-label={t(isExpanded ? 'domains.hideServices' : 'domains.showServices', { domain: domain.domain })}
            className="rounded p-1 text-gray-500 hover:bg-gray-100 dark:hover:bg-gray-800"
          >
            {isExpanded ? <ChevronDownIcon className="size-4" /> : <ChevronRightIcon className="size-4" />}
          </button>
        </Td>
        <Td className="font-medium break-all whitespace-normal">{domain.domain}</Td>
        <Td>
          <CertificateCell domain={domain} />
        </Td>
        <Td className="hidden sm:table-cell">
          <OwnerCell domain={domain} />
        </Td>
        <Td className="hidden sm:table-cell">{formatDate(domain.created_at)}</Td>
        <Td className="w-px text-right">
          <ActionMenu
            label={t('domains.actionsFor', { domain: domain.domain })}
            items={[
              {
                label: t('domains.menu.logs'),
                onSelect: () => void navigate({ to: '/domains/$domain/logs', params: { domain: domain.domain } }),
                isHidden: !seesEveryNode,
              },
              { label: t('domains.menu.edit'), onSelect: onEdit, isHidden: !mayOperate },
              { label: t('domains.menu.upload'), onSelect: onUpload, isHidden: !mayOperate },
              { label: t('domains.menu.delete'), onSelect: onDelete, isDanger: true, isHidden: !mayOperate },
            ]}
          />
        </Td>
      </Tr>
      {isExpanded && (
        <tr>
          <td colSpan={DOMAIN_COLUMN_COUNT} className="bg-gray-50 px-2 py-3 sm:px-4 sm:py-4 dark:bg-gray-950/40">
            <DomainServices domainId={domain.id} domain={domain.domain} certificate={domain.certificate} />
          </td>
        </tr>
      )}
    </>
  );
}
