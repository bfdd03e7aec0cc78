import { limits, type Account } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { FormDialog } from '../../components/ui/dialog';
import { CheckboxField } from '../../components/ui/form-field';
import { t } from '../../i18n/i18n';
import { nodeListQueryOptions } from '../../queries/nodes';

// The nodes an operator or viewer may see (docs/api.md "Node scope"): none ticked is every node. Part of the Accounts
// page's lazy chunk; the node list is read only while the dialog is open.

/** What the Accounts page says of an account's scope. */
export const scopeText = (account: Pick<Account, 'nodes'>): string =>
  account.nodes === null ? t('accounts.scope.all') : t('accounts.scope.some', { count: account.nodes.length });

export function NodeScopeDialog({
  account,
  onClose,
  onSave,
  isSaving,
}: {
  account: Account;
  onClose: () => void;
  onSave: (nodes: number[] | null) => void;
  isSaving: boolean;
}) {
  const nodes = useQuery(nodeListQueryOptions({ page: 1, limit: limits.listMaxLimit, sort: 'name' }));
  const [chosen, setChosen] = useState<ReadonlySet<number>>(() => new Set(account.nodes ?? []));
  const toggle = (id: number, on: boolean) =>
    setChosen((before) => {
      const next = new Set(before);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  return (
    <FormDialog
      open
      title={t('accounts.scope.dialogTitle', { username: account.username })}
      onClose={onClose}
      isSubmitting={isSaving}
      onSubmit={(event) => {
        event.preventDefault();
        onSave(chosen.size === 0 ? null : [...chosen]);
      }}
    >
      <p className="text-sm text-gray-600 dark:text-gray-300">{t('accounts.scope.text')}</p>
      {nodes.isPending && <p className="text-sm text-gray-500">{t('ui.loadingEllipsis')}</p>}
      {nodes.isError && <p className="text-sm text-red-700 dark:text-red-300">{t('accounts.scope.loadError')}</p>}

      <div className="flex max-h-80 flex-col gap-2 overflow-y-auto">
        {nodes.data?.data.map((node) => (
          <CheckboxField
            key={node.id}
            name={`node-${String(node.id)}`}
            label={node.name}
            value={chosen.has(node.id)}
            onChange={(on) => toggle(node.id, on)}
          />
        ))}
      </div>
    </FormDialog>
  );
}
