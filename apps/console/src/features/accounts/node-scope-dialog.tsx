import { limits, type Account } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { FormDialog } from '../../components/ui/dialog';
import { CheckboxField } from '../../components/ui/form-field';
import { nodeListQueryOptions } from '../../queries/nodes';

// The nodes an operator or viewer may see (docs/api.md "Node scope"): none ticked is every node. Part of the Accounts
// page's lazy chunk; the node list is read only while the dialog is open.

/** What the Accounts page says of an account's scope. */
export const scopeText = (account: Pick<Account, 'nodes'>): string =>
  account.nodes === null ? 'All nodes' : `${String(account.nodes.length)} node${account.nodes.length === 1 ? '' : 's'}`;

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
      title={`Nodes ${account.username} may see`}
      onClose={onClose}
      isSubmitting={isSaving}
      onSubmit={(event) => {
        event.preventDefault();
        onSave(chosen.size === 0 ? null : [...chosen]);
      }}
    >
      <p className="text-sm text-gray-600 dark:text-gray-300">
        Other nodes, their services and tokens are hidden from this account, and it cannot use what spans nodes
        (domains, logs, the audit log). Tick none for every node.
      </p>
      {nodes.isPending && <p className="text-sm text-gray-500">Loading…</p>}
      {nodes.isError && <p className="text-sm text-red-700 dark:text-red-300">The nodes could not be loaded.</p>}
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
