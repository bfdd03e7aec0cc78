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
  presetOptions,
  showsEab,
} from './acme-ca-form-rules';
import { t } from '../../i18n/i18n';

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
    toast({ message: t(isEdit ? 'certs.ca.updated' : 'certs.ca.added'), type: 'success' });
    onClose();
  });

  return (
    <FormDialog
      open
      size="medium"
      title={t(isEdit ? 'certs.ca.editTitle' : 'certs.ca.addTitle')}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <SelectField
        label={t('certs.ca.preset')}
        options={presetOptions()}
        {...form.field('preset')}
        onChange={(value) => form.patchValues(applyPreset(value))}
      />
      <TextField label={t('certs.column.name')} required autoComplete="off" {...form.field('name')} />
      <TextField
        label={t('certs.ca.directoryUrl')}
        required
        autoComplete="off"
        placeholder="https://acme.example.com/directory"
        {...form.field('directoryUrl')}
      />
      <TextField
        label={t('certs.ca.email')}
        type="email"
        autoComplete="off"
        description={t('certs.ca.emailHint')}
        {...form.field('email')}
      />
      {showsEab(form.values) && (
        <>
          <TextField
            label={t('certs.ca.eabKeyId')}
            autoComplete="off"
            description={t('certs.ca.eabKeyIdHint')}
            {...form.field('eabKeyId')}
          />
          {isReplacingKey ? (
            <TextField
              label={t('certs.ca.eabHmacKey')}
              type="password"
              autoComplete="new-password"
              description={t('certs.secretHint')}
              {...form.field('eabHmacKey')}
            />
          ) : (
            <div className="flex flex-wrap items-center gap-3 text-sm">
              <span>{t('certs.ca.eabStored')}</span>
              <Button variant="secondary" onClick={() => setReplacingKey(true)}>
                {t('certs.ca.replaceKey')}
              </Button>
            </div>
          )}
        </>
      )}
      <CheckboxField
        label={t('certs.ca.isDefault')}
        description={t('certs.ca.isDefaultHint')}
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
