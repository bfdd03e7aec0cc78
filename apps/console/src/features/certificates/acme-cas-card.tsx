import type { AcmeCa } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Badge } from '../../components/ui/card';
import { Td, Th, Tr } from '../../components/ui/table';
import { acmeCasQueryOptions, useDeleteAcmeCa } from '../../queries/certificates';
import { EditDeleteCell, SettingsListCard, useConfirmedDelete } from '../settings/settings-list-card';
import { AcmeCaFormDialog } from './acme-ca-form-dialog';
import { t } from '../../i18n/i18n';

// Settings: the ACME certificate authorities (docs/api.md "Certificates"). Without any, or without a default, the
// gateway uses Let's Encrypt (or its POSTERN_ACME_DIRECTORY); a domain may choose another in its form.

type FormState = { open: false } | { open: true; ca?: AcmeCa };

export function AcmeCasCard() {
  const [form, setForm] = useState<FormState>({ open: false });
  const { data, isPending, isError } = useQuery(acmeCasQueryOptions());
  const deleteCa = useDeleteAcmeCa();
  const confirmedDelete = useConfirmedDelete();

  const remove = (ca: AcmeCa) =>
    confirmedDelete({
      inUse:
        ca.domains > 0
          ? {
              title: t('certs.ca.inUseTitle'),
              description: t('certs.ca.inUse', { name: ca.name, count: ca.domains }),
            }
          : null,
      title: t('certs.ca.deleteTitle'),
      description: t('certs.ca.deleteConfirm', { name: ca.name }),
      remove: () => deleteCa.mutateAsync(ca.id),
      what: 'CA',
    });

  return (
    <SettingsListCard
      title={t('certs.ca.title')}
      addLabel={t('certs.ca.add')}
      onAdd={() => setForm({ open: true })}
      noun={t('certs.ca.noun')}
      isPending={isPending}
      isError={isError}
      items={data}
      empty={{
        title: t('certs.ca.empty'),
        description: t('certs.ca.emptyHint'),
      }}
      headers={
        <>
          <Th>{t('certs.column.name')}</Th>
          <Th className="hidden md:table-cell">{t('certs.ca.directory')}</Th>
          <Th>{t('certs.column.usedBy')}</Th>
        </>
      }
      row={(ca) => (
        <Tr key={ca.id}>
          <Td className="font-medium whitespace-normal">
            <span className="break-all">{ca.name}</span>{' '}
            {ca.isDefault && <Badge tone="blue">{t('certs.ca.default')}</Badge>}
          </Td>
          <Td className="hidden max-w-xs truncate md:table-cell" title={ca.directoryUrl}>
            {ca.directoryUrl}
          </Td>
          <Td>{t('certs.domainCount', { count: ca.domains })}</Td>
          <EditDeleteCell
            label={t('certs.ca.actionsFor', { name: ca.name })}
            onEdit={() => setForm({ open: true, ca })}
            onDelete={() => void remove(ca)}
          />
        </Tr>
      )}
    >
      <AcmeCaFormDialog
        open={form.open}
        ca={form.open ? form.ca : undefined}
        onClose={() => setForm({ open: false })}
      />
    </SettingsListCard>
  );
}
