import { z } from 'zod';
import { defaults, limits } from './constants.js';
import { ServiceTypeSchema } from './entities.js';
import { ServiceSourceSchema } from './source.js';
import {
  backendHost,
  domainName,
  domainOrWildcard,
  flag,
  idValue,
  integerIn,
  ipList,
  ipv4Address,
  ipv4Cidr,
  oneOf,
  optionalNullable,
  pathLocation,
  port,
  requiredText,
} from './fields.js';
import {
  gatewayNetworksOverlapMessage,
  maxMessage,
  messages,
  minLengthMessage,
  oneOfMessage,
  reservedPathMessage,
  ruleMessages,
} from './messages.js';
import { certificateMessages } from './certificate-messages.js';
import { cidrsOverlap } from './ipv4.js';
import { findReservedPath, isIPv4Cidr } from './validators.js';

// Request bodies (the spec's "Validation rules" and "The calls it makes"). Create schemas describe POST; update schemas
// (PATCH) take the same fields, all optional, and apply the same rules to whatever is present.

export const LoginRequestSchema = z.object({
  username: requiredText(limits.usernameMax),
  password: z
    .string({ error: (iss) => (iss.input == null ? messages.required : ruleMessages.string) })
    .min(1, messages.empty)
    .max(limits.passwordMax),
});
export type LoginRequest = z.infer<typeof LoginRequestSchema>;

export const ChangePasswordRequestSchema = z.object({
  currentPassword: z
    .string({ error: (iss) => (iss.input == null ? messages.required : ruleMessages.string) })
    .min(1, messages.empty),
  newPassword: z
    .string({ error: (iss) => (iss.input == null ? messages.required : ruleMessages.string) })
    .min(limits.passwordMin, minLengthMessage(limits.passwordMin))
    .max(limits.passwordMax),
});
export type ChangePasswordRequest = z.infer<typeof ChangePasswordRequestSchema>;

// ---- Two-factor sign-in (docs/api.md "Two-factor sign-in") ------------------------------------------------

const passwordField = () =>
  z
    .string({ error: (iss) => (iss.input == null ? messages.required : ruleMessages.string) })
    .min(1, messages.empty)
    .max(limits.passwordMax);
/** A 6-digit TOTP code or a recovery code (spaces and dashes as typed are ignored by the server). */
const secondFactorCode = () =>
  z
    .string({ error: (iss) => (iss.input == null ? messages.required : ruleMessages.string) })
    .trim()
    .min(1, messages.empty)
    .max(64);

export const SecondFactorLoginRequestSchema = z.object({
  challenge: z.string().min(1).max(128),
  code: secondFactorCode(),
});
export type SecondFactorLoginRequest = z.infer<typeof SecondFactorLoginRequestSchema>;

export const TwoFactorSetupRequestSchema = z.object({ password: passwordField() });
export type TwoFactorSetupRequest = z.infer<typeof TwoFactorSetupRequestSchema>;

export const TwoFactorEnableRequestSchema = z.object({ code: secondFactorCode() });
export type TwoFactorEnableRequest = z.infer<typeof TwoFactorEnableRequestSchema>;

export const TwoFactorDisableRequestSchema = z.object({ password: passwordField(), code: secondFactorCode() });
export type TwoFactorDisableRequest = z.infer<typeof TwoFactorDisableRequestSchema>;

// ---- Nodes ----------------------------------------------------------------------------------------------

const nodeFields = {
  name: requiredText(limits.nameMax),
  address: optionalNullable(ipv4Address()),
  allowInternet: flag().optional(),
  isGateway: flag().optional(),
  gatewayNetwork: optionalNullable(ipv4Cidr()),
  /**
   * Beyond the spec: every subnet of a gateway node, the first being `gatewayNetwork`. Spec clients send only
   * `gatewayNetwork`; then the server keeps the node's other subnets (see docs/api.md "Gateway networks").
   */
  gatewayNetworks: z
    .array(ipv4Cidr(), { error: () => messages.array })
    .max(limits.gatewayNetworksMax, maxMessage(limits.gatewayNetworksMax))
    .nullable()
    .optional(),
  /** Beyond the spec: let the node's access tokens replace its subnets (gateway nodes only; default off). */
  allowTokenNetworks: flag().optional(),
};

