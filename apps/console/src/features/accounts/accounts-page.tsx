import {
  can,
  InviteCreateSchema,
  SCOPED_ROLES,
  roleDescriptions,
  roleLabels,
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

const roleOptions = ROLES.map((role) => ({ value: role, label: roleLabels[role] }));

const dateTime = (iso: string | null): string => (iso ? new Date(iso).toLocaleString() : 'Never');

/** How an account signs in: its password, its provider's identity, or both. */
export function signInWays(account: Pick<Account, 'passwordSignIn' | 'identity'>): string {
  const provider = account.identity?.providerName ?? (account.identity ? 'its identity provider' : null);
  if (provider && account.passwordSignIn) return `Password or ${provider}`;
  if (provider) return `${provider} only`;
  return account.passwordSignIn ? 'Password' : 'Nothing (password sign-in is off)';
}

export function AccountsPage() {
  // Decided once the account is known (not optimistically, as elsewhere): other roles must not even ask the server.
  const { data: account, isPending } = useCurrentAccount();
  if (isPending) return <p className="text-sm text-gray-500">Loading…</p>;
  if (account && !can(account.role, 'accounts')) {
    return (
      <div className="flex flex-col gap-4">
        <h1 className="text-2xl font-bold">Accounts</h1>
        <p className="text-sm text-gray-600 dark:text-gray-300">Only an owner may see and manage accounts.</p>
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
        <h1 className="text-2xl font-bold">Accounts</h1>
        <Button onClick={() => setInviting(true)}>Invite someone</Button>
      </div>
      <ul className="text-sm text-gray-600 dark:text-gray-300">
        {ROLES.map((role) => (
          <li key={role}>
            <span className="font-medium text-gray-900 dark:text-white">{roleLabels[role]}</span>:{' '}
            {roleDescriptions[role]}
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
      <InfoDialog open={created !== null} title="Invite made" onClose={() => setCreated(null)}>
        {created && (
          <>
            <p>
              Send this link to {created.username}. It is shown only this once and works once, until{' '}
              {dateTime(created.expiresAt)}: whoever opens it sets the password of a new {roleLabels[created.role]}{' '}
              account.
            </p>
            <CopyField label="Invite link" value={created.url} />
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
    <Card title="Accounts">
      {accounts.isError ? (
        <p className="p-4 text-sm text-red-700 dark:text-red-300">The accounts could not be loaded.</p>
      ) : (
        <Table>
          <THead>
            <Th>Username</Th>
            <Th>Role</Th>
            <Th>Status</Th>
            <Th>Two-factor</Th>
            <Th>Signs in with</Th>
            <Th>Last sign-in</Th>
            <Th>
              <span className="sr-only">Actions</span>
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
      label: 'Choose nodes…',
      isHidden: !isScopable,
      onSelect: () => setChoosingNodes(true),
    },
    {
      label: account.enabled ? 'Disable' : 'Enable',
      isDanger: account.enabled,
      onSelect: run(async () => {
        if (account.enabled && !(await ask(`Disable ${name}?`, 'Its sessions end now; it cannot sign in.', 'Disable')))
          return;
        await change({ enabled: !account.enabled }, `${name} is ${account.enabled ? 'disabled' : 'enabled'}`);
      }),
    },
    {
      label: account.passwordSignIn ? 'Turn password sign-in off' : 'Turn password sign-in on',
      // Off only for an account that can sign in otherwise (the server says so too).
      isHidden: account.passwordSignIn && !account.identity,
      onSelect: run(() =>
        change(
          { passwordSignIn: !account.passwordSignIn },
          `${name} ${account.passwordSignIn ? 'signs in only through its identity provider' : 'may sign in with its password'}`,
        ),
      ),
    },
    {
      label: 'Reset two-factor sign-in',
      isHidden: !account.twoFactor,
      isDanger: true,
      onSelect: run(async () => {
        if (
          await ask(
            `Reset two-factor sign-in of ${name}?`,
            'For a lost authenticator: its second factor and recovery codes are removed and its sessions end. It signs in with its password alone until it sets up a new one. The audit log names you.',
            'Reset',
          )
        )
          await resetTwoFactor.mutateAsync(account.id);
      }),
    },
    {
      label: 'Delete',
      isDanger: true,
      onSelect: run(async () => {
        if (
          await ask(`Delete ${name}?`, 'The account and its sessions are gone; the audit log keeps its name.', 'Delete')
        )
          await remove.mutateAsync(account.id);
      }),
    },
  ];

  return (
    <Tr>
      <Td className="font-medium">
        {name}
        {isSelf && <span className="ml-2 text-xs text-gray-500 dark:text-gray-400">(you)</span>}
      </Td>
      <Td>
        {isSelf ? (
          roleLabels[account.role]
        ) : (
          <select
            aria-label={`Role of ${name}`}
            value={account.role}
            disabled={update.isPending}
            onChange={(event) => {
              const role = event.target.value as Role;
              void change({ role }, `${name} is now ${roleLabels[role]}`).catch(() => undefined);
            }}
            className="rounded-md border border-gray-300 bg-white px-2 py-1 text-sm dark:border-gray-700 dark:bg-gray-900"
          >
            {roleOptions.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        )}
        {isScopable && (
          <span className="ml-2 text-xs text-gray-500 dark:text-gray-400" title="Nodes this account may see">
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
                nodes === null ? `${name} sees every node` : `${name} sees ${scopeText({ nodes }).toLowerCase()}`,
              )
                .then(() => setChoosingNodes(false))
                .catch(() => undefined)
            }
          />
        )}
      </Td>
      <Td>
        <Badge tone={account.enabled ? 'green' : 'red'}>{account.enabled ? 'Enabled' : 'Disabled'}</Badge>
      </Td>
      <Td>
        <Badge tone={account.twoFactor ? 'green' : 'gray'}>{account.twoFactor ? 'On' : 'Off'}</Badge>
      </Td>
      <Td>{signInWays(account)}</Td>
      <Td>{dateTime(account.lastSignInAt)}</Td>
      <Td className="text-right">{!isSelf && <ActionMenu items={items} label={`Actions for ${name}`} />}</Td>
    </Tr>
  );
}

function InvitesCard() {
  const invites = useQuery(invitesQueryOptions());
  const revoke = useRevokeInvite();
  const rows = invites.data?.data ?? [];
  return (
    <Card title="Pending invites">
      {rows.length === 0 ? (
        <p className="p-4 text-sm text-gray-600 dark:text-gray-300">No invite is waiting to be taken.</p>
      ) : (
        <Table>
          <THead>
            <Th>Username</Th>
            <Th>Role</Th>
            <Th>State</Th>
            <Th>Expires</Th>
            <Th>Invited by</Th>
            <Th>
              <span className="sr-only">Actions</span>
            </Th>
          </THead>
          <TBody>
            {rows.map((invite) => (
              <Tr key={invite.id}>
                <Td className="font-medium">{invite.username}</Td>
                <Td>{roleLabels[invite.role]}</Td>
                <Td>
                  <Badge tone={invite.state === 'pending' ? 'blue' : 'gray'}>
                    {invite.state === 'pending' ? 'Pending' : 'Expired'}
                  </Badge>
                </Td>
                <Td>{dateTime(invite.expiresAt)}</Td>
                <Td>{invite.createdBy ?? '—'}</Td>
                <Td className="text-right">
                  <Button
                    variant="secondary"
                    aria-label={`Revoke the invite of ${invite.username}`}
                    onClick={() => void revoke.mutateAsync(invite.id).catch(() => undefined)}
                  >
                    Revoke
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
      title="Invite someone"
      onClose={onClose}
      onSubmit={(event) => void submit(event)}
      isSubmitting={form.isSubmitting}
      saveText="Make the invite link"
    >
      <TextField
        label="Username"
        description="An email address or a plain name; the invitee signs in with it."
        autoComplete="off"
        required
        {...form.field('username')}
      />
      <SelectField label="Role" {...role} options={roleOptions} description={roleDescriptions[role.value as Role]} />
    </FormDialog>
  );
}
