import type { IdentityProvider } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { useConfirm } from '../../components/ui/confirm';
import { EmptyState } from '../../components/ui/empty-state';
import { ActionMenu } from '../../components/ui/menu';
import { Pagination, useClampPage } from '../../components/ui/pagination';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import { ACCESS_PAGE_SIZE, identityProvidersQueryOptions, useDeleteIdentityProvider } from '../../queries/access';
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
  const confirm = useConfirm();
  const deleteProvider = useDeleteIdentityProvider();

  const remove = async (provider: IdentityProvider) => {
    const isConfirmed = await confirm({
      title: 'Delete Identity Provider',
      description: `Visitors can no longer sign in with ${provider.name}. This cannot be undone.`,
      variant: 'danger',
      acceptButtonText: 'Yes, delete it!',
    });
    if (isConfirmed)
      await deleteProvider
        .mutateAsync(provider.id)
        .catch((error: unknown) => console.error('delete identity provider failed', error));
  };

  let body;
  if (isPending) {
    body = (
      <div className="flex justify-center py-8">
        <Spinner label="Loading identity providers" />
      </div>
    );
  } else if (isError) {
    body = <p className="px-4 py-6 text-sm text-red-600 dark:text-red-400">Could not load the identity providers.</p>;
  } else if (data.total === 0) {
    body = (
      <EmptyState
        title="No identity providers yet"
        description="Add an OpenID Connect provider (Google, Microsoft Entra, Keycloak, Authentik, …) to put single sign-on in front of a domain or service under its Visitor Access."
      />
    );
  } else {
    body = (
      <>
        <Table>
          <THead>
            <Th>Name</Th>
            <Th className="hidden sm:table-cell">Issuer</Th>
            <Th>Used by</Th>
            <Th>
              <span className="sr-only">Actions</span>
            </Th>
          </THead>
          <TBody>
            {data.data.map((provider) => (
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
                <Td className="w-12 text-right">
                  <ActionMenu
                    label={`Actions for identity provider ${provider.name}`}
                    items={[
                      { label: 'Edit', onSelect: () => setForm({ open: true, provider }) },
                      { label: 'Delete', isDanger: true, onSelect: () => void remove(provider) },
                    ]}
                  />
                </Td>
              </Tr>
            ))}
          </TBody>
        </Table>
        <Pagination
          page={data.page}
          limit={data.limit}
          total={data.total}
          onPageChange={setPage}
          isLoading={isPlaceholderData}
        />
      </>
    );
  }

  return (
    <Card
      title="Identity providers"
      actions={
        <Button variant="secondary" onClick={() => setForm({ open: true })}>
          + Add provider
        </Button>
      }
    >
      {body}
      <IdentityProviderFormDialog
        open={form.open}
        provider={form.open ? form.provider : undefined}
        onClose={() => setForm({ open: false })}
      />
    </Card>
  );
}
