import type { HttpService } from '@postern/contract';
import { useMemo } from 'react';
import { FormDialog } from '../../components/ui/dialog';
import { AutocompleteField, IpListField, SelectField, TextField } from '../../components/ui/form-field';
import { useZodForm } from '../../lib/use-zod-form';
import { useCreateHttpService, useUpdateHttpService } from '../../queries/services';
import { getHttpFieldAccess, getInitialHttpValues, makeHttpFormSchema } from './service-form-rules';
import { describeBackendHostField, DOMAIN_HELP, IP_HELP, type ServiceFormProps } from './service-form-texts';
import { useDomainSuggestions } from './use-domain-suggestions';
import { useSaveService } from './use-save-service';

/** The HTTP service form (console-spec §5): POST to create, PATCH to edit. */
export function HttpServiceForm({ node, service, onClose, onCreated }: ServiceFormProps<HttpService>) {
  const schema = useMemo(() => makeHttpFormSchema(node), [node]);
  const form = useZodForm(schema, getInitialHttpValues(node, service));
  const access = getHttpFieldAccess(node, service);
  const loadDomains = useDomainSuggestions();
  const create = useCreateHttpService();
  const update = useUpdateHttpService();
  const save = useSaveService({ node, service, create: create.mutateAsync, update: update.mutateAsync, onClose, onCreated });
  const onSubmit = form.handleSubmit(save);

  return (
    <FormDialog
      open
      size="large"
      title={service ? 'Edit HTTP Service' : 'Expose HTTP Service'}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
        <TextField label="Service Name" placeholder="Enter a friendly name for this service" {...form.field('name')} />
        <AutocompleteField
          label="Public Domain"
          placeholder="app.example.com"
          description={DOMAIN_HELP}
          loadOptions={loadDomains}
          {...form.field('domain')}
        />
        <TextField
          label="Public HTTP Path"
          placeholder="/"
          description="Where the service is published, e.g. /api. Domain and path together must be unique."
          disabled={access.isPathLocationDisabled}
          {...form.field('pathLocation')}
        />
        <SelectField
          label="Backend Protocol"
          options={[
            { value: 'http', label: 'http://' },
            { value: 'https', label: 'https://' },
          ]}
          disabled={access.isBackendProtoDisabled}
          {...form.field('backendProto')}
          onChange={(value) => form.setValue('backendProto', value === 'https' ? 'https' : 'http')}
        />
        <TextField
          label="Backend Host"
          placeholder="localhost"
          description={describeBackendHostField(node)}
          disabled={access.isBackendHostDisabled}
          {...form.field('backendHost')}
        />
        <TextField
          label="Backend Port"
          type="number"
          inputMode="numeric"
          placeholder="80"
          disabled={access.isBackendPortDisabled}
          {...form.field('backendPort')}
        />
        <IpListField label="Allowed IPs" description={IP_HELP.allowed} {...form.field('allowedIps')} />
        <IpListField label="Blocked IPs" description={IP_HELP.blocked} {...form.field('blockedIps')} />
      </div>
    </FormDialog>
  );
}
