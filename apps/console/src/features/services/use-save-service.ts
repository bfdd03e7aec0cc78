import type { HttpService, Node, TcpService } from '@postern/contract';
import { useToast } from '../../components/ui/toast';
import { settleStoredChange } from '../../lib/api';
import { t } from '../../i18n/i18n';
import { updatedMessage } from './service-form-texts';

type SaveServiceOptions<S extends HttpService | TcpService, B> = {
  node: Node;
  service: S | undefined;
  create: (args: { nodeId: number; body: B }) => Promise<S>;
  update: (args: { ref: { nodeId: number; id: number }; body: B }) => Promise<S>;
  onClose: () => void;
  onCreated: (service: S) => void;
};

/**
 * The submit flow both service forms share: PATCH, toast (with the new public address if it moved) and close when
 * editing; POST, toast and hand the new service
 * to the exposed dialog when creating. A change the server stored but could not apply closes the form as well
 * (the error toast said why; the list shows the service with its applyError): sending it again would repeat it.
 */
export function useSaveService<S extends HttpService | TcpService, B>(options: SaveServiceOptions<S, B>) {
  const { toast } = useToast();
  return async (body: B): Promise<void> => {
    const { node, service } = options;
    if (service) {
      const updated = await settleStoredChange(options.update({ ref: { nodeId: node.id, id: service.id }, body }));
      if (updated.isApplied)
        toast({ message: updatedMessage(service.publicAccess, updated.value.publicAccess), type: 'success' });
      options.onClose();
      return;
    }
    const created = await settleStoredChange(options.create({ nodeId: node.id, body }));
    if (!created.isApplied) {
      options.onClose();
      return;
    }
    toast({ message: t('services.exposed'), type: 'success' });
    options.onCreated(created.value);
  };
}
