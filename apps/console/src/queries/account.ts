import { can, ROLES, firstPageRoutes, type Permission, type Role } from '@postern/contract';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { call } from '../lib/api';

// Who is signed in (GET /api/auth/account): the shell names the account and its role, and every screen asks `useCan`
// what to offer. The table is the contract's `rolePermissions`, the one the server's policy enforces.

export const currentAccountKey = ['auth', 'account'] as const;

/** What the shell reads of the account. */
export interface SignedInAccount {
  id: number;
  username: string;
  role: Role;
  via: string;
}

/**
 * Read by hand, not with the contract's schema: the shell is on every first page, which carries no schema library
 * (the initial JavaScript budget, e2e/browser/initial-js.test.ts).
 */
export function signedInAccountOf(answer: unknown): SignedInAccount {
  const value = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>;
  const { id, username, role, via } = value;
  if (typeof id !== 'number' || typeof username !== 'string' || !(ROLES as readonly unknown[]).includes(role))
    throw new Error('unexpected answer of GET /api/auth/account');
  return { id, username, role: role as Role, via: typeof via === 'string' ? via : '' };
}

export const currentAccountQueryOptions = () =>
  queryOptions({
    queryKey: currentAccountKey,
    queryFn: async ({ signal }) => signedInAccountOf(await call(firstPageRoutes.currentAccount, { signal })),
    staleTime: 60_000,
  });

export function useCurrentAccount() {
  return useQuery(currentAccountQueryOptions());
}

/**
 * Whether the signed-in account's role may do `permission`. Until the account is known the answer is yes: hiding is
 * a courtesy (the server refuses anyway, and the console then shows its message), and the first admin's screens
 * must not flicker.
 */
export function useCan(permission: Permission): boolean {
  const { data } = useCurrentAccount();
  return data ? can(data.role, permission) : true;
}
