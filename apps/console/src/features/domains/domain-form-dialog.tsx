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

const SSL_OPTIONS = [
  { value: 'self-signed', label: 'Self Signed' },
  { value: 'certbot', label: "Let's Encrypt" },
] as const;
/** Offered only while it is the domain's mode: it comes from an upload (the row's "Upload Certificate"). */
const UPLOADED_OPTION = { value: 'uploaded', label: 'Your own certificate' } as const;
const SSL_MODES: readonly string[] = ['self-signed', 'certbot', 'uploaded'];
const CHALLENGE_OPTIONS = [
  { value: 'http-01', label: 'HTTP-01 (port 80 reachable)' },
  { value: 'dns-01', label: 'DNS-01 (a TXT record through a DNS provider)' },
] as const;

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
        toast({ message: 'Domain updated successfully!', type: 'success' });
    } else {
      const created = { ...body, domain: body.domain ?? '', ssl: body.ssl === 'uploaded' ? null : body.ssl };
      if ((await settleStoredChange(access.creating(() => create.mutateAsync(created)))).isApplied)
        toast({ message: 'Domain created successfully!', type: 'success' });
    }
    onClose();
  });

  return (
    <FormDialog
      open
      size="small"
      title={domain ? 'Edit Domain' : 'Add Domain'}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <TextField
        required
        label="Domain"
        placeholder="app.example.com"
        description="The domain name must resolve to this gateway's public address. *.example.com: a wildcard domain (DNS-01 only)."
        autoComplete="off"
        {...form.field('domain')}
      />
      <SelectField
        label="SSL Certificate Type"
        options={domain?.ssl === 'uploaded' ? [...SSL_OPTIONS, UPLOADED_OPTION] : SSL_OPTIONS}
        disabled={isSslLocked}
        description={
          isSslLocked
            ? 'Self-signed when skipping domain validation.'
            : "Let's Encrypt issues a trusted certificate once the domain is validated."
        }
        {...form.field('ssl')}
        onChange={(value) => form.setValue('ssl', (SSL_MODES.includes(value) ? value : 'self-signed') as SslMode)}
      />
      {isAcme && (
        <>
          <SelectField
            label="Challenge"
            options={CHALLENGE_OPTIONS}
            description="How the CA checks the domain is yours. Wildcard domains and gateways without port 80 use DNS-01."
            {...form.field('challenge')}
            onChange={(value) => form.setValue('challenge', value === 'dns-01' ? 'dns-01' : 'http-01')}
          />
          {form.values.challenge === 'dns-01' && (
            <SelectField
              label="DNS Provider"
              placeholder="Choose a DNS provider"
              options={(providers.data ?? []).map((provider) => ({ value: String(provider.id), label: provider.name }))}
              description="Writes the _acme-challenge record. Providers are set in Settings."
              {...form.field('dnsProviderId')}
            />
          )}
          <SelectField
            label="Certificate Authority"
            options={[
              { value: '', label: defaultCa ? `Gateway default (${defaultCa.name})` : 'Gateway default' },
              ...(authorities.data ?? []).map((ca) => ({ value: String(ca.id), label: ca.name })),
            ]}
            {...form.field('acmeCaId')}
          />
        </>
      )}
      <SelectField
        label="Owner"
        options={ownerOptions(nodes.data?.data ?? [], domain)}
        description="A node's access token may publish services on the domains it owns; Admin: only this console."
        {...form.field('ownerNodeId')}
      />
      <CheckboxField
        label="Skip Domain Validation"
        description="Without validation Let's Encrypt cannot issue a certificate; only self-signed is available."
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
