import { z } from 'zod';
import { GroupRoleSchema } from './accounts.js';
import { limits } from './constants.js';
import {
  domainName,
  flag,
  idValue,
  integerIn,
  ipList,
  oneOf,
  optionalNullable,
  pathLocation,
  requiredText,
} from './fields.js';
import { maxMessage, messages, minLengthMessage, ruleMessages } from './messages.js';
import { cidrBounds } from './ipv4.js';
import { normalizePathLocation } from './validators.js';

// Who may reach a published service (docs/ACCESS.md): identity providers, access policies of domains and
// HTTP services, share links and visitor sessions. Beyond the console spec; docs/api.md "Access" records the calls.

/** Where the sign-in exchange lives on every protected host (nginx proxies it to the control plane). */
export const ACCESS_PATH = '/_postern/access';
/** Visitor cookies are named `__Host-postern-<policyId>`. */
export const ACCESS_COOKIE_PREFIX = '__Host-postern-';
/** The headers a backend learns the visitor from; nginx strips client-sent ones on every service. */
export const IDENTITY_HEADERS = {
  user: 'X-Postern-User',
  email: 'X-Postern-Email',
  groups: 'X-Postern-Groups',
} as const;

export const accessLimits = {
  sessionSecondsMin: 300,
  sessionSecondsMax: 30 * 24 * 3600,
  sessionSecondsDefault: 24 * 3600,
  /** A PIN is a password of digits: at least 6 of them. */
  passwordMin: 6,
  passwordMax: 128,
  allowListMax: 200,
  bypassMax: 50,
  groupMax: 128,
} as const;

export const ACCESS_MODES = ['public', 'protected'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];
export const SERVICE_ACCESS_MODES = ['inherit', 'public', 'protected'] as const;
export type ServiceAccessMode = (typeof SERVICE_ACCESS_MODES)[number];

export const accessMessages = {
  noWayIn: 'A protected service needs a way in: single sign-on (providerId), a password or share links',
  noAllowList: 'Name who may sign in: at least one email, email domain or group',
  needsDomain:
    "Access policies need a domain: services without one share the console host's origin with every other tenant",
  providerNotFound: 'This identity provider does not exist',
  providerInUse: (name: string, uses: number) =>
    `The identity provider ${name} is used by ${uses} access ${uses === 1 ? 'policy' : 'policies'}; change them first`,
  inheritHasNoFields: "This field must be empty when the service inherits its domain's policy (mode inherit)",
  setByOperator:
    "The gateway's operator set this service's access policy: ask them to change it (a node's token may not)",
  shareLinksOff: "This service's access policy does not allow share links",
  group: 'This field must hold group names of printable characters without commas',
  issuer: 'This field must be an https URL (the issuer of an OpenID Connect provider)',
  claim: "This field must be a claim name (letters, digits and '_', '.', ':', '/', '-')",
  scope: 'This field must hold scope names (printable characters without spaces or quotes)',
} as const;

// ---- Field builders ------------------------------------------------------------------------------------

/** A list of at most `max` entries, de-duplicated. */
const list = <T extends z.ZodType>(item: T, max: number) =>
  z
    .array(item, { error: () => messages.array })
    .max(max, maxMessage(max))
    .transform((values) => [...new Set(values)]);

const email = () =>
  z
    .string({ error: () => messages.email })
    .trim()
    .toLowerCase()
    .pipe(z.email({ error: () => messages.email }));

const group = () =>
  z
    .string({ error: () => accessMessages.group })
    .trim()
    .min(1, messages.empty)
    .max(accessLimits.groupMax)
    .regex(/^[\x20-\x2b\x2d-\x7e]+$/, accessMessages.group);

const secretText = (min: number, max: number) =>
  z
    .string({ error: (iss) => (iss.input == null ? messages.required : ruleMessages.string) })
    .min(min, minLengthMessage(min))
    .max(max, maxMessage(max));

