import { describeMessage, type HttpService, type Node, type TcpService } from '@postern/contract';
import { useMemo } from 'react';
import type { z } from 'zod';
import { fieldErrorText } from '../../i18n/error-text';
import { useZodForm, type FieldBinding } from '../../lib/use-zod-form';
import type { ServiceFormProps } from './service-form-texts';
import { useSaveService } from './use-save-service';

/** What every service form holds, whatever its kind adds. */
type CommonValues = { name: string; domain: string; allowedIps: string[]; blockedIps: string[] };

type Mutations<S, B> = {
  create: (args: { nodeId: number; body: B }) => Promise<S>;
  update: (args: { ref: { nodeId: number; id: number }; body: B }) => Promise<S>;
};

/**
 * A field's message in the operator's language: the form's checks (the contract's schemas) and a 422 word it in
 * English; its code (message-codes.ts) names the catalogue's `error.<code>`. A text without a code shows as it is.
 */
function inLanguage<V>(binding: FieldBinding<V>): FieldBinding<V> {
  if (!binding.error) return binding;
  return { ...binding, error: fieldErrorText({ message: binding.error, ...describeMessage(binding.error) }) };
}

/**
 * The wiring the HTTP and TCP/UDP service forms share: the kind's schema for this node, the form, the save flow
 * (use-save-service.ts) and the props of ServiceFormFrame. `mutations` is read when the form is sent, so a form may
 * wrap its mutations in something that needs the form's values first (the HTTP form's visitor access).
 */
export function useServiceForm<
  S extends HttpService | TcpService,
  TValues extends CommonValues,
  TSchema extends z.ZodType,
>(
  { node, service, onClose, onCreated }: ServiceFormProps<S>,
  kind: {
    makeSchema: (node: Node) => TSchema;
    initialValues: TValues;
    mutations: () => Mutations<S, z.output<TSchema>>;
  },
) {
  const { makeSchema } = kind;
  const schema = useMemo(() => makeSchema(node), [makeSchema, node]);
  const zodForm = useZodForm(schema, kind.initialValues);
  const form = {
    ...zodForm,
    field: <K extends keyof TValues & string>(name: K) => inLanguage(zodForm.field(name)),
  };
  const save = useSaveService<S, z.output<TSchema>>({
    node,
    service,
    create: (args) => kind.mutations().create(args),
    update: (args) => kind.mutations().update(args),
    onClose,
    onCreated,
  });
  const fields = {
    name: form.field('name'),
    domain: form.field('domain'),
    allowedIps: form.field('allowedIps'),
    blockedIps: form.field('blockedIps'),
  };
  const frame = {
    node,
    source: service?.source,
    fields,
    onClose,
    onSubmit: form.handleSubmit(save),
    isSubmitting: form.isSubmitting,
  };
  return { form, frame };
}