type GatewayShape = {
  isGateway?: boolean | undefined;
  gatewayNetwork?: string | null | undefined;
  gatewayNetworks?: string[] | null | undefined;
  allowTokenNetworks?: boolean | undefined;
};

/** A gateway needs a network and a non-gateway none; both fields, when sent, must agree on the first. */
function checkGatewayNetwork(value: GatewayShape, ctx: z.RefinementCtx, partial: boolean): void {
  const list = value.gatewayNetworks ?? [];
  if (value.isGateway === true && !value.gatewayNetwork && list.length === 0 && !partial) {
    ctx.addIssue({ code: 'custom', path: ['gatewayNetwork'], message: messages.required });
  }
  if (value.isGateway === false && value.gatewayNetwork) {
    ctx.addIssue({ code: 'custom', path: ['gatewayNetwork'], message: ruleMessages.gatewayNetworkNotAllowed });
  }
  if (value.isGateway === false && list.length > 0) {
    ctx.addIssue({ code: 'custom', path: ['gatewayNetworks'], message: ruleMessages.gatewayNetworkNotAllowed });
  }
  // A create without isGateway makes a regular node; an edit's is checked against the stored node by the server.
  if (value.allowTokenNetworks === true && (value.isGateway === false || (!partial && value.isGateway !== true))) {
    ctx.addIssue({ code: 'custom', path: ['allowTokenNetworks'], message: ruleMessages.tokenNetworksNotGateway });
  }
  if (value.gatewayNetworks && value.gatewayNetwork && list[0] !== value.gatewayNetwork) {
    ctx.addIssue({ code: 'custom', path: ['gatewayNetwork'], message: ruleMessages.gatewayNetworkNotFirst });
  }
  if (value.isGateway === true && value.gatewayNetworks && list.length === 0 && !value.gatewayNetwork) {
    ctx.addIssue({ code: 'custom', path: ['gatewayNetworks'], message: messages.required });
  }
  for (const [i, a] of list.entries()) {
    const b = list.slice(0, i).find((other) => isIPv4Cidr(a) && isIPv4Cidr(other) && cidrsOverlap(a, other));
    if (b) ctx.addIssue({ code: 'custom', path: ['gatewayNetworks'], message: gatewayNetworksOverlapMessage(a, b) });
  }
}

export const NodeCreateSchema = z
  .object(nodeFields)
  .superRefine((value, ctx) => checkGatewayNetwork(value, ctx, false));
export type NodeCreate = z.infer<typeof NodeCreateSchema>;

export const NodeUpdateSchema = z
  .object({ ...nodeFields, name: nodeFields.name.optional() })
  .superRefine((value, ctx) => checkGatewayNetwork(value, ctx, true));
export type NodeUpdate = z.infer<typeof NodeUpdateSchema>;

/**
 * The CLI's `postern networks set`: the whole list of subnets of a node its operator made a gateway. Private
 * ranges only (see docs/api.md "Gateway networks").
 */
export const AgentGatewayNetworksSchema = z.object({
  gatewayNetworks: z
    .array(ipv4Cidr(), { error: (iss) => (iss.input == null ? messages.required : messages.array) })
    .min(1, messages.required)
    .max(limits.gatewayNetworksMax, maxMessage(limits.gatewayNetworksMax)),
});
export type AgentGatewayNetworks = z.infer<typeof AgentGatewayNetworksSchema>;

// ---- Domains --------------------------------------------------------------------------------------------

const sslModes = ['self-signed', 'certbot'] as const;
/** An edit may also keep (or switch back to) the operator's own certificate, once one was uploaded. */
const sslModesOnEdit = ['self-signed', 'certbot', 'uploaded'] as const;
export const ACME_CHALLENGES = ['http-01', 'dns-01'] as const;