/** A policy's fields as requests take them (the configuration document checks its policies with them too). */
export const accessPolicyFields = {
  providerId: optionalNullable(idValue()),
  allowEmails: list(email(), accessLimits.allowListMax).optional(),
  allowEmailDomains: list(domainName(), accessLimits.allowListMax).optional(),
  allowGroups: list(group(), accessLimits.allowListMax).optional(),
  /** Absent: keep; null: remove; text: the new password or PIN (stored as an argon2id hash). */
  password: secretText(accessLimits.passwordMin, accessLimits.passwordMax).nullable().optional(),
  shareLinks: flag().optional(),
  bypassPaths: list(pathLocation().transform(normalizePathLocation), accessLimits.bypassMax).optional(),
  bypassNetworks: ipList().optional(),
  sessionSeconds: integerIn(accessLimits.sessionSecondsMin, accessLimits.sessionSecondsMax).optional(),
};

// ---- Requests ----------------------------------------------------------------------------------------------

/** PATCH of a domain's policy: absent fields keep their value. */
export const DomainAccessUpdateSchema = z.object({ mode: oneOf(ACCESS_MODES).optional(), ...accessPolicyFields });
export type DomainAccessUpdate = z.infer<typeof DomainAccessUpdateSchema>;

/** PATCH of a service's own policy; `inherit` drops it (the domain's applies). */
export const ServiceAccessUpdateSchema = z.object({
  mode: oneOf(SERVICE_ACCESS_MODES).optional(),
  ...accessPolicyFields,
});
export type ServiceAccessUpdate = z.infer<typeof ServiceAccessUpdateSchema>;

const issuerUrl = () =>
  z
    .string({ error: (iss) => (iss.input == null ? messages.required : accessMessages.issuer) })
    .trim()
    .max(2048)
    .refine((value) => {
      try {
        const url = new URL(value);
        return url.protocol === 'https:' && url.username === '' && url.password === '' && url.hash === '';
      } catch {
        return false;
      }
    }, accessMessages.issuer)
    .transform((value) => value.replace(/\/+$/, ''));

const providerFields = {
  name: requiredText(limits.nameMax),
  issuer: issuerUrl(),
  clientId: requiredText(255).refine((value) => /^[\x21-\x7e]+$/.test(value), ruleMessages.string),
  /** Absent: keep (an edit) or none (a public client); null: remove. Never returned. */
  clientSecret: secretText(1, 1024).nullable().optional(),
  scopes: list(
    z.string({ error: () => accessMessages.scope }).regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/, accessMessages.scope),
    20,
  ).optional(),
  groupsClaim: z
    .string({ error: () => accessMessages.claim })
    .trim()
    .regex(/^[A-Za-z0-9_.:/-]{1,128}$/, accessMessages.claim)
    .optional(),
};

export const IdentityProviderCreateSchema = z.object(providerFields);
export type IdentityProviderCreate = z.infer<typeof IdentityProviderCreateSchema>;

export const IdentityProviderUpdateSchema = z.object({
  ...providerFields,
  name: providerFields.name.optional(),
  issuer: providerFields.issuer.optional(),
  clientId: providerFields.clientId.optional(),
});
export type IdentityProviderUpdate = z.infer<typeof IdentityProviderUpdateSchema>;

/** "Test connection": discovery of an issuer, before or after it is saved. */
export const IdentityProviderDiscoverSchema = z.object({ issuer: issuerUrl() });
export type IdentityProviderDiscover = z.infer<typeof IdentityProviderDiscoverSchema>;

export const ShareLinkCreateSchema = z
  .object({
    name: requiredText(limits.nameMax),
    /** The link lets in below this path only (within the service's path); absent or null: the whole service. */
    pathPrefix: optionalNullable(pathLocation().transform(normalizePathLocation)),
    expiresAt: optionalNullable(z.iso.datetime({ offset: true, error: () => ruleMessages.date })),
    ttl: integerIn(60, limits.serviceTtlMaxSeconds).optional(),
  })
  .superRefine((value, ctx) => {
    if (value.ttl !== undefined && value.expiresAt != null)
      ctx.addIssue({ code: 'custom', path: ['ttl'], message: ruleMessages.expiryTwice });
  });
export type ShareLinkCreate = z.infer<typeof ShareLinkCreateSchema>;

export const ServiceAccessParamsSchema = z.object({ nodeId: idValue(), id: idValue() });
export const ShareLinkParamsSchema = ServiceAccessParamsSchema.extend({ linkId: idValue() });
export const VisitorSessionParamsSchema = ServiceAccessParamsSchema.extend({ sessionId: idValue() });
export const AgentHttpServiceParamsSchema = z.object({ id: idValue() });
export const AgentShareLinkParamsSchema = AgentHttpServiceParamsSchema.extend({ linkId: idValue() });

