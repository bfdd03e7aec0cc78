import type { IdentityProvider } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Pagination, useClampPage } from '../../components/ui/pagination';
import { Td, Th, Tr } from '../../components/ui/table';
import { ACCESS_PAGE_SIZE, identityProvidersQueryOptions, useDeleteIdentityProvider } from '../../queries/access';
import { EditDeleteCell, SettingsListCard, useConfirmedDelete } from '../settings/settings-list-card';
import { IdentityProviderFormDialog } from './identity-provider-form-dialog';
import { formatNumber } from '../../i18n/format';
import { t } from '../../i18n/i18n';

// Settings: the OpenID Connect providers visitors of protected services sign in with (beyond the console spec;
// docs/ACCESS.md). A provider a policy uses cannot be deleted: the gateway says which policies to change first.

type FormState = { open: false } | { open: true; provider?: IdentityProvider };

export function IdentityProvidersCard() {
  const [page, setPage] = useState(1);
  const [form, setForm] = useState<FormState>({ open: false });
  const { data, isPending, isError, isPlaceholderData } = useQuery(
    identityProvidersQueryOptions(page, ACCESS_PAGE_SIZE),
  );
  useClampPage(page, ACCESS_PAGE_SIZE, data?.total, setPage);
  const deleteProvider = useDeleteIdentityProvider();
  const confirmedDelete = useConfirmedDelete();

  const remove = (provider: IdentityProvider) =>
    confirmedDelete({
      title: t('access.idp.deleteTitle'),
      description: t('access.idp.deleteConfirm', { name: provider.name }),
      remove: () => deleteProvider.mutateAsync(provider.id),
      what: 'identity provider',
    });

  return (
    <SettingsListCard
      title={t('access.idp.title')}
      addLabel={t('access.idp.add')}
      onAdd={() => setForm({ open: true })}
      noun={t('access.idp.noun')}
      isPending={isPending}
      isError={isError}
      items={data?.data}
      empty={{
        title: t('access.idp.empty'),
        description: t('access.idp.emptyHint'),
      }}
      headers={
        <>
          <Th>{t('access.column.name')}</Th>
          <Th className="hidden sm:table-cell">{t('access.idp.issuer')}</Th>
          <Th>{t('access.column.usedBy')}</Th>
        </>
      }
      row={(provider) => (
        <Tr key={provider.id}>
          <Td className="font-medium">
            <span>{provider.name}</span>
            {/* Phones show the issuer under the name: one column fewer before the row's menu. */}
            <span className="block max-w-40 truncate text-xs font-normal text-gray-500 sm:hidden dark:text-gray-400">
              {provider.issuer}
            </span>
          </Td>
          <Td className="hidden max-w-xs truncate sm:table-cell" title={provider.issuer}>
            {provider.issuer}
          </Td>
          <Td>{t('access.idp.policyCount', { count: provider.policies, n: formatNumber(provider.policies) })}</Td>
          <EditDeleteCell
            label={t('access.idp.actionsFor', { name: provider.name })}
            onEdit={() => setForm({ open: true, provider })}
            onDelete={() => void remove(provider)}
          />
        </Tr>
      )}
      footer={
        data && (
          <Pagination
            page={data.page}
            limit={data.limit}
            total={data.total}
            onPageChange={setPage}
            isLoading={isPlaceholderData}
          />
        )
      }
    >
      <IdentityProviderFormDialog
        open={form.open}
        provider={form.open ? form.provider : undefined}
        onClose={() => setForm({ open: false })}
      />
    </SettingsListCard>
  );
}
