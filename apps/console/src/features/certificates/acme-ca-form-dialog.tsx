import type { AcmeCa } from '@postern/contract';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { FormDialog } from '../../components/ui/dialog';
import { CheckboxField, SelectField, TextField } from '../../components/ui/form-field';
import { useToast } from '../../components/ui/toast';
import { useZodForm } from '../../lib/use-zod-form';
import { useSaveAcmeCa } from '../../queries/certificates';
import {
  applyPreset,
  getInitialAcmeCaValues,
  makeAcmeCaFormSchema,
  PRESET_OPTIONS,
  showsEab,
} from './acme-ca-form-rules';

// Add or edit an ACME certificate authority (docs/api.md "Certificates"). The EAB HMAC key is never shown back: an
// edit says one is stored and offers "Replace HMAC key".

function AcmeCaForm({ ca, onClose }: { ca?: AcmeCa | undefined; onClose: () => void }) {
  const isEdit = ca !== undefined;
  const [schema] = useState(() => makeAcmeCaFormSchema(isEdit));
  const form = useZodForm(schema, getInitialAcmeCaValues(ca));
  const [isReplacingKey, setReplacingKey] = useState(!ca?.hasEabHmacKey);
  const save = useSaveAcmeCa();
  const { toast } = useToast();

  const onSubmit = form.handleSubmit(async (body) => {
    await save.mutateAsync({ ...(ca ? { id: ca.id } : {}), body });
    toast({ message: isEdit ? 'Certificate authority updated' : 'Certificate authority added', type: 'success' });
    onClose();
  });

  return (
    <FormDialog
      open
      size="medium"
      title={isEdit ? 'Edit Certificate Authority' : 'Add Certificate Authority'}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <SelectField
        label="Certificate authority"
        options={PRESET_OPTIONS}
        {...form.field('preset')}
        onChange={(value) => form.patchValues(applyPreset(value))}
      />
      <TextField label="Name" required autoComplete="off" {...form.field('name')} />
      <TextField
        label="Directory URL"
        required
        autoComplete="off"
        placeholder="https://acme.example.com/directory"
        {...form.field('directoryUrl')}
      />
      <TextField
        label="Contact e-mail"
        type="email"
        autoComplete="off"
        description="For the CA's expiry notices. Empty: the gateway's POSTERN_ACME_EMAIL, if set."
        {...form.field('email')}
      />
      {showsEab(form.values) && (
        <>
          <TextField
            label="EAB key ID"
            autoComplete="off"
            description="External account binding: from your account at the CA (ZeroSSL, Google Trust Services)."
            {...form.field('eabKeyId')}
          />
          {isReplacingKey ? (
            <TextField
              label="EAB HMAC key"
              type="password"
              autoComplete="new-password"
              description="Stored encrypted and never shown again."
              {...form.field('eabHmacKey')}
            />
          ) : (
            <div className="flex flex-wrap items-center gap-3 text-sm">
              <span>EAB HMAC key: stored, never shown</span>
              <Button variant="secondary" onClick={() => setReplacingKey(true)}>
                Replace HMAC key
              </Button>
            </div>
          )}
        </>
      )}
      <CheckboxField
        label="The gateway's default"
        description="Domains without a CA of their own get their certificates here."
        {...form.field('isDefault')}
      />
    </FormDialog>
  );
}

/** Adds a certificate authority, or with `ca` edits it. */
export function AcmeCaFormDialog({
  ca,
  open,
  onClose,
}: {
  ca?: AcmeCa | undefined;
  open: boolean;
  onClose: () => void;
}) {
  if (!open) return null;
  return <AcmeCaForm key={ca?.id ?? 'new'} ca={ca} onClose={onClose} />;
}
