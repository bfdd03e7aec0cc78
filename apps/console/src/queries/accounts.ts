import { operations, type AccountUpdate, type InviteCreate } from '@postern/contract';
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { call } from '../lib/api';
import { showToast } from '../lib/toast-store';
import { currentAccountKey } from './account';

// The owners' Accounts page (docs/api.md "Accounts and roles"): accounts and pending invites, one page of 100 each
// (a team, not a customer base).

const LIMIT = 100;

export const accountKeys = {
  all: ['accounts'] as const,
  accounts: () => [...accountKeys.all, 'list'] as const,
  invites: () => [...accountKeys.all, 'invites'] as const,
};

export const accountsQueryOptions = () =>
  queryOptions({
    queryKey: accountKeys.accounts(),
    queryFn: ({ signal }) => call(operations.listAccounts, { query: { limit: LIMIT }, signal }),
  });

export const invitesQueryOptions = () =>
  queryOptions({
    queryKey: accountKeys.invites(),
    queryFn: ({ signal }) => call(operations.listInvites, { query: { limit: LIMIT }, signal }),
  });

function useRefresh() {
  const queryClient = useQueryClient();
  return async () => {
    await queryClient.invalidateQueries({ queryKey: accountKeys.all });
    // One's own role may be what changed (another owner of several).
    await queryClient.invalidateQueries({ queryKey: currentAccountKey });
  };
}

export function useUpdateAccount() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: AccountUpdate }) =>
      call(operations.updateAccount, { params: { id }, body }),
    onSuccess: refresh,
  });
}

export function useDeleteAccount() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (id: number) => call(operations.deleteAccount, { params: { id } }),
    onSuccess: async () => {
      showToast({ message: 'Account deleted', type: 'success' });
      await refresh();
    },
  });
}

export function useResetTwoFactor() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (id: number) => call(operations.resetAccountTwoFactor, { params: { id } }),
    onSuccess: async (account) => {
      showToast({
        message: `Two-factor sign-in of ${account.username} is off: it signs in with its password`,
        type: 'success',
      });
      await refresh();
    },
  });
}

export function useCreateInvite() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (body: InviteCreate) => call(operations.createInvite, { body }),
    onSuccess: refresh,
  });
}

export function useRevokeInvite() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (id: number) => call(operations.revokeInvite, { params: { id } }),
    onSuccess: async () => {
      showToast({ message: 'Invite revoked', type: 'success' });
      await refresh();
    },
  });
}
