import { certificateMessages, type AcmeCa } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { useConfirm } from '../../components/ui/confirm';
import { EmptyState } from '../../components/ui/empty-state';
import { ActionMenu } from '../../components/ui/menu';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import { acmeCasQueryOptions, useDeleteAcmeCa } from '../../queries/certificates';
import { AcmeCaFormDialog } from './acme-ca-form-dialog';

// Settings: the ACME certificate authorities (docs/api.md "Certificates"). Without any, or without a default, the
// gateway uses Let's Encrypt (or its POSTERN_ACME_DIRECTORY); a domain may choose another in its form.

type FormState = { open: false } | { open: true; ca?: AcmeCa };

export function AcmeCasCard() {
  const [form, setForm] = useState<FormState>({ open: false });
  const { data, isPending, isError } = useQuery(acmeCasQueryOptions());
  const confirm = useConfirm();
  const deleteCa = useDeleteAcmeCa();

  const remove = async (ca: AcmeCa) => {
    if (ca.domains > 0) {
      await confirm({
        title: 'Certificate authority in use',
        description: certificateMessages.caInUse(ca.name, ca.domains),
        variant: 'info',
        acceptButtonText: 'Got it',
        cancelButtonText: 'Close',
      });
      return;
    }
    const isConfirmed = await confirm({
      title: 'Delete Certificate Authority',
      description: `${ca.name} and its account are deleted. This cannot be undone.`,
      variant: 'danger',
      acceptButtonText: 'Yes, delete it!',
    });
    if (isConfirmed)
      await deleteCa.mutateAsync(ca.id).catch((error: unknown) => console.error('delete CA failed', error));
  };

  let body;
  if (isPending) {
    body = (
      <div className="flex justify-center py-8">
        <Spinner label="Loading certificate authorities" />
      </div>
    );
  } else if (isError) {
    body = (
      <p className="px-4 py-6 text-sm text-red-700 dark:text-red-300">Could not load the certificate authorities.</p>
    );
  } else if (data.length === 0) {
    body = (
      <EmptyState
        title="No certificate authorities yet"
        description="Certificates come from Let's Encrypt. Add ZeroSSL, Google Trust Services, Let's Encrypt's staging or any ACME directory to use it instead."
      />
    );
  } else {
    body = (
      <Table>
        <THead>
          <Th>Name</Th>
          <Th className="hidden md:table-cell">Directory</Th>
          <Th>Used by</Th>
          <Th>
            <span className="sr-only">Actions</span>
          </Th>
        </THead>
        <TBody>
          {data.map((ca) => (
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
              <Td className="w-12 text-right">
                <ActionMenu
                  label={`Actions for certificate authority ${ca.name}`}
                  items={[
                    { label: 'Edit', onSelect: () => setForm({ open: true, ca }) },
                    { label: 'Delete', isDanger: true, onSelect: () => void remove(ca) },
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
      title="Certificate authorities"
      actions={
        <Button variant="secondary" onClick={() => setForm({ open: true })}>
          + Add CA
        </Button>
      }
    >
      {body}
      <AcmeCaFormDialog
        open={form.open}
        ca={form.open ? form.ca : undefined}
        onClose={() => setForm({ open: false })}
      />
    </Card>
  );
}
