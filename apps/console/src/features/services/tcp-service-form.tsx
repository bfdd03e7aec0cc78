import type { TcpService } from '@postern/contract';
import { CheckboxField, SelectField, TextField } from '../../components/ui/form-field';
import { useCreateTcpService, useUpdateTcpService } from '../../queries/services';
import { canEditBackendHost, getInitialTcpValues, makeTcpFormSchema } from './service-form-rules';
import { describeBackendHostField, type ServiceFormProps } from './service-form-texts';
import { ExpiryField } from './service-expiry';
import { ServiceFormFrame } from './service-form-frame';
import { useServiceForm } from './use-service-form';
import { t } from '../../i18n/i18n';

/**
 * The TCP/UDP service form (the spec's "Validation rules"): POST to create, PATCH to edit; an empty public port is
 * assigned.
 */
export function TcpServiceForm(props: ServiceFormProps<TcpService>) {
  const { node, service } = props;
  const create = useCreateTcpService();
  const update = useUpdateTcpService();
  const { form, frame } = useServiceForm(props, {
    makeSchema: makeTcpFormSchema,
    initialValues: getInitialTcpValues(node, service),
    mutations: () => ({ create: create.mutateAsync, update: update.mutateAsync }),
  });

  return (
    <ServiceFormFrame
      title={t(service ? 'services.form.editTitle' : 'services.form.exposeTitle', { type: 'TCP' })}
      domainLabel={t('services.form.domainOptional')}
      domainPlaceholder="mqtt.example.com"
      {...frame}
    >
      <SelectField
        label={t('services.form.proto')}
        options={[
          { value: 'tcp', label: 'TCP' },
          { value: 'udp', label: 'UDP' },
        ]}
        {...form.field('proto')}
        onChange={(value) => {
          // TLS termination exists for TCP only: switching to UDP drops it.
          if (value === 'udp') form.patchValues({ ssl: false });
          form.setValue('proto', value === 'udp' ? 'udp' : 'tcp');
        }}
      />
      <TextField
        label={t('services.form.port')}
        type="number"
        inputMode="numeric"
        placeholder={t('services.form.portPlaceholder')}
        description={t('services.form.portHint')}
        {...form.field('port')}
      />
      <TextField
        label={t('services.form.backendHost')}
        placeholder="localhost"
        description={describeBackendHostField(node)}
        disabled={!canEditBackendHost(node)}
        required={canEditBackendHost(node)}
        {...form.field('backendHost')}
      />
      <TextField
        label={t('services.form.backendPort')}
        type="number"
        inputMode="numeric"
        placeholder="1883"
        required
        {...form.field('backendPort')}
      />
      <ExpiryField service={service} value={form.values.expiry} onChange={(value) => form.setValue('expiry', value)} />
      <div className="md:col-span-2">
        <CheckboxField
          label={t('services.form.ssl')}
          description={t('services.form.sslHint')}
          disabled={form.values.proto === 'udp'}
          {...form.field('ssl')}
        />
      </div>
    </ServiceFormFrame>
  );
}
