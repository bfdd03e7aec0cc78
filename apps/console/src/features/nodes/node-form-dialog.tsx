import type { Node, NodeCreated } from '@postern/contract';
import { useEffect } from 'react';
import { FormDialog } from '../../components/ui/dialog';
import { CheckboxField, TextField } from '../../components/ui/form-field';
import { settleStoredChange } from '../../lib/api';
import { useZodForm } from '../../lib/use-zod-form';
import { useCreateNode, useUpdateNode } from '../../queries/nodes';
import { NodeFormSchema, nodeFormValues, withGateway } from './node-form';
import { t } from '../../i18n/i18n';
import { withElements } from './texts';

type NodeFormDialogProps = {
  open: boolean;
  /** Edit this node (PATCH); without it the form creates one (POST). */
  node?: Node | null;
  onClose: () => void;
  onCreated?: (node: NodeCreated) => void;
};

export function NodeFormDialog({ open, node, onClose, onCreated }: NodeFormDialogProps) {
  // The full form is on screen in both modes, so the create rules (name required, subnet for gateways) apply to both.
  const form = useZodForm(NodeFormSchema, nodeFormValues(node));
  const createNode = useCreateNode();
  const updateNode = useUpdateNode();
  const { reset } = form;

  useEffect(() => {
    if (open) reset(nodeFormValues(node));
  }, [open, node, reset]);

  const submit = form.handleSubmit(async (body) => {
    if (node) {
      // Stored but not applied closes the form too: the toast said why, sending it again would repeat it.
      await settleStoredChange(updateNode.mutateAsync({ id: node.id, body }));
      onClose();
    } else {
      const created = await createNode.mutateAsync(body);
      onClose();
      onCreated?.(created);
    }
  });

  const isGateway = form.values.isGateway;
  return (
    <FormDialog
      open={open}
      title={node ? t('nodes.form.editTitle') : t('nodes.form.newTitle')}
      size="small"
      onClose={onClose}
      onSubmit={submit}
      isSubmitting={form.isSubmitting}
    >
      <TextField
        label={t('nodes.form.name')}
        placeholder={t('nodes.form.namePlaceholder')}
        required
        {...form.field('name')}
      />
      <TextField
        label={t('nodes.form.address')}
        placeholder={t('nodes.form.addressPlaceholder')}
        description={t('nodes.form.addressHint')}
        {...form.field('address')}
      />
      <CheckboxField label={t('nodes.allowInternet')} {...form.field('allowInternet')} />
      <CheckboxField
        label={t('nodes.form.isGateway')}
        description={t('nodes.form.isGatewayHint')}
        {...form.field('isGateway')}
        onChange={(checked) => {
          form.patchValues(withGateway(form.values, checked));
          if (!checked) form.touch('gatewayNetwork'); // drops a stale "required" message with the cleared value
        }}
      />
      {isGateway && (
        <TextField
          label={t('nodes.form.gatewayNetwork')}
          placeholder="192.168.1.0/24"
          required
          {...form.field('gatewayNetwork')}
        />
      )}
      {isGateway && (
        <TextField
          label={t('nodes.form.moreNetworks')}
          placeholder="10.20.0.0/24, 192.168.50.0/24"
          description={t('nodes.form.moreNetworksHint')}
          {...form.field('gatewayNetworks')}
        />
      )}
      {isGateway && (
        <CheckboxField
          label={t('nodes.form.tokenNetworks')}
          description={withElements('nodes.form.tokenNetworksHint', { command: <code>postern networks set</code> })}
          {...form.field('allowTokenNetworks')}
        />
      )}
      {node?.applyError && (
        <p className="text-sm text-red-600 dark:text-red-400" role="status">
          {t('nodes.form.notServed', { error: node.applyError })}
        </p>
      )}
    </FormDialog>
  );
}