function checkSkipValidation(
  value: { ssl?: string | null | undefined; skipValidation?: boolean | undefined },
  ctx: z.RefinementCtx,
): void {
  if (value.skipValidation === true && value.ssl === 'certbot') {
    ctx.addIssue({ code: 'custom', path: ['ssl'], message: oneOfMessage(['self-signed']) });
  }
}

const domainFields = {
  /** A domain, or a wildcard domain (`*.example.com`: one certificate and one entry for every name below it). */
  domain: domainOrWildcard(),
  ssl: optionalNullable(oneOf(sslModes)),
  skipValidation: flag().optional(),
  /** The node the domain is assigned to; null (or omitted on create) = the admin's. Not the local node. */
  ownerNodeId: optionalNullable(idValue()),
  /**
   * Beyond the spec (docs/api.md "Certificates"): how a certbot domain proves itself to the CA. Absent: keep (an
   * edit) or `http-01` (a create). `dns-01` needs `dnsProviderId`; a wildcard domain takes `dns-01` only.
   */
  challenge: oneOf(ACME_CHALLENGES).optional(),
  /** The DNS provider that writes the `_acme-challenge` TXT record (dns-01); null: none. */
  dnsProviderId: optionalNullable(idValue()),
  /** The certificate authority of this domain; null: the gateway's default. */
  acmeCaId: optionalNullable(idValue()),
};

