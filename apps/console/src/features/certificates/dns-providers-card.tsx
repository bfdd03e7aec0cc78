import type { DnsProvider } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Td, Th, Tr } from '../../components/ui/table';
import { dnsProvidersQueryOptions, useDeleteDnsProvider } from '../../queries/certificates';
import { EditDeleteCell, SettingsListCard, useConfirmedDelete } from '../settings/settings-list-card';
import { DnsProviderFormDialog } from './dns-provider-form-dialog';
import { DNS_PROVIDER_KIND_LABELS } from './dns-provider-form-rules';
import { t } from '../../i18n/i18n';

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
              title: t('certs.dns.inUseTitle'),
              description: t('certs.dns.inUse', { name: provider.name, count: provider.domains }),
            }
          : null,
      title: t('certs.dns.deleteTitle'),
      description: t('certs.dns.deleteConfirm', { name: provider.name }),
      remove: () => deleteProvider.mutateAsync(provider.id),
      what: 'DNS provider',
    });

  return (
    <SettingsListCard
      title={t('certs.dns.title')}
      addLabel={t('certs.dns.add')}
      onAdd={() => setForm({ open: true })}
      noun={t('certs.dns.noun')}
      isPending={isPending}
      isError={isError}
      items={data}
      empty={{
        title: t('certs.dns.empty'),
        description: t('certs.dns.emptyHint'),
      }}
      headers={
        <>
          <Th>{t('certs.column.name')}</Th>
          <Th className="hidden sm:table-cell">{t('certs.dns.kind')}</Th>
          <Th>{t('certs.column.usedBy')}</Th>
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
          <Td>{t('certs.domainCount', { count: provider.domains })}</Td>
          <EditDeleteCell
            label={t('certs.dns.actionsFor', { name: provider.name })}
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
