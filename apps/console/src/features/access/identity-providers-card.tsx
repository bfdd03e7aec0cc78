import type { IdentityProvider } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Pagination, useClampPage } from '../../components/ui/pagination';
import { Td, Th, Tr } from '../../components/ui/table';
import { ACCESS_PAGE_SIZE, identityProvidersQueryOptions, useDeleteIdentityProvider } from '../../queries/access';
import { EditDeleteCell, SettingsListCard, useConfirmedDelete } from '../settings/settings-list-card';
import { IdentityProviderFormDialog } from './identity-provider-form-dialog';

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
      title: 'Delete Identity Provider',
      description: `Visitors can no longer sign in with ${provider.name}. This cannot be undone.`,
      remove: () => deleteProvider.mutateAsync(provider.id),
      what: 'identity provider',
    });

  return (
    <SettingsListCard
      title="Identity providers"
      addLabel="+ Add provider"
      onAdd={() => setForm({ open: true })}
      noun="identity providers"
      isPending={isPending}
      isError={isError}
      items={data?.data}
      empty={{
        title: 'No identity providers yet',
        description:
          'Add an OpenID Connect provider (Google, Microsoft Entra, Keycloak, Authentik, …) to put single sign-on in front of a domain or service under its Visitor Access.',
      }}
      headers={
        <>
          <Th>Name</Th>
          <Th className="hidden sm:table-cell">Issuer</Th>
          <Th>Used by</Th>
        </>
      }
      row={(provider) => (
        <Tr key={provider.id}>
          <Td className="font-medium">
            <span>{provider.name}</span>
            {/* Phones show the issuer under the name: one column fewer before the row's menu. */}
            <span className="block max-w-56 truncate text-xs font-normal text-gray-500 sm:hidden dark:text-gray-400">
              {provider.issuer}
            </span>
          </Td>
          <Td className="hidden max-w-xs truncate sm:table-cell" title={provider.issuer}>
            {provider.issuer}
          </Td>
          <Td>
            {provider.policies} {provider.policies === 1 ? 'policy' : 'policies'}
          </Td>
          <EditDeleteCell
            label={`Actions for identity provider ${provider.name}`}
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
