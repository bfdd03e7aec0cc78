import {
  can,
  InviteCreateSchema,
  SCOPED_ROLES,
  ROLES,
  type Account,
  type InviteCreated,
  type Role,
} from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { useConfirm } from '../../components/ui/confirm';
import { CopyField } from '../../components/ui/copy-button';
import { FormDialog, InfoDialog } from '../../components/ui/dialog';
import { SelectField, TextField } from '../../components/ui/form-field';
import { ActionMenu, type MenuItem } from '../../components/ui/menu';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import { formatDateTime } from '../../i18n/format';
import { t } from '../../i18n/i18n';
import { showToast } from '../../lib/toast-store';
import { useZodForm } from '../../lib/use-zod-form';
import { useCurrentAccount } from '../../queries/account';
import {
  accountsQueryOptions,
  invitesQueryOptions,
  useCreateInvite,
  useDeleteAccount,
  useResetTwoFactor,
  useRevokeInvite,
  useUpdateAccount,
} from '../../queries/accounts';
import { NodeScopeDialog, scopeText } from './node-scope-dialog';

// Beyond the spec: the owners' page of accounts and invites (docs/api.md "Accounts and roles"). The server refuses
// everything here to any other role; the page says so instead of showing empty tables. One's own row has no actions:
// another owner changes it (own settings are under Settings).

// Role names are words of the active language (`role.*`); the API keeps its values. Read at render, never kept.
const roleLabel = (role: Role): string => t(`role.${role}`);
const roleDescription = (role: Role): string => t(`accounts.roleDescription.${role}`);
const roleOptions = () => ROLES.map((role) => ({ value: role, label: roleLabel(role) }));

const dateTime = (iso: string | null): string => (iso ? formatDateTime(iso) : t('accounts.never'));

/** How an account signs in: its password, its provider's identity, or both. */
export function signInWays(account: Pick<Account, 'passwordSignIn' | 'identity'>): string {
  const provider = account.identity?.providerName ?? (account.identity ? t('accounts.signIn.itsProvider') : null);
  if (provider && account.passwordSignIn) return t('accounts.signIn.passwordOr', { provider });
  if (provider) return t('accounts.signIn.providerOnly', { provider });
  return t(account.passwordSignIn ? 'accounts.signIn.password' : 'accounts.signIn.nothing');
}

export function AccountsPage() {
  // Decided once the account is known (not optimistically, as elsewhere): other roles must not even ask the server.
  const { data: account, isPending } = useCurrentAccount();
  if (isPending) return <p className="text-sm text-gray-500">{t('ui.loadingEllipsis')}</p>;
  if (account && !can(account.role, 'accounts')) {
    return (
      <div className="flex flex-col gap-4">
        <h1 className="text-2xl font-bold">{t('nav.accounts')}</h1>
        <p className="text-sm text-gray-600 dark:text-gray-300">{t('accounts.ownersOnly')}</p>
      </div>
    );
  }
  return <OwnersView />;
}

function OwnersView() {
  const [isInviting, setInviting] = useState(false);
  const [created, setCreated] = useState<InviteCreated | null>(null);
  return (
    <div className="flex flex-col gap-6">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h1 className="text-2xl font-bold">{t('nav.accounts')}</h1>
        <Button onClick={() => setInviting(true)}>{t('accounts.invite')}</Button>
      </div>
      <ul className="text-sm text-gray-600 dark:text-gray-300">
        {ROLES.map((role) => (
          <li key={role}>
            <span className="font-medium text-gray-900 dark:text-white">{roleLabel(role)}</span>:{' '}
            {roleDescription(role)}
          </li>
        ))}
      </ul>
      <AccountsCard />
      <InvitesCard />
      {isInviting && (
        <InviteDialog
          onClose={() => setInviting(false)}
          onCreated={(invite) => {
            setInviting(false);
            setCreated(invite);
          }}
        />
      )}
      <InfoDialog open={created !== null} title={t('accounts.inviteMade')} onClose={() => setCreated(null)}>
        {created && (
          <>
            <p>
              {t('accounts.inviteMadeText', {
                username: created.username,
                until: dateTime(created.expiresAt),
                role: roleLabel(created.role),
              })}
            </p>
            <CopyField label={t('accounts.inviteLink')} copyLabel={t('accounts.copyInviteLink')} value={created.url} />
          </>
        )}
      </InfoDialog>
    </div>
  );
}