// ---- Answers -----------------------------------------------------------------------------------------------

export const IdentityProviderSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  issuer: z.string(),
  clientId: z.string(),
  /** Whether a client secret is stored (it is never returned). */
  hasClientSecret: z.boolean(),
  scopes: z.array(z.string()),
  groupsClaim: z.string(),
  /** Policies using it. */
  policies: z.number().int(),
  /**
   * Whether it signs accounts in to the console (docs/api.md "Accounts and roles"), the roles its groups get on a first
   * sign-in, and the accounts bound to it. Optional so a client reads the answers of a gateway from before accounts.
   */
  consoleSignIn: z.boolean().optional(),
  groupRoles: z.array(GroupRoleSchema).optional(),
  accounts: z.number().int().optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type IdentityProvider = z.infer<typeof IdentityProviderSchema>;

/** What discovery found at an issuer ("test connection"). */
export const IdentityProviderDiscoverySchema = z.object({
  issuer: z.string(),
  authorizationEndpoint: z.string(),
  tokenEndpoint: z.string(),
  userinfoEndpoint: z.string().nullable(),
  scopesSupported: z.array(z.string()),
  claimsSupported: z.array(z.string()),
  /** Whether the provider says it takes PKCE with S256 (every sign-in uses it). */
  supportsPkce: z.boolean(),
});
export type IdentityProviderDiscovery = z.infer<typeof IdentityProviderDiscoverySchema>;

export const AccessPolicySchema = z.object({
  mode: z.enum(ACCESS_MODES),
  providerId: z.number().int().nullable(),
  providerName: z.string().nullable(),
  allowEmails: z.array(z.string()),
  allowEmailDomains: z.array(z.string()),
  allowGroups: z.array(z.string()),
  passwordSet: z.boolean(),
  shareLinks: z.boolean(),
  bypassPaths: z.array(z.string()),
  bypassNetworks: z.array(z.string()),
  sessionSeconds: z.number().int(),
});
export type AccessPolicy = z.infer<typeof AccessPolicySchema>;

export const DomainAccessSchema = z.object({
  domainId: z.number().int(),
  domain: z.string(),
  policy: AccessPolicySchema,
});
export type DomainAccess = z.infer<typeof DomainAccessSchema>;

export const ServiceAccessSchema = z.object({
  serviceId: z.number().int(),
  nodeId: z.number().int(),
  domain: z.string().nullable(),
  /** `inherit`: no policy of its own. */
  mode: z.enum(SERVICE_ACCESS_MODES),
  own: AccessPolicySchema.nullable(),
  /** Who set `own`: a node's token may not change the operator's. */
  setBy: z.enum(['admin', 'node']).nullable(),
  /** The domain's policy (public when it has none); null: the service has no domain. */
  domainPolicy: AccessPolicySchema.nullable(),
  /** What nginx applies: the service's own, its domain's (also when a token's own is weaker than it), or none. */
  effective: AccessPolicySchema.extend({ source: z.enum(['service', 'domain', 'none']) }),
});
export type ServiceAccess = z.infer<typeof ServiceAccessSchema>;

export const ShareLinkSchema = z.object({
  id: z.number().int(),
  serviceId: z.number().int(),
  name: z.string(),
  pathPrefix: z.string().nullable(),
  expiresAt: z.string().nullable(),
  revoked: z.boolean(),
  lastUsedAt: z.string().nullable(),
  uses: z.number().int(),
  created_at: z.string(),
});
export type ShareLink = z.infer<typeof ShareLinkSchema>;

/** The creation answer: the only time the URL (with its token) is shown. */
export const ShareLinkCreatedSchema = ShareLinkSchema.extend({ url: z.string() });
export type ShareLinkCreated = z.infer<typeof ShareLinkCreatedSchema>;

export const VisitorSessionSchema = z.object({
  id: z.number().int(),
  /** The service the visitor signed in through (null once it was deleted). */
  serviceId: z.number().int().nullable(),
  method: z.enum(['sso', 'password', 'share']),
  user: z.string().nullable(),
  email: z.string().nullable(),
  groups: z.array(z.string()),
  address: z.string().nullable(),
  shareLinkId: z.number().int().nullable(),
  created_at: z.string(),
  expiresAt: z.string(),
  revoked: z.boolean(),
});
export type VisitorSession = z.infer<typeof VisitorSessionSchema>;

