import { certificateMessages, type AcmeCa } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Badge } from '../../components/ui/card';
import { Td, Th, Tr } from '../../components/ui/table';
import { acmeCasQueryOptions, useDeleteAcmeCa } from '../../queries/certificates';
import { EditDeleteCell, SettingsListCard, useConfirmedDelete } from '../settings/settings-list-card';
import { AcmeCaFormDialog } from './acme-ca-form-dialog';

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
          ? { title: 'Certificate authority in use', description: certificateMessages.caInUse(ca.name, ca.domains) }
          : null,
      title: 'Delete Certificate Authority',
      description: `${ca.name} and its account are deleted. This cannot be undone.`,
      remove: () => deleteCa.mutateAsync(ca.id),
      what: 'CA',
    });

  return (
    <SettingsListCard
      title="Certificate authorities"
      addLabel="+ Add CA"
      onAdd={() => setForm({ open: true })}
      noun="certificate authorities"
      isPending={isPending}
      isError={isError}
      items={data}
      empty={{
        title: 'No certificate authorities yet',
        description:
          "Certificates come from Let's Encrypt. Add ZeroSSL, Google Trust Services, Let's Encrypt's staging or any ACME directory to use it instead.",
      }}
      headers={
        <>
          <Th>Name</Th>
          <Th className="hidden md:table-cell">Directory</Th>
          <Th>Used by</Th>
        </>
      }
      row={(ca) => (
        <Tr key={ca.id}>
          <Td className="font-medium whitespace-normal">
            <span className="break-all">{ca.name}</span> {ca.isDefault && <Badge tone="blue">Default</Badge>}
          </Td>
          <Td className="hidden max-w-xs truncate md:table-cell" title={ca.directoryUrl}>
            {ca.directoryUrl}
          </Td>
          <Td>
            {ca.domains} {ca.domains === 1 ? 'domain' : 'domains'}
          </Td>
          <EditDeleteCell
            label={`Actions for certificate authority ${ca.name}`}
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
