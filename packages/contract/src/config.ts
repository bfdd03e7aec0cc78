import { z } from 'zod';
import { accessLimits } from './access.js';
import { limits } from './constants.js';
import {
  backendHost,
  domainName,
  domainOrWildcard,
  ipList,
  ipv4Address,
  ipv4Cidr,
  pathLocation,
  port,
  requiredText,
} from './fields.js';

// Configuration as code (docs/CONFIG-AS-CODE.md): one document describes a gateway's identity providers, nodes (with
// their tokens' metadata and services) and domains (with their access policies). `GET /api/config/export` writes it,
// `POST /api/config/plan` compares one with the gateway, `POST /api/config/apply` makes the gateway match it. Objects
// are named, never numbered (ids differ between gateways): a node by its name, a domain by itself, an HTTP service by
// domain and path, a TCP/UDP service by protocol and public port, a token by its node and name, a provider by name.
// Secrets are never in it: a password, a client secret or a token's value is only said to exist.

export const CONFIG_DOCUMENT_VERSION = 1;

const isoTime = () => z.iso.datetime({ offset: true, error: () => 'This field must be a valid date' });
const strings = () => z.array(z.string()).default([]);

/**
 * An access policy (docs/ACCESS.md). Every field has the default of a new policy; a field's values are checked with
 * the rules of the access API when the document is planned. The password is write-only everywhere: `passwordSet`
 * says whether one is set (a document cannot set one).
 */
export const ConfigPolicySchema = z
  .object({
    mode: z.enum(['public', 'protected']).default('public'),
    /** The identity provider's name; null: no single sign-on. */
    provider: z.string().nullable().default(null),
    allowEmails: strings(),
    allowEmailDomains: strings(),
    allowGroups: strings(),
    passwordSet: z.boolean().default(false),
    shareLinks: z.boolean().default(false),
    bypassPaths: strings(),
    bypassNetworks: strings(),
    sessionSeconds: z.number().int().default(accessLimits.sessionSecondsDefault),
  })
  .strict();
export type ConfigPolicy = z.infer<typeof ConfigPolicySchema>;

/** A node's access token: its metadata only (the value is shown once, when it is created). */
export const ConfigTokenSchema = z
  .object({
    name: requiredText(limits.nameMax),
    expireAt: isoTime().nullable().default(null),
    revoked: z.boolean().default(false),
  })
  .strict();
export type ConfigToken = z.infer<typeof ConfigTokenSchema>;

/** Only gateway nodes and the local node choose where the gateway sends the traffic (null for a regular node). */
const serviceHost = () => backendHost().nullable().default(null);

// Fields in the order the export writes them, so a plan lists a service's differences in the same order.
export const ConfigHttpServiceSchema = z
  .object({
    name: requiredText(limits.nameMax),
    domain: domainOrWildcard().nullable().default(null),
    path: pathLocation().default('/'),
    backendProto: z.enum(['http', 'https']).default('http'),
    backendHost: serviceHost(),
    backendPort: port().default(80),
    allowedIps: ipList().default([]),
    blockedIps: ipList().default([]),
    enabled: z.boolean().default(true),
    expiresAt: isoTime().nullable().default(null),
    /** The service's own policy; null: its domain's applies. */
    access: ConfigPolicySchema.nullable().default(null),
  })
  .strict();
export type ConfigHttpService = z.infer<typeof ConfigHttpServiceSchema>;

export const ConfigTcpServiceSchema = z
  .object({
    name: requiredText(limits.nameMax),
    proto: z.enum(['tcp', 'udp']).default('tcp'),
    /** The public port (it names the service, so it is required). */
    port: port(),
    ssl: z.boolean().default(false),
    domain: domainName().nullable().default(null),
    backendHost: serviceHost(),
    backendPort: port(),
    allowedIps: ipList().default([]),
    blockedIps: ipList().default([]),
    enabled: z.boolean().default(true),
    expiresAt: isoTime().nullable().default(null),
  })
  .strict();
export type ConfigTcpService = z.infer<typeof ConfigTcpServiceSchema>;

export const ConfigNodeSchema = z
  .object({
    name: requiredText(limits.nameMax),
    /** The gateway's own node (every gateway has it): only its services are applied; it is never created or deleted. */
    local: z.boolean().default(false),
    /** Its tunnel address; null: the gateway picks one. */
    address: ipv4Address().nullable().default(null),
    allowInternet: z.boolean().default(false),
    isGateway: z.boolean().default(false),
    gatewayNetworks: z.array(ipv4Cidr()).default([]),
    allowTokenNetworks: z.boolean().default(false),
    enabled: z.boolean().default(true),
    tokens: z.array(ConfigTokenSchema).default([]),
    http: z.array(ConfigHttpServiceSchema).default([]),
    tcp: z.array(ConfigTcpServiceSchema).default([]),
  })
  .strict();
