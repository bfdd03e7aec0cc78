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
  /** The nodes the account is limited to (docs/api.md "Node scope"); null: every node. */
  nodes: number[] | null;
}

/**
 * Read by hand, not with the contract's schema: the shell is on every first page, which carries no schema library
 * (the initial JavaScript budget, e2e/browser/initial-js.test.ts).
 */
export function signedInAccountOf(answer: unknown): SignedInAccount {
  const value = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>;
  const { id, username, role, via, nodes } = value;
  if (typeof id !== 'number' || typeof username !== 'string' || !(ROLES as readonly unknown[]).includes(role))
    throw new Error('unexpected answer of GET /api/auth/account');
  // A gateway from before the scope existed sends no `nodes`: every node.
  const scope = Array.isArray(nodes) ? nodes.filter((node): node is number => typeof node === 'number') : null;
  return { id, username, role: role as Role, via: typeof via === 'string' ? via : '', nodes: scope };
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

/**
 * Whether the signed-in account sees every node. An account limited to some (docs/api.md "Node scope") is refused
 * what spans nodes: adding a node, changing a domain, a domain's log, the audit log, certificates, the gateway's
 * status and what needs attention; the screens neither offer nor ask for those. Yes until the account is known.
 */
export function useSeesEveryNode(): boolean {
  const { data } = useCurrentAccount();
  return data ? data.nodes === null : true;
}

/**
 * For requests rather than buttons: whether the account is known to see every node. What spans nodes is asked for
 * only then, so an account limited to some never gets a refusal (and its toast) for a page the console offered it.
 */
export function useIsKnownToSeeEveryNode(): boolean {
  const { data } = useCurrentAccount();
  return data !== undefined && data.nodes === null;
}

/** For requests too: whether the account is known to hold `permission` (a card asks for its data only then). */
export function useIsKnownToHold(permission: Permission): boolean {
  const { data } = useCurrentAccount();
  return data !== undefined && can(data.role, permission);
}

/** `useCan(permission)` for what spans every node: the role holds it and the account is limited to no nodes. */
export function useCanOnEveryNode(permission: Permission): boolean {
  const mayRole = useCan(permission);
  const seesEveryNode = useSeesEveryNode();
  return mayRole && seesEveryNode;
}
