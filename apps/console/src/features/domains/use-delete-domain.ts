import type { Domain } from '@postern/contract';
import { useConfirm } from '../../components/ui/confirm';
import { useToast } from '../../components/ui/toast';
import { settleStoredChange } from '../../lib/api';
import { useDeleteDomain } from '../../queries/domains';

/** Delete Domain behind its confirmation; failures are reported by the API client and only logged here. */
export function useDeleteDomainAction() {
  const confirm = useConfirm();
  const { toast } = useToast();
  const deleteDomain = useDeleteDomain();
  return async (domain: Domain): Promise<void> => {
    const isConfirmed = await confirm({
      title: 'Delete Domain',
      description: `Are you sure you want to delete ${domain.domain}? Its certificate is removed. This cannot be undone.`,
      variant: 'danger',
      acceptButtonText: 'Yes, delete it!',
    });
    if (!isConfirmed) return;
    try {
      if ((await settleStoredChange(deleteDomain.mutateAsync(domain.id))).isApplied)
        toast({ message: 'Domain deleted successfully!', type: 'success' });
    } catch (error) {
      console.error('delete domain failed', error);
    }
  };
}
