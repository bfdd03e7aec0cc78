import { z } from 'zod';
import { limits } from './constants.js';
import { LoginResponseSchema, SecondFactorChallengeSchema } from './entities.js';
import { flag, idValue, integerIn, oneOf } from './fields.js';
import { maxMessage, messages, minLengthMessage, ruleMessages } from './messages.js';
import { GROUP_ROLES, PERMISSIONS, ROLES } from './roles.js';

// Several operators (docs/api.md "Accounts and roles"): accounts with a role, invites, and signing in to the console
// through an identity provider (the OpenID Connect providers of visitor access, docs/ACCESS.md).

export const accountLimits = {
  /** An invite link lives at least 10 minutes and at most 30 days; 7 days unless the owner says otherwise. */
  inviteTtlMinSeconds: 600,
  inviteTtlMaxSeconds: 30 * 24 * 3600,
  inviteTtlDefaultSeconds: 7 * 24 * 3600,
  groupRolesMax: 20,
  /** How many nodes one account's scope may list. */
  nodeScopeMax: 500,
} as const;

export const accountMessages = {
  username: "This field may hold only letters, digits and '.', '_', '-', '@', '+'",
  usernameTaken: (username: string) => `An account or a pending invite named ${username} already exists`,
  lastOwner: 'This is the last owner: make another account an owner first',
  ownAccount: 'Not your own account: ask another owner (your own settings are under Settings)',
  passwordSignInNeedsIdentity:
    'This account has no identity of a provider bound to it: it could not sign in at all without its password',
  unlinkWouldLockOut:
    'This account signs in only through its identity provider: turn password sign-in on first (or delete the account)',
  twoFactorNotOn: 'Two-factor sign-in is not on for this account',
  inviteInvalid: 'This invite link is not valid: it was used, revoked or never existed. Ask an owner for a new one',
  inviteExpired: 'This invite link has expired. Ask an owner for a new one',
  consoleProvider:
    'This provider signs accounts in to the console: only an owner may change or delete it (Settings, as an owner)',
  providerNotForConsole: 'This identity provider does not sign anyone in to the console',
  unknownNodes: (ids: readonly number[]) => `No node has the id ${ids.join(', ')}`,
} as const;

/**
 * Usernames of new accounts: an email or a plain name, lower-cased so that `Alice` and `alice` are never two people
 * in the audit log. (The first admin keeps POSTERN_ADMIN_USERNAME as configured.)
 */
export const usernameField = () =>
  z
    .string({ error: (iss) => (iss.input == null ? messages.required : ruleMessages.string) })
    .trim()
    .min(1, messages.empty)
    .max(limits.usernameMax, maxMessage(limits.usernameMax))
    .regex(/^[A-Za-z0-9._@+-]+$/, accountMessages.username)
    .toLowerCase();

export const newPasswordField = () =>
  z
    .string({ error: (iss) => (iss.input == null ? messages.required : ruleMessages.string) })
    .min(limits.passwordMin, minLengthMessage(limits.passwordMin))
    .max(limits.passwordMax);

const RoleSchema = z.enum(ROLES);

/** The identity of a provider an account signs in with (bound by linking it, or by a first sign-in). */
export const AccountIdentitySchema = z.object({
  providerId: z.number().int().nullable(),
  providerName: z.string().nullable(),
  /** What the provider said at the last sign-in (never used to match: the provider's subject is). */
  email: z.string().nullable(),
});
export type AccountIdentity = z.infer<typeof AccountIdentitySchema>;

export const AccountSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  role: RoleSchema,
  enabled: z.boolean(),
  /** Whether the account may sign in with its password (off: only through its bound identity). */
  passwordSignIn: z.boolean(),
  twoFactor: z.boolean(),
  identity: AccountIdentitySchema.nullable(),
  lastSignInAt: z.string().nullable(),
  /**
   * The nodes (ids) the account may see when it is an operator or a viewer (docs/api.md "Node scope"); null: every
   * node. Owners and admins see every node whatever it holds.
   */
  nodes: z.array(z.number().int()).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Account = z.infer<typeof AccountSchema>;

/** Who is signed in: the account, how this session signed in, and what its role may do. */
export const CurrentAccountSchema = AccountSchema.pick({
  id: true,
  username: true,
  role: true,
  passwordSignIn: true,
  twoFactor: true,
  identity: true,
}).extend({
  /** How this session signed in, e.g. 'password + authentication code', 'single sign-on (Corp IdP)'. */
  via: z.string(),
  permissions: z.array(z.enum(PERMISSIONS)),
  /**
   * The nodes (ids) this account is limited to, as they count (docs/api.md "Node scope"): null for every node, and
   * always for owners and admins. The console hides what a limited account cannot use.
   */
  nodes: z.array(z.number().int()).nullable(),
});
export type CurrentAccount = z.infer<typeof CurrentAccountSchema>;

