import type { ServiceType } from '@postern/contract';
import { useConfirm } from '../../components/ui/confirm';
import { useToast } from '../../components/ui/toast';
import { useDeleteService, useSetServiceAccess, type ServiceRef } from '../../queries/services';
import { t } from '../../i18n/i18n';

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
      title: t('services.enable.title'),
      description: t('services.enable.confirm'),
      variant: 'info',
      acceptButtonText: t('services.enable.accept'),
    });
    if (!isConfirmed) return;
    try {
      await setAccess.mutateAsync({ ref: refOf(type, service), isEnabled: true });
      toast({ message: t('services.exposed'), type: 'success' });
    } catch (error) {
      console.error('enable service failed', error);
    }
  };

  const disableAccess = async (service: ServiceLike): Promise<void> => {
    const isConfirmed = await confirm({
      title: t('services.disable.title'),
      description: t('services.disable.confirm'),
      variant: 'danger',
      acceptButtonText: t('services.disable.accept'),
    });
    if (!isConfirmed) return;
    try {
      await setAccess.mutateAsync({ ref: refOf(type, service), isEnabled: false });
      toast({ message: t('services.disabled'), type: 'success' });
    } catch (error) {
      console.error('disable service failed', error);
    }
  };

  const remove = async (service: ServiceLike): Promise<void> => {
    const isConfirmed = await confirm({
      title: t('services.menu.delete'),
      description: t('services.delete.confirm'),
      variant: 'danger',
      acceptButtonText: t('services.delete.accept'),
    });
    if (!isConfirmed) return;
    try {
      await deleteService.mutateAsync(refOf(type, service));
      toast({ message: t('services.deleted'), type: 'success' });
    } catch (error) {
      console.error('delete service failed', error);
    }
  };

  return { enableAccess, disableAccess, remove };
}
