import type { Domain } from '@postern/contract';
import { useConfirm } from '../../components/ui/confirm';
import { useToast } from '../../components/ui/toast';
import { settleStoredChange } from '../../lib/api';
import { useDeleteDomain } from '../../queries/domains';
import { t } from '../../i18n/i18n';

/** Delete Domain behind its confirmation; failures are reported by the API client and only logged here. */
export function useDeleteDomainAction() {
  const confirm = useConfirm();
  const { toast } = useToast();
  const deleteDomain = useDeleteDomain();
  return async (domain: Domain): Promise<void> => {
    const isConfirmed = await confirm({
      title: t('domains.menu.delete'),
      description: t('domains.delete.confirm', { domain: domain.domain }),
      variant: 'danger',
      acceptButtonText: t('domains.delete.accept'),
    });
    if (!isConfirmed) return;
    try {
      if ((await settleStoredChange(deleteDomain.mutateAsync(domain.id))).isApplied)
        toast({ message: t('domains.deleted'), type: 'success' });
    } catch (error) {
      console.error('delete domain failed', error);
    }
  };
}