/** What a form can tell before sending; the server checks the merged result of an edit again. */
function checkChallenge(
  value: { domain?: string | undefined; ssl?: string | null | undefined; challenge?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if (value.domain?.startsWith('*.') === true && value.ssl === 'certbot' && value.challenge !== 'dns-01') {
    ctx.addIssue({ code: 'custom', path: ['challenge'], message: certificateMessages.wildcardNeedsDns });
  }
}

export const DomainCreateSchema = z.object(domainFields).superRefine(checkSkipValidation).superRefine(checkChallenge);
export type DomainCreate = z.infer<typeof DomainCreateSchema>;

export const DomainUpdateSchema = z
  .object({ ...domainFields, domain: domainFields.domain.optional(), ssl: optionalNullable(oneOf(sslModesOnEdit)) })
  .superRefine(checkSkipValidation)
  .superRefine(checkChallenge);
export type DomainUpdate = z.infer<typeof DomainUpdateSchema>;

// ---- Services -------------------------------------------------------------------------------------------

const serviceCommonFields = {
  name: requiredText(limits.nameMax),
  domain: optionalNullable(domainName()),
  backendHost: optionalNullable(backendHost()),
  allowedIps: ipList().optional(),
  blockedIps: ipList().optional(),
  /**
   * Temporary exposure (beyond the spec, docs/api.md): when the gateway disables the service; null clears it, absent
   * keeps it (an edit) or means none (a create). `ttl` (seconds from now) is the same, counted on the gateway's clock.
   */
  expiresAt: optionalNullable(z.iso.datetime({ offset: true, error: () => ruleMessages.date })),
  ttl: integerIn(limits.serviceTtlMinSeconds, limits.serviceTtlMaxSeconds).optional(),
};

/** One expiry, not two. */
function checkExpiry(
  value: { expiresAt?: string | null | undefined; ttl?: number | undefined },
  ctx: z.RefinementCtx,
): void {
  if (value.ttl !== undefined && value.expiresAt != null) {
    ctx.addIssue({ code: 'custom', path: ['ttl'], message: ruleMessages.expiryTwice });
  }
}

const httpFields = {
  ...serviceCommonFields,
  /** A web service may also be published on a wildcard domain: it answers the names below it without one of theirs. */
  domain: optionalNullable(domainOrWildcard()),
  pathLocation: optionalNullable(pathLocation()),
  backendProto: oneOf(['http', 'https']).optional(),
  backendPort: port().optional(),
};

function checkDomainOrPath(
  value: { domain?: string | null | undefined; pathLocation?: string | null | undefined },
  ctx: z.RefinementCtx,
): void {
  if (!value.domain && !value.pathLocation) {
    ctx.addIssue({ code: 'custom', path: ['pathLocation'], message: ruleMessages.domainOrPath });
    return;
  }
  // The server checks the merged result of an edit again; this lets a form show the rule before sending.
  const reserved = value.pathLocation ? findReservedPath(value.pathLocation, Boolean(value.domain)) : null;
  if (reserved) ctx.addIssue({ code: 'custom', path: ['pathLocation'], message: reservedPathMessage(reserved) });
}

export const HttpServiceCreateSchema = z
  .object({
    ...httpFields,
    /**
     * Beyond the spec: false creates the service disabled (absent: enabled). The console and `postern expose --auth`
     * create a service that gets its own access policy this way, set the policy, then enable it: it is never served
     * under its domain's weaker policy in between.
     */
    enabled: flag().optional(),
  })
  .superRefine(checkDomainOrPath)
  .superRefine(checkExpiry);
export type HttpServiceCreate = z.infer<typeof HttpServiceCreateSchema>;

export const HttpServiceUpdateSchema = z
  .object({ ...httpFields, name: httpFields.name.optional() })
  .superRefine(checkExpiry);
export type HttpServiceUpdate = z.infer<typeof HttpServiceUpdateSchema>;

const tcpFields = {
  ...serviceCommonFields,
  proto: oneOf(['tcp', 'udp']).optional(),
  port: optionalNullable(port()),
  ssl: flag().optional(),
  backendPort: port(),
};

export const TcpServiceCreateSchema = z.object(tcpFields).superRefine((value, ctx) => {
  if (value.ssl === true && value.proto === 'udp') {
    ctx.addIssue({ code: 'custom', path: ['ssl'], message: oneOfMessage(['false']) });
  }
  checkExpiry(value, ctx);
});
export type TcpServiceCreate = z.infer<typeof TcpServiceCreateSchema>;

/**
 * The agent API's creations: the same fields, plus where the service comes from when the node's agent made it from a
 * container's Docker labels (docs/LABELS.md). Only a node's token sends it; it changes none of the token's rights.
 */
const agentSource = { source: ServiceSourceSchema.nullable().optional() };
export const AgentHttpServiceCreateSchema = HttpServiceCreateSchema.extend(agentSource);
export type AgentHttpServiceCreate = z.infer<typeof AgentHttpServiceCreateSchema>;
export const AgentTcpServiceCreateSchema = TcpServiceCreateSchema.extend(agentSource);
export type AgentTcpServiceCreate = z.infer<typeof AgentTcpServiceCreateSchema>;

export const TcpServiceUpdateSchema = z
  .object({
    ...tcpFields,
    name: tcpFields.name.optional(),
    backendPort: tcpFields.backendPort.optional(),
  })
  .superRefine(checkExpiry);
export type TcpServiceUpdate = z.infer<typeof TcpServiceUpdateSchema>;

// ---- Personal access tokens -----------------------------------------------------------------------------

/** `now` is injectable so the rule "not earlier than now" is testable. */
export const makeTokenCreateSchema = (now: () => Date = () => new Date()) =>
  z.object({
    name: requiredText(limits.nameMax),
    expireAt: optionalNullable(
      z.iso
        .datetime({ offset: true, error: () => ruleMessages.date })
        .refine((value) => Date.parse(value) >= now().getTime() - limits.expirySkewMs, ruleMessages.pastDate),
    ),
  });
export const TokenCreateSchema = makeTokenCreateSchema();
export type TokenCreate = z.infer<typeof TokenCreateSchema>;

// ---- Query strings --------------------------------------------------------------------------------------

export const PageQuerySchema = z.object({
  page: integerIn(1, 1_000_000).optional().default(1),
  limit: integerIn(1, limits.listMaxLimit).optional().default(defaults.pageSize),
});
export type PageQuery = z.infer<typeof PageQuerySchema>;

/** Optional search text: rows whose name (or address, domain, port) contains it, case-insensitively. */
const searchText = z.string().trim().max(253).optional();

export const NODE_SORTS = ['name', 'status', 'handshake', 'traffic'] as const;
export type NodeSort = (typeof NODE_SORTS)[number];
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** Absent `q`, `sort` and `order` keep the spec's list: every node, in creation order. */
const nodeListFilter = {
  type: oneOf(['nodes', 'gateways']).optional(),
  q: searchText,
  sort: oneOf(NODE_SORTS).optional(),
  order: oneOf(SORT_ORDERS).optional(),
};

export const NodeListQuerySchema = PageQuerySchema.extend(nodeListFilter);
export type NodeListQuery = z.infer<typeof NodeListQuerySchema>;

/** Paging plus an optional `search` (part of a name) for the console's domain autocomplete. */
export const DomainListQuerySchema = PageQuerySchema.extend({ search: z.string().trim().max(253).optional() });
export type DomainListQuery = z.infer<typeof DomainListQuerySchema>;

export const SERVICE_SORTS = ['name', 'status'] as const;
export type ServiceSort = (typeof SERVICE_SORTS)[number];

/** Absent `q`, `sort` and `order` keep the spec's list (by id). Status: public, set aside, disabled. */
const serviceListFilter = {
  q: searchText,
  sort: oneOf(SERVICE_SORTS).optional(),
  order: oneOf(SORT_ORDERS).optional(),
};

export const ServiceListQuerySchema = PageQuerySchema.extend({
  domain: optionalNullable(domainOrWildcard()),
  ...serviceListFilter,
});

/** One node's services: paging plus optional `q` (name, domain, path or port contains it), `sort` and `order`. */
export const NodeServiceListQuerySchema = PageQuerySchema.extend(serviceListFilter);
export type NodeServiceListQuery = z.infer<typeof NodeServiceListQuerySchema>;
export type ServiceListQuery = z.infer<typeof ServiceListQuerySchema>;

/** The console's "Find service": every node's services whose name or public address contains `q`, by name. */
export const FindServicesQuerySchema = PageQuerySchema.extend({ q: searchText });
export type FindServicesQuery = z.infer<typeof FindServicesQuerySchema>;

export const NodeStreamQuerySchema = z.object({
  token: z.string().min(1, messages.required),
  id: idValue().optional(),
  page: integerIn(1, 1_000_000).optional().default(1),
  limit: integerIn(1, limits.listMaxLimit).optional().default(defaults.pageSize),
  ...nodeListFilter,
  /** List variant: `rows` (default, the spec's array per message) or `page` (named `page` events with the total). */
  format: oneOf(['rows', 'page']).optional(),
});
export type NodeStreamQuery = z.infer<typeof NodeStreamQuerySchema>;

export const LogStreamQuerySchema = z
  .object({
    token: z.string().min(1, messages.required),
    domain: optionalNullable(domainOrWildcard()),
    type: oneOf(['http', 'tcp']).optional(),
    id: idValue().optional(),
  })
  .superRefine((value, ctx) => {
    if (!value.domain && (value.type === undefined || value.id === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['domain'], message: messages.required });
    }
  });
