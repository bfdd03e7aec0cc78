import { certificateMessages, type DnsProvider } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { useConfirm } from '../../components/ui/confirm';
import { EmptyState } from '../../components/ui/empty-state';
import { ActionMenu } from '../../components/ui/menu';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import { dnsProvidersQueryOptions, useDeleteDnsProvider } from '../../queries/certificates';
import { DnsProviderFormDialog } from './dns-provider-form-dialog';
import { DNS_PROVIDER_KIND_LABELS } from './dns-provider-form-rules';

// Settings: the DNS providers that write DNS-01 challenge records (docs/api.md "Certificates"). One in use by a
// domain cannot be deleted: the gateway says how many domains to move first.

type FormState = { open: false } | { open: true; provider?: DnsProvider };

export function DnsProvidersCard() {
  const [form, setForm] = useState<FormState>({ open: false });
  const { data, isPending, isError } = useQuery(dnsProvidersQueryOptions());
  const confirm = useConfirm();
  const deleteProvider = useDeleteDnsProvider();

  const remove = async (provider: DnsProvider) => {
    if (provider.domains > 0) {
      await confirm({
        title: 'DNS provider in use',
        description: certificateMessages.providerInUse(provider.name, provider.domains),
        variant: 'info',
        acceptButtonText: 'Got it',
        cancelButtonText: 'Close',
      });
      return;
    }
    const isConfirmed = await confirm({
      title: 'Delete DNS Provider',
      description: `${provider.name} and its stored secret are deleted. This cannot be undone.`,
      variant: 'danger',
      acceptButtonText: 'Yes, delete it!',
    });
    if (isConfirmed)
      await deleteProvider
        .mutateAsync(provider.id)
        .catch((error: unknown) => console.error('delete DNS provider failed', error));
  };

  let body;
  if (isPending) {
    body = (
      <div className="flex justify-center py-8">
        <Spinner label="Loading DNS providers" />
      </div>
    );
  } else if (isError) {
    body = <p className="px-4 py-6 text-sm text-red-700 dark:text-red-300">Could not load the DNS providers.</p>;
  } else if (data.length === 0) {
    body = (
      <EmptyState
        title="No DNS providers yet"
        description="Add one to get certificates through DNS-01: for wildcard domains, or when port 80 is not reachable."
      />
    );
  } else {
    body = (
      <Table>
        <THead>
          <Th>Name</Th>
          <Th className="hidden sm:table-cell">Kind</Th>
          <Th>Used by</Th>
          <Th>
            <span className="sr-only">Actions</span>
          </Th>
        </THead>
        <TBody>
          {data.map((provider) => (
            <Tr key={provider.id}>
              <Td className="font-medium whitespace-normal">
                <span className="break-all">{provider.name}</span>
                <span className="block text-xs font-normal text-gray-600 sm:hidden dark:text-gray-300">
                  {DNS_PROVIDER_KIND_LABELS[provider.kind]}
                </span>
              </Td>
              <Td className="hidden sm:table-cell">{DNS_PROVIDER_KIND_LABELS[provider.kind]}</Td>
              <Td>
                {provider.domains} {provider.domains === 1 ? 'domain' : 'domains'}
              </Td>
              <Td className="w-12 text-right">
                <ActionMenu
                  label={`Actions for DNS provider ${provider.name}`}
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
    );
  }

  return (
    <Card
      title="DNS providers"
      actions={
        <Button variant="secondary" onClick={() => setForm({ open: true })}>
          + Add DNS provider
        </Button>
      }
    >
      {body}
      <DnsProviderFormDialog
        open={form.open}
        provider={form.open ? form.provider : undefined}
        onClose={() => setForm({ open: false })}
      />
    </Card>
  );
}
