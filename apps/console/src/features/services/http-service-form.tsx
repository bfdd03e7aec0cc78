import type { HttpService } from '@postern/contract';
import { SelectField, TextField } from '../../components/ui/form-field';
import { useCreateHttpService, useUpdateHttpService } from '../../queries/services';
import { getHttpFieldAccess, getInitialHttpValues, makeHttpFormSchema } from './service-form-rules';
import { describeBackendHostField, type ServiceFormProps } from './service-form-texts';
import { ExpiryField } from './service-expiry';
import { ServiceFormFrame } from './service-form-frame';
import { useServiceForm } from './use-service-form';
import { AccessSection } from '../access/access-section';
import { useServiceAccess } from '../access/use-service-access';
import { t } from '../../i18n/i18n';

/** The HTTP service form (the spec's "Validation rules"): POST to create, PATCH to edit. */
export function HttpServiceForm(props: ServiceFormProps<HttpService>) {
  const { node, service } = props;
  const create = useCreateHttpService();
  const update = useUpdateHttpService();
  const { form, frame } = useServiceForm(props, {
    makeSchema: makeHttpFormSchema,
    initialValues: getInitialHttpValues(node, service),
    // Read when the form is sent: visitor access (below) needs the form's domain first.
    mutations: () => ({
      create: visitorAccess.creating(create.mutateAsync),
      update: visitorAccess.updating(update.mutateAsync),
    }),
  });
  const access = getHttpFieldAccess(node, service);
  const visitorAccess = useServiceAccess(node, service, form.values.domain);

  return (
    <ServiceFormFrame
      title={t(service ? 'services.form.editTitle' : 'services.form.exposeTitle', { type: 'HTTP' })}
      domainLabel={t('services.form.domain')}
      domainPlaceholder="app.example.com"
      {...frame}
    >
      <TextField
        label={t('services.form.path')}
        placeholder="/"
        description={t('services.form.pathHint')}
        disabled={access.isPathLocationDisabled}
        {...form.field('pathLocation')}
      />
      <SelectField
        label={t('services.form.backendProto')}
        options={[
          { value: 'http', label: 'http://' },
          { value: 'https', label: 'https://' },
        ]}
        disabled={access.isBackendProtoDisabled}
        {...form.field('backendProto')}
        onChange={(value) => form.setValue('backendProto', value === 'https' ? 'https' : 'http')}
      />
      <TextField
        label={t('services.form.backendHost')}
        placeholder="localhost"
        description={describeBackendHostField(node)}
        disabled={access.isBackendHostDisabled}
        required={!access.isBackendHostDisabled}
        {...form.field('backendHost')}
      />
      <TextField
        label={t('services.form.backendPort')}
        type="number"
        inputMode="numeric"
        placeholder="80"
        disabled={access.isBackendPortDisabled}
        required={!access.isBackendPortDisabled}
        {...form.field('backendPort')}
      />
      <ExpiryField service={service} value={form.values.expiry} onChange={(value) => form.setValue('expiry', value)} />
      <AccessSection draft={visitorAccess.draft} stored={visitorAccess.stored} />
    </ServiceFormFrame>
  );
}