function AccountsCard() {
  const accounts = useQuery(accountsQueryOptions());
  const me = useCurrentAccount().data;
  return (
    <Card title={t('nav.accounts')}>
      {accounts.isError ? (
        <p className="p-4 text-sm text-red-700 dark:text-red-300">{t('accounts.loadError')}</p>
      ) : (
        <Table>
          <THead>
            <Th>{t('login.username')}</Th>
            <Th>{t('accounts.column.role')}</Th>
            <Th>{t('accounts.column.status')}</Th>
            {/* Phones show who, role, status and actions: the table fits their width in every language. */}
            <Th className="hidden sm:table-cell">{t('accounts.column.twoFactor')}</Th>
            <Th className="hidden md:table-cell">{t('accounts.column.signsInWith')}</Th>
            <Th className="hidden md:table-cell">{t('accounts.column.lastSignIn')}</Th>
            <Th>
              <span className="sr-only">{t('ui.actions')}</span>
            </Th>
          </THead>
          <TBody>
            {accounts.data?.data.map((account) => (
              <AccountRow key={account.id} account={account} isSelf={account.id === me?.id} />
            ))}
          </TBody>
        </Table>
      )}
    </Card>
  );
}

function AccountRow({ account, isSelf }: { account: Account; isSelf: boolean }) {
  const update = useUpdateAccount();
  const remove = useDeleteAccount();
  const resetTwoFactor = useResetTwoFactor();
  const confirm = useConfirm();
  const name = account.username;
  const [choosingNodes, setChoosingNodes] = useState(false);
  // Only operators and viewers are limited by a node list (owners and admins see every node).
  const isScopable = (SCOPED_ROLES as readonly Role[]).includes(account.role);

  const change = async (body: Parameters<typeof update.mutateAsync>[0]['body'], done: string) => {
    await update.mutateAsync({ id: account.id, body });
    showToast({ message: done, type: 'success' });
  };
  const ask = (title: string, description: string, acceptButtonText: string) =>
    confirm({ title, description, acceptButtonText, variant: 'danger' });
  // A failure is told by the API layer (a toast with the server's message); nothing else to do here.
  const run = (work: () => Promise<unknown>) => () => void work().catch(() => undefined);

  const items: MenuItem[] = [
    {
      label: t('accounts.chooseNodes'),
      isHidden: !isScopable,
      onSelect: () => setChoosingNodes(true),
    },
    {
      label: t(account.enabled ? 'accounts.disable' : 'accounts.enable'),
      isDanger: account.enabled,
      onSelect: run(async () => {
        if (
          account.enabled &&
          !(await ask(t('accounts.disableTitle', { name }), t('accounts.disableText'), t('accounts.disable')))
        )
          return;
        await change(
          { enabled: !account.enabled },
          t(account.enabled ? 'accounts.disabled' : 'accounts.enabled', { name }),
        );
      }),
    },
    {
      label: t(account.passwordSignIn ? 'accounts.passwordOff' : 'accounts.passwordOn'),
      // Off only for an account that can sign in otherwise (the server says so too).
      isHidden: account.passwordSignIn && !account.identity,
      onSelect: run(() =>
        change(
          { passwordSignIn: !account.passwordSignIn },
          t(account.passwordSignIn ? 'accounts.providerOnlyNow' : 'accounts.passwordNow', { name }),
        ),
      ),
    },
    {
      label: t('accounts.resetTwoFactor'),
      isHidden: !account.twoFactor,
      isDanger: true,
      onSelect: run(async () => {
        if (
          await ask(t('accounts.resetTwoFactorTitle', { name }), t('accounts.resetTwoFactorText'), t('accounts.reset'))
        )
          await resetTwoFactor.mutateAsync(account.id);
      }),
    },
    {
      label: t('accounts.delete'),
      isDanger: true,
      onSelect: run(async () => {
        if (await ask(t('accounts.deleteTitle', { name }), t('accounts.deleteText'), t('accounts.delete')))
          await remove.mutateAsync(account.id);
      }),
    },
  ];

  return (
    <Tr>
      <Td className="font-medium">
        {name}
        {isSelf && <span className="ml-2 text-xs text-gray-500 dark:text-gray-400">{t('accounts.you')}</span>}
      </Td>
      <Td>
        {isSelf ? (
          roleLabel(account.role)
        ) : (
          <select
            aria-label={t('accounts.roleOf', { name })}
            value={account.role}
            disabled={update.isPending}
            onChange={(event) => {
              const role = event.target.value as Role;
              void change({ role }, t('accounts.roleChanged', { name, role: roleLabel(role) })).catch(() => undefined);
            }}
            className="rounded-md border border-gray-300 bg-white px-2 py-1 text-sm dark:border-gray-700 dark:bg-gray-900"
          >
            {roleOptions().map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        )}
        {isScopable && (
          <span className="ml-2 text-xs text-gray-500 dark:text-gray-400" title={t('accounts.scopeTitle')}>
            {scopeText(account)}
          </span>
        )}
        {choosingNodes && (
          <NodeScopeDialog
            account={account}
            isSaving={update.isPending}
            onClose={() => setChoosingNodes(false)}
            onSave={(nodes) =>
              void change(
                { nodes },
                nodes === null
                  ? t('accounts.seesEvery', { name })
                  : t('accounts.seesSome', { name, count: nodes.length }),
              )
                .then(() => setChoosingNodes(false))
                .catch(() => undefined)
            }
          />
        )}
      </Td>
      <Td>
        <Badge tone={account.enabled ? 'green' : 'red'}>
          {t(account.enabled ? 'accounts.status.enabled' : 'accounts.status.disabled')}
        </Badge>
      </Td>
      <Td className="hidden sm:table-cell">
        <Badge tone={account.twoFactor ? 'green' : 'gray'}>
          {t(account.twoFactor ? 'settings.on' : 'settings.off')}
        </Badge>
      </Td>
      <Td className="hidden md:table-cell">{signInWays(account)}</Td>
      <Td className="hidden md:table-cell">{dateTime(account.lastSignInAt)}</Td>

      <Td className="text-right">
        {!isSelf && <ActionMenu items={items} label={t('accounts.actionsFor', { name })} />}
      </Td>
    </Tr>
  );
}

function InvitesCard() {
  const invites = useQuery(invitesQueryOptions());
  const revoke = useRevokeInvite();
  const rows = invites.data?.data ?? [];
  return (
    <Card title={t('accounts.pendingInvites')}>
      {rows.length === 0 ? (
        <p className="p-4 text-sm text-gray-600 dark:text-gray-300">{t('accounts.noInvites')}</p>
      ) : (
        <Table>
          <THead>
            <Th>{t('login.username')}</Th>
            <Th>{t('accounts.column.role')}</Th>
            <Th>{t('accounts.column.state')}</Th>
            <Th>{t('accounts.column.expires')}</Th>
            <Th>{t('accounts.column.invitedBy')}</Th>
            <Th>
              <span className="sr-only">{t('ui.actions')}</span>
            </Th>
          </THead>
          <TBody>
            {rows.map((invite) => (
              <Tr key={invite.id}>
                <Td className="font-medium">{invite.username}</Td>
                <Td>{roleLabel(invite.role)}</Td>
                <Td>
                  <Badge tone={invite.state === 'pending' ? 'blue' : 'gray'}>
                    {t(invite.state === 'pending' ? 'accounts.invitePending' : 'accounts.inviteExpired')}
                  </Badge>
                </Td>
                <Td>{dateTime(invite.expiresAt)}</Td>
                <Td>{invite.createdBy ?? '—'}</Td>
                <Td className="text-right">
                  <Button
                    variant="secondary"
                    aria-label={t('accounts.revokeOf', { username: invite.username })}
                    onClick={() => void revoke.mutateAsync(invite.id).catch(() => undefined)}
                  >
                    {t('accounts.revoke')}
                  </Button>
                </Td>
              </Tr>
            ))}
          </TBody>
        </Table>
      )}
    </Card>
  );
}

const INVITE_EMPTY = { username: '', role: 'viewer' as string };

function InviteDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (invite: InviteCreated) => void }) {
  const form = useZodForm(InviteCreateSchema, INVITE_EMPTY);
  const create = useCreateInvite();
  const submit = form.handleSubmit(async (body) => {
    onCreated(await create.mutateAsync(body));
  });
  const role = form.field('role');
  return (
    <FormDialog
      open
      title={t('accounts.invite')}
      onClose={onClose}
      onSubmit={(event) => void submit(event)}
      isSubmitting={form.isSubmitting}
      saveText={t('accounts.makeLink')}
    >
      <TextField
        label={t('login.username')}
        description={t('accounts.usernameHint')}
        autoComplete="off"
        required
        {...form.field('username')}
      />
      <SelectField
        label={t('accounts.column.role')}
        {...role}
        options={roleOptions()}
        description={roleDescription(role.value as Role)}
      />
    </FormDialog>
  );
}
