import { CertificateUploadSchema, type Domain } from '@postern/contract';
import { FormDialog } from '../../components/ui/dialog';
import { TextareaField } from '../../components/ui/form-field';
import { useToast } from '../../components/ui/toast';
import { settleStoredChange } from '../../lib/api';
import { useZodForm } from '../../lib/use-zod-form';
import { useUploadCertificate } from '../../queries/domains';
import { t, withSlot } from '../../i18n/i18n';

// Your own certificate for a domain (docs/api.md "Certificates"): the PEM chain and its key, checked by the server
// (key, chain order, names, validity: each refusal shown on its field). The key is sent once and never shown again.

function UploadCertificateForm({ domain, onClose }: { domain: Domain; onClose: () => void }) {
  const form = useZodForm(CertificateUploadSchema, { certificate: '', privateKey: '' });
  const upload = useUploadCertificate();
  const { toast } = useToast();

  const onSubmit = form.handleSubmit(async (body) => {
    if ((await settleStoredChange(upload.mutateAsync({ id: domain.id, body }))).isApplied)
      toast({ message: t('domains.uploaded', { domain: domain.domain }), type: 'success' });
    onClose();
  });

  const [before, after] = withSlot('domains.upload.intro', 'domain');
  return (
    <FormDialog
      open
      title={t('domains.menu.upload')}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <p className="text-sm text-gray-600 dark:text-gray-300">
        {before}
        <span className="font-medium break-all">{domain.domain}</span>
        {after}
      </p>
      <TextareaField
        label={t('domains.upload.chain')}
        rows={8}
        placeholder="-----BEGIN CERTIFICATE-----"
        description={t('domains.upload.chainHint')}
        {...form.field('certificate')}
      />
      <TextareaField
        label={t('domains.upload.key')}
        rows={6}
        placeholder="-----BEGIN PRIVATE KEY-----"
        description={t('domains.upload.keyHint')}
        {...form.field('privateKey')}
      />
    </FormDialog>
  );
}

/** Uploads the operator's own certificate for `domain`. */
export function UploadCertificateDialog({ domain, onClose }: { domain: Domain | null; onClose: () => void }) {
  if (domain === null) return null;
  return <UploadCertificateForm key={domain.id} domain={domain} onClose={onClose} />;
}