// ---- Rules shared by server and console ---------------------------------------------------------------------

/** What the "only stricter" rule compares (a policy as stored, the password as a flag). */
export interface PolicyRule {
  mode: AccessMode;
  providerId: number | null;
  allowEmails: readonly string[];
  allowEmailDomains: readonly string[];
  allowGroups: readonly string[];
  hasPassword: boolean;
  shareLinks: boolean;
  bypassPaths: readonly string[];
  bypassNetworks: readonly string[];
  sessionSeconds: number;
}

export interface RuleViolation {
  field: string;
  message: string;
}

const isUnderPath = (path: string, prefix: string): boolean =>
  prefix === '/' || path === prefix || path.startsWith(`${prefix}/`);

/** Both are IPv4 addresses or CIDRs (ipList checked them); a bare address is a /32. */
function isInsideNetwork(inner: string, outer: string): boolean {
  const [innerStart, innerEnd] = cidrBounds(inner);
  const [outerStart, outerEnd] = cidrBounds(outer);
  return innerStart >= outerStart && innerEnd <= outerEnd;
}

const emailDomain = (address: string): string => address.slice(address.lastIndexOf('@') + 1);

/**
 * Whether `child` lets in no one `floor` would not (docs/ACCESS.md "Only stricter"): the rule a node's token is held
 * to on its own services. Returns what breaks it, per request field; empty when it holds. Conservative where the
 * answer depends on the visitor (a floor group never vouches for a child's email).
 */
export function strictnessViolations(child: PolicyRule, floor: PolicyRule | null): RuleViolation[] {
  if (floor === null || floor.mode === 'public') return [];
  const out: RuleViolation[] = [];
  const add = (field: string, message: string): void => {
    if (!out.some((v) => v.field === field)) out.push({ field, message });
  };
  if (child.mode !== 'protected') {
    add('mode', "The domain's access policy protects this service: a node's token may only make it stricter");
    return out;
  }
  if (child.providerId !== null) {
    if (child.providerId !== floor.providerId)
      add('providerId', "Single sign-on must use the domain policy's identity provider");
    const admitted = (address: string): boolean =>
      floor.allowEmails.includes(address) || floor.allowEmailDomains.includes(emailDomain(address));
    const email = child.allowEmails.find((address) => !admitted(address));
    if (email) add('allowEmails', `${email} is not let in by the domain's access policy`);
    const domain = child.allowEmailDomains.find((d) => !floor.allowEmailDomains.includes(d));
    if (domain) add('allowEmailDomains', `${domain} is not let in by the domain's access policy`);
    const group = child.allowGroups.find((g) => !floor.allowGroups.includes(g));
    if (group) add('allowGroups', `${group} is not let in by the domain's access policy`);
  }
  if (child.hasPassword)
    add('password', "A password of your own would let in people the domain's access policy does not");
  if (child.shareLinks && !floor.shareLinks) add('shareLinks', "The domain's access policy does not allow share links");
  const path = child.bypassPaths.find((p) => !floor.bypassPaths.some((q) => isUnderPath(p, q)));
  if (path) add('bypassPaths', `${path} is checked by the domain's access policy`);
  const network = child.bypassNetworks.find((n) => !floor.bypassNetworks.some((m) => isInsideNetwork(n, m)));
  if (network) add('bypassNetworks', `${network} is checked by the domain's access policy`);
  if (child.sessionSeconds > floor.sessionSeconds)
    add('sessionSeconds', `This field must be less than or equal to ${floor.sessionSeconds} (the domain's policy)`);
  return out;
}

export const isAtLeastAsStrict = (child: PolicyRule, floor: PolicyRule | null): boolean =>
  strictnessViolations(child, floor).length === 0;

/**
 * A return address after sign-in: a path on the same host, nothing else (no open redirect). One leading `/`, not
 * `//`, no `\`, nothing outside printable ASCII. The server builds the target as `https://<host>` + this path.
 */
export function isSafeReturnPath(value: string): boolean {
  return (
    value.length <= 4096 && value.startsWith('/') && !value.startsWith('//') && /^\/[\x21-\x5b\x5d-\x7e]*$/.test(value)
  );
}