/** PATCH /api/accounts/{id}: absent fields keep their value. */
export const AccountUpdateSchema = z.object({
  role: oneOf(ROLES).optional(),
  enabled: flag().optional(),
  passwordSignIn: flag().optional(),
  /** The nodes an operator or viewer may see; null or [] for every node. */
  nodes: z
    .array(idValue())
    .max(accountLimits.nodeScopeMax, maxMessage(accountLimits.nodeScopeMax))
    .nullable()
    .optional(),
});
export type AccountUpdate = z.infer<typeof AccountUpdateSchema>;

export const INVITE_STATES = ['pending', 'expired'] as const;

export const InviteSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  role: RoleSchema,
  /** The owner who made it (null once that account is deleted). */
  createdBy: z.string().nullable(),
  expiresAt: z.string(),
  state: z.enum(INVITE_STATES),
  created_at: z.string(),
});
export type Invite = z.infer<typeof InviteSchema>;

export const InviteCreateSchema = z.object({
  username: usernameField(),
  role: oneOf(ROLES),
  /** Seconds the link lives (default 7 days). */
  ttl: integerIn(accountLimits.inviteTtlMinSeconds, accountLimits.inviteTtlMaxSeconds).optional(),
});
export type InviteCreate = z.infer<typeof InviteCreateSchema>;

/** The answer to an invite: the only time its link is shown (the token is stored as a SHA-256 hash). */
export const InviteCreatedSchema = InviteSchema.extend({ url: z.string() });
export type InviteCreated = z.infer<typeof InviteCreatedSchema>;

const inviteToken = () =>
  z
    .string({ error: () => messages.required })
    .min(1, messages.empty)
    .max(128);

export const InviteTokenSchema = z.object({ token: inviteToken() });
export type InviteToken = z.infer<typeof InviteTokenSchema>;

/** What the invite page shows before the invitee sets a password. */
export const InviteInfoSchema = z.object({ username: z.string(), role: RoleSchema, expiresAt: z.string() });
export type InviteInfo = z.infer<typeof InviteInfoSchema>;

export const InviteAcceptSchema = z.object({ token: inviteToken(), password: newPasswordField() });
export type InviteAccept = z.infer<typeof InviteAcceptSchema>;

/** The account exists; the invitee signs in with it (POST /api/auth/login). */
export const InviteAcceptedSchema = z.object({ username: z.string(), role: RoleSchema });
export type InviteAccepted = z.infer<typeof InviteAcceptedSchema>;

// ---- Signing in to the console through an identity provider -------------------------------------------------

/** A provider the login page offers (public: names only). */
export const ConsoleProviderSchema = z.object({ id: z.number().int(), name: z.string() });
export type ConsoleProvider = z.infer<typeof ConsoleProviderSchema>;

export const SsoStartSchema = z.object({ providerId: idValue() });
export type SsoStart = z.infer<typeof SsoStartSchema>;

/** Where the browser goes next (the provider's authorization URL); the state rides in an HttpOnly cookie. */
export const SsoStartedSchema = z.object({ url: z.string() });
export type SsoStarted = z.infer<typeof SsoStartedSchema>;

/** Linking one's own account to a provider identity asks for the password again (a stolen session cannot). */
export const IdentityLinkSchema = z.object({
  providerId: idValue(),
  password: z
    .string({ error: (iss) => (iss.input == null ? messages.required : ruleMessages.string) })
    .min(1, messages.empty)
    .max(limits.passwordMax),
});
export type IdentityLink = z.infer<typeof IdentityLinkSchema>;

/** The provider's redirect back to `<console>/login/callback`: its query string, as the browser got it. */
export const SsoFinishSchema = z.object({ query: z.string().max(8192) });
export type SsoFinish = z.infer<typeof SsoFinishSchema>;

export const IdentityLinkedSchema = z.object({ linked: z.literal(true), provider: z.string() });
export type IdentityLinked = z.infer<typeof IdentityLinkedSchema>;

/** Signed in (as login answers), a second factor to give first, or (a link) the identity bound. */
export const SsoFinishedSchema = z.union([LoginResponseSchema, SecondFactorChallengeSchema, IdentityLinkedSchema]);
export type SsoFinished = z.infer<typeof SsoFinishedSchema>;

/** A group of the provider's group claim and the role its members get on their first sign-in. */
export const GroupRoleSchema = z.object({
  group: z
    .string({ error: () => messages.required })
    .trim()
    .min(1, messages.empty)
    .max(256)
    .regex(/^[\x20-\x7e]+$/, ruleMessages.string),
  role: oneOf(GROUP_ROLES),
});
export type GroupRole = z.infer<typeof GroupRoleSchema>;

/** PATCH /api/access/providers/{id}/console (owners): absent fields keep their value. */
export const ProviderConsoleUpdateSchema = z.object({
  consoleSignIn: flag().optional(),
  groupRoles: z
    .array(GroupRoleSchema, { error: () => messages.array })
    .max(accountLimits.groupRolesMax, maxMessage(accountLimits.groupRolesMax))
    .optional(),
});
export type ProviderConsoleUpdate = z.infer<typeof ProviderConsoleUpdateSchema>;
