// Who may do what through a console session (docs/api.md "Accounts and roles"): four roles and ONE table of what each
// may do. Every session route names the permission it needs (routes.ts); the server's gate refuses a route whose
// permission the caller's role lacks (apps/server/src/http/authorize.ts), and the console asks the same table (`can`)
// to hide what a role may not do. Deny unless the table lists it. Imports nothing, so the console's first page can read
// it.

/** From the most to the least privileged. */
export const ROLES = ['owner', 'admin', 'operator', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * - `self`: one's own account (sign out, password, two-factor sign-in, linking one's own identity)
 * - `read`: what the gateway holds and does, without secrets (lists, details, live logs, the audit log, figures)
 * - `read-secrets`: what lets someone act as a node (a node's WireGuard config, its access tokens)
 * - `operate`: nodes, domains, services, access tokens, visitor access and share links
 * - `settings`: the gateway's settings (identity providers)
 * - `accounts`: accounts, invites, and who may sign in to the console through an identity provider
 */
export const PERMISSIONS = ['self', 'read', 'read-secrets', 'operate', 'settings', 'accounts'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The policy: what each role may do. Nothing else is allowed. */
export const rolePermissions: Readonly<Record<Role, readonly Permission[]>> = {
  owner: ['self', 'read', 'read-secrets', 'operate', 'settings', 'accounts'],
  admin: ['self', 'read', 'read-secrets', 'operate', 'settings'],
  operator: ['self', 'read', 'read-secrets', 'operate'],
  viewer: ['self', 'read'],
};

const isRole = (value: unknown): value is Role => (ROLES as readonly unknown[]).includes(value);

/** Whether `role` holds `permission`; false for anything that is not a role (deny by default). */
export function can(role: unknown, permission: Permission): boolean {
  return isRole(role) && rolePermissions[role].includes(permission);
}

export const roleLabels: Readonly<Record<Role, string>> = {
  owner: 'Owner',
  admin: 'Admin',
  operator: 'Operator',
  viewer: 'Viewer',
};

/** One line per role, as the Accounts page and the invite dialog explain them. */
export const roleDescriptions: Readonly<Record<Role, string>> = {
  owner: 'Everything, including accounts and who may sign in',
  admin: 'Everything but accounts',
  operator: 'Nodes, domains, services and access tokens; no settings',
  viewer: 'Reads everything, logs included; no secrets, no changes',
};

/** Roles an identity provider's group may give on a first sign-in: owners are made by owners, by hand. */
export const GROUP_ROLES = ['admin', 'operator', 'viewer'] as const satisfies readonly Role[];
export type GroupRoleName = (typeof GROUP_ROLES)[number];

/** What is refused, per permission: the second half of a 403's message. */
const refusedWhat: Readonly<Record<Permission, string>> = {
  self: 'use this account',
  read: 'read the gateway',
  'read-secrets': "read secrets (a node's configuration or access tokens)",
  operate: 'change nodes, domains, services or access tokens',
  settings: "change the gateway's settings",
  accounts: 'manage accounts or how people sign in to the console',
};

const FORBIDDEN_PREFIX = 'Your role (';

/** The message of a 403 from the policy: who is refused what, and who may do it. */
export function forbiddenMessage(role: Role, permission: Permission): string {
  const allowed = ROLES.filter((r) => rolePermissions[r].includes(permission)).map((r) => roleLabels[r]);
  return `${FORBIDDEN_PREFIX}${roleLabels[role]}) may not ${refusedWhat[permission]}: ${allowed.join(', ')} only`;
}

/** Roles a list of nodes may limit (the account's `nodes`); owners and admins always see every node. */
export const SCOPED_ROLES = ['operator', 'viewer'] as const satisfies readonly Role[];

/** The 403 of a route an account limited to some nodes may not use (it would show or change other nodes' things). */
export function nodeScopeMessage(role: Role): string {
  return `${FORBIDDEN_PREFIX}${roleLabels[role]}) is limited to some nodes: this is for accounts that see every node`;
}

/**
 * Whether a 403's message is the policy's (`forbiddenMessage`): the account is signed in and stays so; the console
 * shows the message instead of ending the session (its rule for other 403s).
 */
export function isRoleRefusal(message: string | null | undefined): boolean {
  return typeof message === 'string' && message.startsWith(FORBIDDEN_PREFIX);
}

/** The highest of several roles (the first in ROLES). */
export function highestRole<R extends Role>(roles: readonly R[]): R | null {
  return (ROLES.find((role) => (roles as readonly Role[]).includes(role)) as R | undefined) ?? null;
}
