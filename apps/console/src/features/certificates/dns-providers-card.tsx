import { certificateMessages, type DnsProvider } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Td, Th, Tr } from '../../components/ui/table';
import { dnsProvidersQueryOptions, useDeleteDnsProvider } from '../../queries/certificates';
import { EditDeleteCell, SettingsListCard, useConfirmedDelete } from '../settings/settings-list-card';
import { DnsProviderFormDialog } from './dns-provider-form-dialog';
import { DNS_PROVIDER_KIND_LABELS } from './dns-provider-form-rules';

// Settings: the DNS providers that write DNS-01 challenge records (docs/api.md "Certificates"). One in use by a
// domain cannot be deleted: the gateway says how many domains to move first.

type FormState = { open: false } | { open: true; provider?: DnsProvider };

export function DnsProvidersCard() {
  const [form, setForm] = useState<FormState>({ open: false });
  const { data, isPending, isError } = useQuery(dnsProvidersQueryOptions());
  const deleteProvider = useDeleteDnsProvider();
  const confirmedDelete = useConfirmedDelete();

  const remove = (provider: DnsProvider) =>
    confirmedDelete({
      inUse:
        provider.domains > 0
          ? {
              title: 'DNS provider in use',
              description: certificateMessages.providerInUse(provider.name, provider.domains),
            }
          : null,
      title: 'Delete DNS Provider',
      description: `${provider.name} and its stored secret are deleted. This cannot be undone.`,
      remove: () => deleteProvider.mutateAsync(provider.id),
      what: 'DNS provider',
    });

  return (
    <SettingsListCard
      title="DNS providers"
      addLabel="+ Add DNS provider"
      onAdd={() => setForm({ open: true })}
      noun="DNS providers"
      isPending={isPending}
      isError={isError}
      items={data}
      empty={{
        title: 'No DNS providers yet',
        description:
          'Add one to get certificates through DNS-01: for wildcard domains, or when port 80 is not reachable.',
      }}
      headers={
        <>
          <Th>Name</Th>
          <Th className="hidden sm:table-cell">Kind</Th>
          <Th>Used by</Th>
        </>
      }
      row={(provider) => (
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
          <EditDeleteCell
            label={`Actions for DNS provider ${provider.name}`}
            onEdit={() => setForm({ open: true, provider })}
            onDelete={() => void remove(provider)}
          />
        </Tr>
      )}
    >
      <DnsProviderFormDialog
        open={form.open}
        provider={form.open ? form.provider : undefined}
        onClose={() => setForm({ open: false })}
      />
    </SettingsListCard>
  );
}
