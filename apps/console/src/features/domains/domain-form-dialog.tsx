import { DomainUpdateSchema, limits, type Domain, type SslMode } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { FormDialog } from '../../components/ui/dialog';
import { CheckboxField, SelectField, TextField } from '../../components/ui/form-field';
import { useToast } from '../../components/ui/toast';
import { settleStoredChange } from '../../lib/api';
import { useZodForm } from '../../lib/use-zod-form';
import { useCreateDomain, useUpdateDomain } from '../../queries/domains';
import { acmeCasQueryOptions, dnsProvidersQueryOptions } from '../../queries/certificates';
import { nodeListQueryOptions } from '../../queries/nodes';
import { applySkipValidation, getInitialDomainValues, isSslSelectorDisabled, ownerOptions } from './domain-form-rules';
import { AccessSection } from '../access/access-section';
import { useDomainAccess } from '../access/use-domain-access';
import { t, type MessageId } from '../../i18n/i18n';

// Ids, not texts: read at render, in the language of that render (the console's README, Languages).
const SSL_OPTIONS: readonly { value: string; label: MessageId }[] = [
  { value: 'self-signed', label: 'domains.form.sslSelfSigned' },
  { value: 'certbot', label: 'domains.ssl.certbot' },
];
/** Offered only while it is the domain's mode: it comes from an upload (the row's "Upload Certificate"). */
const UPLOADED_OPTION = { value: 'uploaded', label: 'domains.ssl.uploaded' } as const;
const SSL_MODES: readonly string[] = ['self-signed', 'certbot', 'uploaded'];
const CHALLENGE_OPTIONS: readonly { value: string; label: MessageId }[] = [
  { value: 'http-01', label: 'domains.form.http01' },
  { value: 'dns-01', label: 'domains.form.dns01' },
];
const translated = (options: readonly { value: string; label: MessageId }[]) =>
  options.map((option) => ({ value: option.value, label: t(option.label) }));

function DomainForm({ domain, onClose }: { domain?: Domain; onClose: () => void }) {
  // The edit schema for both: it also keeps `uploaded`; a create never offers it, and the domain is still required.
  const form = useZodForm(DomainUpdateSchema, getInitialDomainValues(domain));
  const create = useCreateDomain();
  const update = useUpdateDomain();
  const { toast } = useToast();
  const isSslLocked = isSslSelectorDisabled(form.values);
  const nodes = useQuery(nodeListQueryOptions({ page: 1, limit: limits.listMaxLimit }));
  const access = useDomainAccess(domain);
  const isAcme = form.values.ssl === 'certbot';
  // Loaded only while the domain gets its certificate from a CA: the choices below are shown then.
  const providers = useQuery({ ...dnsProvidersQueryOptions(), enabled: isAcme });
  const authorities = useQuery({ ...acmeCasQueryOptions(), enabled: isAcme });
  const defaultCa = authorities.data?.find((ca) => ca.isDefault);

  // A change stored but not applied closes the form too: the toast said why, sending it again would repeat it.
  const onSubmit = form.handleSubmit(async (body) => {
    if (domain) {
      if ((await settleStoredChange(access.saving(() => update.mutateAsync({ id: domain.id, body })))).isApplied)
        toast({ message: t('domains.updated'), type: 'success' });
    } else {
      const created = { ...body, domain: body.domain ?? '', ssl: body.ssl === 'uploaded' ? null : body.ssl };
      if ((await settleStoredChange(access.creating(() => create.mutateAsync(created)))).isApplied)
        toast({ message: t('domains.created'), type: 'success' });
    }
    onClose();
  });

  return (
    <FormDialog
      open
      size="small"
      title={t(domain ? 'domains.menu.edit' : 'domains.add')}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <TextField
        required
        label={t('domains.column.domain')}
        placeholder="app.example.com"
        description={t('domains.form.domainHint')}
        autoComplete="off"
        {...form.field('domain')}
      />
      <SelectField
        label={t('domains.form.sslType')}
        options={translated(domain?.ssl === 'uploaded' ? [...SSL_OPTIONS, UPLOADED_OPTION] : SSL_OPTIONS)}
        disabled={isSslLocked}
        description={t(isSslLocked ? 'domains.form.sslLocked' : 'domains.form.sslHint')}
        {...form.field('ssl')}
        onChange={(value) => form.setValue('ssl', (SSL_MODES.includes(value) ? value : 'self-signed') as SslMode)}
      />
      {isAcme && (
        <>
          <SelectField
            label={t('domains.form.challenge')}
            options={translated(CHALLENGE_OPTIONS)}
            description={t('domains.form.challengeHint')}
            {...form.field('challenge')}
            onChange={(value) => form.setValue('challenge', value === 'dns-01' ? 'dns-01' : 'http-01')}
          />
          {form.values.challenge === 'dns-01' && (
            <SelectField
              label={t('domains.form.dnsProvider')}
              placeholder={t('domains.form.chooseDnsProvider')}
              options={(providers.data ?? []).map((provider) => ({ value: String(provider.id), label: provider.name }))}
              description={t('domains.form.dnsProviderHint')}
              {...form.field('dnsProviderId')}
            />
          )}
          <SelectField
            label={t('domains.form.ca')}
            options={[
              {
                value: '',
                label: defaultCa
                  ? t('domains.form.defaultCaNamed', { name: defaultCa.name })
                  : t('domains.form.defaultCa'),
              },
              ...(authorities.data ?? []).map((ca) => ({ value: String(ca.id), label: ca.name })),
            ]}
            {...form.field('acmeCaId')}
          />
        </>
      )}
      <SelectField
        label={t('domains.column.owner')}
        options={ownerOptions(nodes.data?.data ?? [], domain)}
        description={t('domains.form.ownerHint')}
        {...form.field('ownerNodeId')}
      />
      <CheckboxField
        label={t('domains.form.skipValidation')}
        description={t('domains.form.skipValidationHint')}
        {...form.field('skipValidation')}
        onChange={(checked) => {
          form.patchValues(applySkipValidation(checked));
          form.touch('ssl');
        }}
      />
      <AccessSection draft={access.draft} />
    </FormDialog>
  );
}

/** Creates (POST) or, with `domain`, edits (PATCH) a domain. */
export function DomainFormDialog({ domain, open, onClose }: { domain?: Domain; open: boolean; onClose: () => void }) {
  if (!open) return null;
  return <DomainForm key={domain?.id ?? 'new'} {...(domain ? { domain } : {})} onClose={onClose} />;
}