export type LogStreamQuery = z.infer<typeof LogStreamQuerySchema>;

// ---- Path parameters ------------------------------------------------------------------------------------
// Ids are strict decimal text, so `01`, `1.0` or `%201` never name resource 1; like an unknown `:type`, a malformed
// one names no resource (the server answers 404 for params).

export const IdParamSchema = z.object({ id: idValue() });
export const TokenParamsSchema = IdParamSchema.extend({ tokenId: idValue() });
export const NodeIdParamsSchema = z.object({ nodeId: idValue() });
/** `/api/services/:nodeId/:type` */
export const NodeServicesParamsSchema = NodeIdParamsSchema.extend({ type: ServiceTypeSchema });
/** `/api/services/:nodeId/:type/:id` */
export const ServiceParamsSchema = NodeServicesParamsSchema.extend({ id: idValue() });
/** `/api/services/:nodeId/http/:id` and `/tcp/:id` (the type is in the route itself). */
export const NodeServiceParamsSchema = NodeIdParamsSchema.extend({ id: idValue() });
/** `/api/agent/services/:type` */
export const ServiceTypeParamsSchema = z.object({ type: ServiceTypeSchema });
/** `/api/agent/services/:type/:id` */
export const AgentServiceParamsSchema = IdParamSchema.extend({ type: ServiceTypeSchema });