export type ConfigNode = z.infer<typeof ConfigNodeSchema>;

export const ConfigDomainSchema = z
  .object({
    /** A domain or a wildcard domain (docs/api.md "Certificates"). */
    domain: domainOrWildcard(),
    /**
     * `uploaded`: the operator's own certificate, which this document does not carry (upload it through the API or
     * the console): a domain that has one keeps it, a new one cannot start with it.
     */
    ssl: z.enum(['self-signed', 'certbot', 'uploaded']).default('self-signed'),
    /** The node it is assigned to, by name; null: the operator's. */
    owner: z.string().nullable().default(null),
    /** The domain's policy; null: public. */
    access: ConfigPolicySchema.nullable().default(null),
  })
  .strict();
export type ConfigDomain = z.infer<typeof ConfigDomainSchema>;

export const ConfigIdentityProviderSchema = z
  .object({
    name: requiredText(limits.nameMax),
    issuer: z.string(),
    clientId: z.string(),
    /** Whether a client secret is stored; a document cannot set one. */
    clientSecretSet: z.boolean().default(false),
    scopes: z.array(z.string()).default(['openid', 'email', 'profile']),
    groupsClaim: z.string().default('groups'),
  })
  .strict();
export type ConfigIdentityProvider = z.infer<typeof ConfigIdentityProviderSchema>;

export const ConfigDocumentSchema = z
  .object({
    version: z.literal(CONFIG_DOCUMENT_VERSION),
    identityProviders: z.array(ConfigIdentityProviderSchema).default([]),
    nodes: z.array(ConfigNodeSchema).default([]),
    domains: z.array(ConfigDomainSchema).default([]),
  })
  .strict();
export type ConfigDocument = z.infer<typeof ConfigDocumentSchema>;
/** A document as written by hand: every field with a default may be left out. */
export type ConfigDocumentInput = z.input<typeof ConfigDocumentSchema>;

export const CONFIG_OBJECT_KINDS = [
  'identityProvider',
  'node',
  'token',
  'domain',
  'httpService',
  'tcpService',
] as const;
export type ConfigObjectKind = (typeof CONFIG_OBJECT_KINDS)[number];

/** One object the plan creates, changes or deletes, with the fields that differ. */
export const ConfigChangeSchema = z.object({
  action: z.enum(['create', 'update', 'delete']),
  kind: z.enum(CONFIG_OBJECT_KINDS),
  /** How the document names it: `home`, `app.example.com`, `app.example.com/api`, `tcp/30001`, `home/ci`. */
  name: z.string(),
  /** For an update, each field that differs (`access.allowEmails`, …); empty for a create or a delete. */
  fields: z.array(z.object({ field: z.string(), before: z.unknown(), after: z.unknown() })),
});
export type ConfigChange = z.infer<typeof ConfigChangeSchema>;

/** Why (part of) a document cannot be applied: where in it, and what is wrong. */
export const ConfigProblemSchema = z.object({ path: z.string(), message: z.string() });
export type ConfigProblem = z.infer<typeof ConfigProblemSchema>;

export const ConfigPlanSchema = z.object({
  changes: z.array(ConfigChangeSchema),
  /** The plan cannot be applied while there is one. */
  errors: z.array(ConfigProblemSchema),
  /** What the apply leaves as it is and why (a secret a document cannot set, services a node's labels made). */
  notes: z.array(z.string()),
});
export type ConfigPlan = z.infer<typeof ConfigPlanSchema>;

export const ConfigPlanRequestSchema = z
  .object({
    document: ConfigDocumentSchema,
    /** Also delete what the document does not name (never the local node, nor services a node's labels made). */
    prune: z.boolean().default(false),
  })
  .strict();
export type ConfigPlanRequest = z.input<typeof ConfigPlanRequestSchema>;

/** A token the apply created: its value, shown this once. */
export const ConfigCreatedTokenSchema = z.object({ node: z.string(), name: z.string(), token: z.string() });

export const ConfigApplyResultSchema = z.object({
  plan: ConfigPlanSchema,
  /** How many of the plan's changes were carried out (all of them, unless the answer is an error). */
  applied: z.number().int(),
  tokens: z.array(ConfigCreatedTokenSchema),
});
export type ConfigApplyResult = z.infer<typeof ConfigApplyResultSchema>;
