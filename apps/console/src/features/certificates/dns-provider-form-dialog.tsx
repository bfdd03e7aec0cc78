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
} from './dns-provider-form-rules';

// Add or edit a DNS provider that writes the DNS-01 challenge records (docs/api.md "Certificates"). Its secret is
// never shown back: an edit says one is stored and offers "Replace secret".

const ALGORITHM_OPTIONS = TSIG_ALGORITHMS.map((algorithm) => ({ value: algorithm, label: algorithm }));

const SETTING_FIELDS = {
  server: { label: 'Server', placeholder: 'ns1.example.com', description: 'The primary that takes dynamic updates.' },
  port: { label: 'Port', placeholder: '53', description: 'Empty: 53.' },
  keyName: {
    label: 'TSIG key name',
    placeholder: 'postern-key',
    description: 'As in tsig-keygen -a hmac-sha256 NAME.',
  },
  zone: { label: 'Zone', placeholder: 'example.com', description: "Empty: found from the name's SOA record." },
  zoneId: { label: 'Zone ID', placeholder: '', description: 'Empty: found by name with the token.' },
  accessKeyId: { label: 'Access key ID', placeholder: 'AKIA…', description: 'An IAM user allowed to change the zone.' },
  hostedZoneId: { label: 'Hosted zone ID', placeholder: 'Z…', description: 'Empty: found by name.' },
  region: { label: 'Region', placeholder: 'us-east-1', description: 'Empty: us-east-1.' },
  serverUrl: { label: 'acme-dns server URL', placeholder: 'https://auth.example.com', description: '' },
  username: { label: 'User name', placeholder: '', description: "From the server's /register answer." },
  subdomain: { label: 'Subdomain', placeholder: '', description: 'Point _acme-challenge.<domain> here with a CNAME.' },
} as const;

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
    toast({ message: isEdit ? 'DNS provider updated' : 'DNS provider added', type: 'success' });
    onClose();
  });

  return (
    <FormDialog
      open
      size="medium"
      title={isEdit ? 'Edit DNS Provider' : 'Add DNS Provider'}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <TextField label="Name" required autoComplete="off" {...form.field('name')} />
      <SelectField
        label="Kind"
        options={DNS_PROVIDER_KIND_OPTIONS}
        disabled={isEdit}
        description={isEdit ? 'The kind stays: add another provider for another kind.' : undefined}
        {...form.field('kind')}
        onChange={(value) => form.setValue('kind', value as DnsProviderKind)}
      />
      {KIND_SETTINGS[kind].map((setting) =>
        setting === 'algorithm' ? (
          <SelectField key={setting} label="TSIG algorithm" options={ALGORITHM_OPTIONS} {...form.field('algorithm')} />
        ) : setting === 'propagationTimeoutSeconds' ? null : (
          <TextField
            key={setting}
            autoComplete="off"
            label={SETTING_FIELDS[setting].label}
            placeholder={SETTING_FIELDS[setting].placeholder}
            description={SETTING_FIELDS[setting].description || undefined}
            {...form.field(setting)}
          />
        ),
      )}
      {isReplacingSecret ? (
        <TextField
          label={SECRET_LABELS[kind]}
          type="password"
          required={!isEdit}
          autoComplete="new-password"
          description={
            isEdit
              ? 'Replaces the stored one. Stored encrypted and never shown again.'
              : 'Stored encrypted and never shown again.'
          }
          {...form.field('secret')}
        />
      ) : (
        <div className="flex flex-wrap items-center gap-3 text-sm">
          <span>
            {SECRET_LABELS[kind]}: {provider?.hasSecret ? 'stored, never shown' : 'none stored'}
          </span>
          <Button variant="secondary" onClick={() => setReplacingSecret(true)}>
            Replace secret
          </Button>
        </div>
      )}
      <TextField
        label="Propagation timeout (seconds)"
        placeholder="120"
        inputMode="numeric"
        autoComplete="off"
        description="How long to wait for the record on every authoritative server before the order fails (10-3600)."
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
