import type { ServiceType } from '@postern/contract';
import { useConfirm } from '../../components/ui/confirm';
import { useToast } from '../../components/ui/toast';
import { useDeleteService, useSetServiceAccess, type ServiceRef } from '../../queries/services';

// Enable Access, Disable Access and Delete Service, each behind a confirmation (the spec's "Error catalogue"). Failures
// are reported by the API client (400 toast, logout on 401/403/429); here they are only logged.

type ServiceLike = { id: number; nodeId: number };

const refOf = (type: ServiceType, service: ServiceLike): ServiceRef => ({
  nodeId: service.nodeId,
  type,
  id: service.id,
});

export function useServiceActions(type: ServiceType) {
  const confirm = useConfirm();
  const { toast } = useToast();
  const setAccess = useSetServiceAccess();
  const deleteService = useDeleteService();

  const enableAccess = async (service: ServiceLike): Promise<void> => {
    const isConfirmed = await confirm({
      title: 'Enable Public Access',
      description:
        'Enabling public access will make this service reachable from external networks. Do you want to expose this service publicly?',
      variant: 'info',
      acceptButtonText: 'Yes, enable public access!',
    });
    if (!isConfirmed) return;
    try {
      await setAccess.mutateAsync({ ref: refOf(type, service), isEnabled: true });
      toast({ message: 'Service exposed successfully!', type: 'success' });
    } catch (error) {
      console.error('enable service failed', error);
    }
  };

  const disableAccess = async (service: ServiceLike): Promise<void> => {
    const isConfirmed = await confirm({
      title: 'Disable Public Access',
      description:
        'Disabling public access will make this service unreachable from external networks. Do you want to stop exposing this service publicly?',
      variant: 'danger',
      acceptButtonText: 'Yes, disable public access!',
    });
    if (!isConfirmed) return;
    try {
      await setAccess.mutateAsync({ ref: refOf(type, service), isEnabled: false });
      toast({ message: 'Service disabled from public access successfully!', type: 'success' });
    } catch (error) {
      console.error('disable service failed', error);
    }
  };

  const remove = async (service: ServiceLike): Promise<void> => {
    const isConfirmed = await confirm({
      title: 'Delete Service',
      description:
        'This action will permanently remove the service and its public access. This cannot be undone. Are you sure you want to delete this service?',
      variant: 'danger',
      acceptButtonText: 'Yes, delete it!',
    });
    if (!isConfirmed) return;
    try {
      await deleteService.mutateAsync(refOf(type, service));
      toast({ message: 'Service deleted successfully!', type: 'success' });
    } catch (error) {
      console.error('delete service failed', error);
    }
  };

  return { enableAccess, disableAccess, remove };
}
