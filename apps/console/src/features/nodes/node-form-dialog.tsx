import type { Node, NodeCreated } from '@postern/contract';
import { useEffect } from 'react';
import { FormDialog } from '../../components/ui/dialog';
import { CheckboxField, TextField } from '../../components/ui/form-field';
import { settleStoredChange } from '../../lib/api';
import { useZodForm } from '../../lib/use-zod-form';
import { useCreateNode, useUpdateNode } from '../../queries/nodes';
import { NodeFormSchema, nodeFormValues, withGateway } from './node-form';

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
      title={node ? 'Edit Node' : 'New Node'}
      size="small"
      onClose={onClose}
      onSubmit={submit}
      isSubmitting={form.isSubmitting}
    >
      <TextField label="Name" placeholder="e.g. home-lab" required {...form.field('name')} />
      <TextField
        label="Address (Optional)"
        placeholder="Assigned automatically"
        description="An IPv4 address in the VPN, without CIDR."
        {...form.field('address')}
      />
      <CheckboxField label="Send all internet traffic through the VPN" {...form.field('allowInternet')} />
      <CheckboxField
        label="This node is a gateway"
        description="A gateway routes whole subnets of its network into the VPN."
        {...form.field('isGateway')}
        onChange={(checked) => {
          form.patchValues(withGateway(form.values, checked));
          if (!checked) form.touch('gatewayNetwork'); // drops a stale "required" message with the cleared value
        }}
      />
      {isGateway && (
        <TextField label="Gateway Network" placeholder="192.168.1.0/24" required {...form.field('gatewayNetwork')} />
      )}
      {isGateway && (
        <TextField
          label="Further Networks (Optional)"
          placeholder="10.20.0.0/24, 192.168.50.0/24"
          description="More subnets behind this gateway (an IoT VLAN, a second LAN), separated by commas."
          {...form.field('gatewayNetworks')}
        />
      )}
      {isGateway && (
        <CheckboxField
          label="Let this node's access tokens set its networks"
          description="With postern networks set: private ranges only, none the gateway itself uses. Off: only you set them here."
          {...form.field('allowTokenNetworks')}
        />
      )}
      {node?.applyError && (
        <p className="text-sm text-red-600 dark:text-red-400" role="status">
          Not all of this node is served: {node.applyError}
        </p>
      )}
    </FormDialog>
  );
}
