import { TSIG_ALGORITHMS, type DnsProvider, type DnsProviderKind } from '@postern/contract';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { FormDialog } from '../../components/ui/dialog';
import { SelectField, TextField } from '../../components/ui/form-field';
import { useToast } from '../../components/ui/toast';
import { useZodForm } from '../../lib/use-zod-form';
import { useSaveDnsProvider } from '../../queries/certificates';
import {
  DNS_PROVIDER_KIND_OPTIONS,
  getInitialDnsProviderValues,
  KIND_SETTINGS,
  makeDnsProviderFormSchema,
  SECRET_LABELS,
  type TextSetting,
} from './dns-provider-form-rules';
import { t, type MessageId } from '../../i18n/i18n';

// Add or edit a DNS provider that writes the DNS-01 challenge records (docs/api.md "Certificates"). Its secret is
// never shown back: an edit says one is stored and offers "Replace secret".

const ALGORITHM_OPTIONS = TSIG_ALGORITHMS.map((algorithm) => ({ value: algorithm, label: algorithm }));

// Ids, not texts: read at render, in the language of that render (the console's README, Languages).
const SETTING_FIELDS: Record<
  Exclude<TextSetting, 'algorithm' | 'propagationTimeoutSeconds'>,
  { label: MessageId; placeholder: string; description: MessageId | null }
> = {
  server: { label: 'certs.field.server', placeholder: 'ns1.example.com', description: 'certs.field.serverHint' },
  port: { label: 'certs.field.port', placeholder: '53', description: 'certs.field.portHint' },
  keyName: { label: 'certs.field.keyName', placeholder: 'postern-key', description: 'certs.field.keyNameHint' },
  zone: { label: 'certs.field.zone', placeholder: 'example.com', description: 'certs.field.zoneHint' },
  zoneId: { label: 'certs.field.zoneId', placeholder: '', description: 'certs.field.zoneIdHint' },
  accessKeyId: { label: 'certs.field.accessKeyId', placeholder: 'AKIA…', description: 'certs.field.accessKeyIdHint' },
  hostedZoneId: { label: 'certs.field.hostedZoneId', placeholder: 'Z…', description: 'certs.field.hostedZoneIdHint' },
  region: { label: 'certs.field.region', placeholder: 'us-east-1', description: 'certs.field.regionHint' },
  serverUrl: { label: 'certs.field.serverUrl', placeholder: 'https://auth.example.com', description: null },
  username: { label: 'certs.field.username', placeholder: '', description: 'certs.field.usernameHint' },
  subdomain: { label: 'certs.field.subdomain', placeholder: '', description: 'certs.field.subdomainHint' },
};

const descriptionOf = (id: MessageId | null): string | undefined => (id === null ? undefined : t(id));

function DnsProviderForm({ provider, onClose }: { provider?: DnsProvider | undefined; onClose: () => void }) {
  const isEdit = provider !== undefined;
  const [schema] = useState(() => makeDnsProviderFormSchema(isEdit));
  const form = useZodForm(schema, getInitialDnsProviderValues(provider));
  const [isReplacingSecret, setReplacingSecret] = useState(!isEdit);
  const save = useSaveDnsProvider();
  const { toast } = useToast();
  const kind = form.values.kind;

  const onSubmit = form.handleSubmit(async (body) => {
    await save.mutateAsync({ ...(provider ? { id: provider.id } : {}), body });
    toast({ message: t(isEdit ? 'certs.dns.updated' : 'certs.dns.added'), type: 'success' });
    onClose();
  });

  return (
    <FormDialog
      open
      size="medium"
      title={t(isEdit ? 'certs.dns.editTitle' : 'certs.dns.addTitle')}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <TextField label={t('certs.column.name')} required autoComplete="off" {...form.field('name')} />
      <SelectField
        label={t('certs.dns.kind')}
        options={DNS_PROVIDER_KIND_OPTIONS}
        disabled={isEdit}
        description={isEdit ? t('certs.dns.kindStays') : undefined}
        {...form.field('kind')}
        onChange={(value) => form.setValue('kind', value as DnsProviderKind)}
      />
      {KIND_SETTINGS[kind].map((setting) =>
        setting === 'algorithm' ? (
          <SelectField
            key={setting}
            label={t('certs.dns.algorithm')}
            options={ALGORITHM_OPTIONS}
            {...form.field('algorithm')}
          />
        ) : setting === 'propagationTimeoutSeconds' ? null : (
          <TextField
            key={setting}
            autoComplete="off"
            label={t(SETTING_FIELDS[setting].label)}
            placeholder={SETTING_FIELDS[setting].placeholder}
            description={descriptionOf(SETTING_FIELDS[setting].description)}
            {...form.field(setting)}
          />
        ),
      )}
      {isReplacingSecret ? (
        <TextField
          label={t(SECRET_LABELS[kind])}
          type="password"
          required={!isEdit}
          autoComplete="new-password"
          description={t(isEdit ? 'certs.dns.replacesHint' : 'certs.secretHint')}
          {...form.field('secret')}
        />
      ) : (
        <div className="flex flex-wrap items-center gap-3 text-sm">
          <span>
            {t(provider?.hasSecret ? 'certs.dns.secretStored' : 'certs.dns.secretNone', {
              secret: t(SECRET_LABELS[kind]),
            })}
          </span>
          <Button variant="secondary" onClick={() => setReplacingSecret(true)}>
            {t('certs.dns.replaceSecret')}
          </Button>
        </div>
      )}
      <TextField
        label={t('certs.dns.timeout')}
        placeholder="120"
        inputMode="numeric"
        autoComplete="off"
        description={t('certs.dns.timeoutHint')}
        {...form.field('propagationTimeoutSeconds')}
      />
    </FormDialog>
  );
}

/** Adds a DNS provider, or with `provider` edits it (the secret stays unless replaced). */
export function DnsProviderFormDialog({
  provider,
  open,
  onClose,
}: {
  provider?: DnsProvider | undefined;
  open: boolean;
  onClose: () => void;
}) {
  if (!open) return null;
  return <DnsProviderForm key={provider?.id ?? 'new'} provider={provider} onClose={onClose} />;
}
