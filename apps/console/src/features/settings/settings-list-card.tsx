import type { ReactNode } from 'react';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { useConfirm } from '../../components/ui/confirm';
import { EmptyState } from '../../components/ui/empty-state';
import { ActionMenu } from '../../components/ui/menu';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Td, Th, THead } from '../../components/ui/table';
import { t } from '../../i18n/i18n';
import { useCan } from '../../queries/account';

// The Settings cards that list what an admin configured once (identity providers, DNS providers, certificate
// authorities, ...): one shape for loading, failure, the empty state, the table with a row menu, and the add button.

export interface SettingsListCardProps<T> {
  title: string;
  /** The add button's text, e.g. '+ Add provider'. */
  addLabel: string;
  onAdd: () => void;
  /**
   * What the list holds, in the plural and the active language: 'DNS providers' gives 'Loading DNS providers' (the
   * messages `settings.list.loading` and `settings.list.loadError` take it without an article of their own).
   */
  noun: string;
  isPending: boolean;
  isError: boolean;
  items: readonly T[] | undefined;
  empty: { title: string; description: string };
  /** The header cells before the actions column. */
  headers: ReactNode;
  /** A table row (a `Tr` with its key). */
  row: (item: T) => ReactNode;
  /** Under the table (pagination). */
  footer?: ReactNode;
  /** The form dialog. */
  children?: ReactNode;
}

export function SettingsListCard<T>(props: SettingsListCardProps<T>) {
  const { items } = props;
  // Operators and viewers read these lists; changing them is an admin's (the contract's role table).
  const mayChange = useCan('settings');
  let body: ReactNode;
  if (props.isPending) {
    body = (
      <div className="flex justify-center py-8">
        <Spinner label={t('settings.list.loading', { noun: props.noun })} />
      </div>
    );
  } else if (props.isError || !items) {
    body = (
      <p className="px-4 py-6 text-sm text-red-700 dark:text-red-300">
        {t('settings.list.loadError', { noun: props.noun })}
      </p>
    );
  } else if (items.length === 0) {
    body = <EmptyState title={props.empty.title} description={props.empty.description} />;
  } else {
    body = (
      <>
        <Table>
          <THead>
            {props.headers}
            <Th>
              <span className="sr-only">{t('ui.actions')}</span>
            </Th>
          </THead>
          <TBody>{items.map((item) => props.row(item))}</TBody>
        </Table>
        {props.footer}
      </>
    );
  }
  return (
    <Card
      title={props.title}
      actions={
        mayChange && (
          <Button variant="secondary" onClick={props.onAdd}>
            {props.addLabel}
          </Button>
        )
      }
    >
      {body}
      {props.children}
    </Card>
  );
}

/** The row menu of a settings list: Edit and Delete. */
export function EditDeleteCell({
  label,
  onEdit,
  onDelete,
}: {
  label: string;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const mayChange = useCan('settings');
  return (
    <Td className="w-12 text-right">
      {mayChange && (
        <ActionMenu
          label={label}
          items={[
            { label: t('settings.list.edit'), onSelect: onEdit },
            { label: t('settings.list.delete'), isDanger: true, onSelect: onDelete },
          ]}
        />
      )}
    </Td>
  );
}

export interface DeleteFlow {
  /** When the item is in use: the dialog's title and the gateway's sentence; nothing is deleted. */
  inUse?: { title: string; description: string } | null;
  title: string;
  description: string;
  remove: () => Promise<unknown>;
  /** For the console log when the delete fails (the API layer has already told the operator). */
  what: string;
}

/** Delete after a confirmation, or explain why it cannot be deleted yet. */
export function useConfirmedDelete(): (flow: DeleteFlow) => Promise<void> {
  const confirm = useConfirm();
  return async (flow) => {
    if (flow.inUse) {
      await confirm({
        title: flow.inUse.title,
        description: flow.inUse.description,
        variant: 'info',
        acceptButtonText: t('settings.list.gotIt'),
        cancelButtonText: t('ui.close'),
      });
      return;
    }
    const isConfirmed = await confirm({
      title: flow.title,
      description: flow.description,
      variant: 'danger',
      acceptButtonText: t('settings.list.confirmDelete'),
    });
    if (isConfirmed) await flow.remove().catch((error: unknown) => console.error(`delete ${flow.what} failed`, error));
  };
}
