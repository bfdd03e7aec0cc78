import { z } from 'zod';
import {
  AgentConfigSchema,
  AnyServiceSchema,
  DomainSchema,
  FoundServiceSchema,
  HealthSchema,
  HttpServiceSchema,
  LoginResponseSchema,
  NodeCreatedSchema,
  NodeSchema,
  PersonalAccessTokenCreatedSchema,
  PersonalAccessTokenSchema,
  SecondFactorChallengeSchema,
  SystemInfoSchema,
  TcpServiceSchema,
  TwoFactorEnabledSchema,
  TwoFactorSetupSchema,
  TwoFactorStatusSchema,
} from './entities.js';
import {
  AgentHttpServiceParamsSchema,
  AgentShareLinkParamsSchema,
  DomainAccessSchema,
  DomainAccessUpdateSchema,
  IdentityProviderCreateSchema,
  IdentityProviderDiscoverSchema,
  IdentityProviderDiscoverySchema,
  IdentityProviderSchema,
  IdentityProviderUpdateSchema,
  ServiceAccessParamsSchema,
  ServiceAccessSchema,
  ServiceAccessUpdateSchema,
  ShareLinkCreatedSchema,
  ShareLinkCreateSchema,
  ShareLinkParamsSchema,
  ShareLinkSchema,
  VisitorSessionParamsSchema,
  VisitorSessionSchema,
} from './access.js';
import {
  AuditEntrySchema,
  AuditEventSchema,
  AuditExportQuerySchema,
  AuditListQuerySchema,
  AuditStreamQuerySchema,
} from './audit.js';
import { ConfigApplyResultSchema, ConfigDocumentSchema, ConfigPlanRequestSchema, ConfigPlanSchema } from './config.js';
import {
  AccountSchema,
  AccountUpdateSchema,
  ConsoleProviderSchema,
  CurrentAccountSchema,
  IdentityLinkSchema,
  InviteAcceptedSchema,
  InviteAcceptSchema,
  InviteCreatedSchema,
  InviteCreateSchema,
  InviteInfoSchema,
  InviteSchema,
  InviteTokenSchema,
  ProviderConsoleUpdateSchema,
  SsoFinishedSchema,
  SsoFinishSchema,
  SsoStartedSchema,
  SsoStartSchema,
} from './accounts.js';
import {
  AcmeCaCreateSchema,
  AcmeCaSchema,
  AcmeCaUpdateSchema,
  CertificateOverviewSchema,
  CertificateUploadSchema,
  DnsProviderCreateSchema,
  DnsProviderSchema,
  DnsProviderUpdateSchema,
} from './certificates.js';
import {
  NotificationChannelCreateSchema,
  NotificationChannelSchema,
  NotificationChannelUpdateSchema,
  NotificationDeliveryQuerySchema,
  NotificationDeliverySchema,
  NotificationSettingsSchema,
  NotificationSettingsUpdateSchema,
  NotificationTestResultSchema,
} from './notifications.js';
import { AttentionSchema, ServiceOverviewPageSchema, ServiceOverviewQuerySchema } from './overview.js';
import { listOf } from './envelopes.js';
import { LabelProblemsUpdateSchema, NodeLabelProblemsSchema } from './source.js';
import type { ErrorCode } from './errors.js';
import {
  AgentGatewayNetworksSchema,
  AgentHttpServiceCreateSchema,
  AgentTcpServiceCreateSchema,
  AgentServiceParamsSchema,
  ChangePasswordRequestSchema,
  DomainCreateSchema,
  DomainListQuerySchema,
  DomainUpdateSchema,
  FindServicesQuerySchema,
  HttpServiceCreateSchema,
  HttpServiceUpdateSchema,
  IdParamSchema,
  LoginRequestSchema,
  LogStreamQuerySchema,
  NodeCreateSchema,
  NodeIdParamsSchema,
  NodeListQuerySchema,
  NodeServiceParamsSchema,
  NodeServicesParamsSchema,
  NodeStreamQuerySchema,
  NodeUpdateSchema,
  NodeServiceListQuerySchema,
  PageQuerySchema,
  SecondFactorLoginRequestSchema,
  ServiceListQuerySchema,
  ServiceParamsSchema,
  ServiceTypeParamsSchema,
  TcpServiceCreateSchema,
  TcpServiceUpdateSchema,
  TokenCreateSchema,
  TokenParamsSchema,
  TwoFactorDisableRequestSchema,
  TwoFactorEnableRequestSchema,
  TwoFactorSetupRequestSchema,
} from './requests.js';
import { routes, type Route, type RouteName } from './routes.js';
import {
  DRIFT_EVENT,
  DriftStatusSchema,
  HEALTH_EVENT,
  HealthCheckUpdateSchema,
  ObserveStreamQuerySchema,
  ServiceFiguresListSchema,
  ServiceFiguresQuerySchema,
  ServiceHealthSchema,
  ServiceTrafficSchema,
  SystemStatusSchema,
  TrafficQuerySchema,
} from './observe.js';
import {
  LogEventSchema,
  NODE_PAGE_EVENT,
  NodeDetailEventSchema,
  NodeListEventSchema,
  NodeListPageEventSchema,
} from './sse.js';

// The operation table: every call of the API as ONE object (route, schemas, answer, errors). The server registers
// routes from it (apps/server/src/http/operation.ts), the typed client calls it (api-client.ts: console, CLI, e2e),
// and the OpenAPI document is generated from it. Adding a call = a route in routes.ts + an entry here.

/** A JSON answer, checked against `schema` (the server serialises through it, the client parses with it). */
export interface JsonResponse<S extends z.ZodType = z.ZodType> {
  readonly kind: 'json';
  readonly status: 200 | 201;
  readonly schema: S;
}
/** 204, no body. */
export interface EmptyResponse {
  readonly kind: 'empty';
  readonly status: 204;
}
/** A file to save (Content-Disposition names it). */
export interface FileResponse {
  readonly kind: 'file';
  readonly status: 200;
  readonly mediaType: string;
}
/** A server-sent event stream: each event name with the JSON its `data:` carries (`message`: unnamed events). */
export interface EventsResponse<E extends Readonly<Record<string, z.ZodType>> = Readonly<Record<string, z.ZodType>>> {
  readonly kind: 'events';
  readonly status: 200;
  readonly events: E;
}
export type ResponseSpec = JsonResponse | EmptyResponse | FileResponse | EventsResponse;

export interface OperationSpec {
  /** One line for the OpenAPI document. */
  readonly summary: string;
  /** Path placeholders; a malformed one names no resource (404). */
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  readonly response: ResponseSpec;
  /**
   * Error codes beyond those every such operation has: `unauthorized` (all but public), `forbidden` (session routes:
   * the caller's role), `not_found` (with params),
   * `validation` (with a body or query); `internal` is always possible.
   */
  readonly errors?: readonly ErrorCode[];
}

export type Operation = Route & OperationSpec & { readonly name: RouteName; readonly errors: readonly ErrorCode[] };

const json = <S extends z.ZodType>(schema: S) => ({ kind: 'json', status: 200, schema }) as const;
const created = <S extends z.ZodType>(schema: S) => ({ kind: 'json', status: 201, schema }) as const;
const noContent = { kind: 'empty', status: 204 } as const;
const file = (mediaType: string) => ({ kind: 'file', status: 200, mediaType }) as const;
const events = <const E extends Readonly<Record<string, z.ZodType>>>(byName: E) =>
  ({ kind: 'events', status: 200, events: byName }) as const;

function impliedErrors(route: Route, spec: OperationSpec): ErrorCode[] {
  const implied: ErrorCode[] = [];
  if (route.auth !== 'public') implied.push('unauthorized');
  // The role policy (roles.ts) may refuse any session route.
  if (route.auth === 'session') implied.push('forbidden');
  if (spec.params) implied.push('not_found');
  if (spec.body || spec.query) implied.push('validation');
  return implied;
}

function operation<const N extends RouteName, const S extends OperationSpec>(name: N, spec: S) {
  const route = routes[name];
  const errors = [...new Set([...impliedErrors(route, spec), ...(spec.errors ?? [])])];
  return { ...route, ...spec, name, errors } as (typeof routes)[N] &
    Omit<S, 'errors'> & { readonly name: N; readonly errors: readonly ErrorCode[] };
}

/** A change the data plane applies: stored, then served; either step's failure has its own code. */
const applied = ['dataplane_rejected', 'dataplane_unavailable'] as const satisfies readonly ErrorCode[];
/** A node whose token works but whose node is disabled is refused on every agent call. */
const agent = ['forbidden'] as const satisfies readonly ErrorCode[];

/** The session's token arrives as `?token=` and is checked by the auth gate; it is not a filter. */
const NodeStreamFilterSchema = NodeStreamQuerySchema.omit({ token: true });

export const operations = {
  health: operation('health', { summary: 'Liveness and version', response: json(HealthSchema) }),
  openapi: operation('openapi', { summary: 'This document', response: json(z.record(z.string(), z.unknown())) }),
  systemInfo: operation('systemInfo', {
    summary: "The gateway's public URL and certificate pin",
    response: json(SystemInfoSchema),
  }),

  login: operation('login', {
    summary: 'Sign in (with two-factor sign-in on: a challenge for the second step instead of the session)',
    body: LoginRequestSchema,
    response: json(z.union([LoginResponseSchema, SecondFactorChallengeSchema])),
    errors: ['unauthorized', 'rate_limited', 'payload_too_large'],
  }),
  logout: operation('logout', { summary: 'End the session', response: noContent }),
  changePassword: operation('changePassword', {
    summary: "Change this account's password (ends its every other session)",
    body: ChangePasswordRequestSchema,
    response: noContent,
    errors: ['rate_limited', 'payload_too_large'],
  }),
  session: operation('session', {
    summary: 'The session behind the HttpOnly cookie',
    response: json(LoginResponseSchema),
    errors: ['forbidden'],
  }),
  loginSecondFactor: operation('loginSecondFactor', {
    summary: "Sign in, second step: the password step's challenge and a TOTP or recovery code",
    body: SecondFactorLoginRequestSchema,
    response: json(LoginResponseSchema),
    errors: ['unauthorized', 'rate_limited', 'payload_too_large'],
  }),
  twoFactorStatus: operation('twoFactorStatus', {
    summary: "Whether this account's two-factor sign-in is on",
    response: json(TwoFactorStatusSchema),
  }),
  twoFactorSetup: operation('twoFactorSetup', {
    summary: 'Start enrolment: a new TOTP secret and its QR code (shown once)',
    body: TwoFactorSetupRequestSchema,
    response: json(TwoFactorSetupSchema),
    errors: ['bad_request', 'rate_limited', 'payload_too_large'],
  }),
  twoFactorEnable: operation('twoFactorEnable', {
    summary: 'Confirm enrolment with a code: two-factor sign-in is on; the answer carries the recovery codes, once',
    body: TwoFactorEnableRequestSchema,
    response: json(TwoFactorEnabledSchema),
    errors: ['bad_request', 'rate_limited'],
  }),
  twoFactorDisable: operation('twoFactorDisable', {
    summary: 'Turn two-factor sign-in off (password and a TOTP or recovery code)',
    body: TwoFactorDisableRequestSchema,
    response: noContent,
    errors: ['bad_request', 'rate_limited', 'payload_too_large'],
  }),
  currentAccount: operation('currentAccount', {
    summary: 'Who is signed in: the account, its role and what the role may do, and how this session signed in',
    response: json(CurrentAccountSchema),
  }),
  consoleProviders: operation('consoleProviders', {
    summary: 'The identity providers the login page offers (names only)',
    response: json(z.object({ data: z.array(ConsoleProviderSchema) })),
  }),
  ssoStart: operation('ssoStart', {
    summary: "Start signing in through an identity provider: the provider's URL (the state rides in a cookie)",
    body: SsoStartSchema,
    response: json(SsoStartedSchema),
    errors: ['bad_request', 'payload_too_large'],
  }),
  ssoFinish: operation('ssoFinish', {
    summary:
      "The provider's redirect back, as the console got it: a session (or the second factor's challenge), or the identity linked",
    body: SsoFinishSchema,
    response: json(SsoFinishedSchema),
    errors: ['unauthorized', 'forbidden', 'rate_limited', 'payload_too_large'],
  }),
  linkIdentity: operation('linkIdentity', {
    summary: "Bind one's own account to an identity of a provider (the password again): the provider's URL",
    body: IdentityLinkSchema,
    response: json(SsoStartedSchema),
    errors: ['bad_request', 'rate_limited', 'payload_too_large'],
  }),
  inviteInfo: operation('inviteInfo', {
    summary: 'What an invite link is for (its username and role), before it is taken',
    body: InviteTokenSchema,
    response: json(InviteInfoSchema),
    errors: ['bad_request', 'rate_limited', 'payload_too_large'],
  }),
  acceptInvite: operation('acceptInvite', {
    summary: "Take an invite: the account is made with the invitee's password (then sign in)",
    body: InviteAcceptSchema,
    response: created(InviteAcceptedSchema),
    errors: ['bad_request', 'rate_limited', 'payload_too_large'],
  }),
  listAccounts: operation('listAccounts', {
    summary: 'A page of the console accounts',
    query: PageQuerySchema,
    response: json(listOf(AccountSchema)),
  }),
  updateAccount: operation('updateAccount', {
    summary: "Change an account's role, disable or enable it, or turn its password sign-in off or on",
    params: IdParamSchema,
    body: AccountUpdateSchema,
    response: json(AccountSchema),
    errors: ['bad_request'],
  }),
  deleteAccount: operation('deleteAccount', {
    summary: 'Delete an account (never the last owner); its sessions end on every gateway',
    params: IdParamSchema,
    response: noContent,
    errors: ['bad_request'],
  }),
  resetAccountTwoFactor: operation('resetAccountTwoFactor', {
    summary: "Turn another account's two-factor sign-in off (a lost authenticator); its sessions end",
    params: IdParamSchema,
    response: json(AccountSchema),
    errors: ['bad_request'],
  }),
  unlinkAccountIdentity: operation('unlinkAccountIdentity', {
    summary: 'Unbind an account from its provider identity (it signs in with its password only)',
    params: IdParamSchema,
    response: json(AccountSchema),
    errors: ['bad_request'],
  }),
  listInvites: operation('listInvites', {
    summary: 'A page of the invites not taken yet, newest first',
    query: PageQuerySchema,
    response: json(listOf(InviteSchema)),
  }),
  createInvite: operation('createInvite', {
    summary: 'Invite someone: a one-time link that expires (the answer carries it, once)',
    body: InviteCreateSchema,
    response: created(InviteCreatedSchema),
  }),
  revokeInvite: operation('revokeInvite', {
    summary: 'Revoke an invite not taken yet',
    params: IdParamSchema,
    response: noContent,
  }),

  listNodes: operation('listNodes', {
    summary: 'A page of nodes',
    query: NodeListQuerySchema,
    response: json(listOf(NodeSchema)),
  }),
  createNode: operation('createNode', {
    summary: 'Create a node (answer carries its first access token, once)',
    body: NodeCreateSchema,
    response: created(NodeCreatedSchema),
    errors: applied,
  }),
  nodeStream: operation('nodeStream', {
    summary:
      'Live node list page (page, limit, type; format=page for named page events with the total) or one node (id)',
    query: NodeStreamFilterSchema,
    response: events({
      message: z.union([NodeListEventSchema, NodeDetailEventSchema]),
      [NODE_PAGE_EVENT]: NodeListPageEventSchema,
    }),
    errors: ['not_found'],
  }),
  getNode: operation('getNode', { summary: 'One node', params: IdParamSchema, response: json(NodeSchema) }),
  getNodeLabelProblems: operation('getNodeLabelProblems', {
    summary: "What the node's agent last reported about its containers' Docker labels (docs/LABELS.md)",
    params: IdParamSchema,
    response: json(NodeLabelProblemsSchema),
  }),
  updateNode: operation('updateNode', {
    summary: 'Edit a node',
    params: IdParamSchema,
    body: NodeUpdateSchema,
    response: json(NodeSchema),
    errors: ['bad_request', ...applied],
  }),
  deleteNode: operation('deleteNode', {
    summary: 'Delete a node and its services',
    params: IdParamSchema,
    response: noContent,
    errors: ['bad_request', ...applied],
  }),
  downloadNodeConfig: operation('downloadNodeConfig', {
    summary: "The node's wg-quick file",
    params: IdParamSchema,
    response: file('text/plain'),
    errors: ['bad_request'],
  }),
  enableNode: operation('enableNode', {
    summary: 'Connect a node',
    params: IdParamSchema,
    response: json(NodeSchema),
    errors: ['bad_request', ...applied],
  }),
  disableNode: operation('disableNode', {
    summary: 'Disconnect a node',
    params: IdParamSchema,
    response: json(NodeSchema),
    errors: ['bad_request', ...applied],
  }),

  listTokens: operation('listTokens', {
    summary: "A page of a node's access tokens",
    params: IdParamSchema,
    query: PageQuerySchema,
    response: json(listOf(PersonalAccessTokenSchema)),
  }),
  createToken: operation('createToken', {
    summary: 'Create an access token (the answer carries it, once)',
    params: IdParamSchema,
    body: TokenCreateSchema,
    response: created(PersonalAccessTokenCreatedSchema),
    errors: ['bad_request'],
  }),
  revokeToken: operation('revokeToken', {
    summary: 'Revoke an access token',
    params: TokenParamsSchema,
    response: json(PersonalAccessTokenSchema),
  }),
  deleteToken: operation('deleteToken', {
    summary: 'Delete an access token',
    params: TokenParamsSchema,
    response: noContent,
  }),

  listDomains: operation('listDomains', {
    summary: 'A page of domains',
    query: DomainListQuerySchema,
    response: json(listOf(DomainSchema)),
  }),
  createDomain: operation('createDomain', {
    summary: 'Add a domain',
    body: DomainCreateSchema,
    response: created(DomainSchema),
    errors: ['bad_request', ...applied],
  }),
  getDomain: operation('getDomain', { summary: 'One domain', params: IdParamSchema, response: json(DomainSchema) }),
  updateDomain: operation('updateDomain', {
    summary: 'Edit a domain',
    params: IdParamSchema,
    body: DomainUpdateSchema,
    response: json(DomainSchema),
    errors: ['bad_request', ...applied],
  }),
  deleteDomain: operation('deleteDomain', {
    summary: 'Delete an unused domain',
    params: IdParamSchema,
    response: noContent,
    errors: ['bad_request', ...applied],
  }),

  listServiceOverview: operation('listServiceOverview', {
    summary:
      "A page of every node's services of both types with their node and certificate (filters: q, kind, status, nodeId, domain)",
    query: ServiceOverviewQuerySchema,
    response: json(ServiceOverviewPageSchema),
  }),
  listHttpServices: operation('listHttpServices', {
    summary: 'A page of HTTP services (optionally of one domain)',
    query: ServiceListQuerySchema,
    response: json(listOf(HttpServiceSchema)),
  }),
  listTcpServices: operation('listTcpServices', {
    summary: 'A page of TCP/UDP services (optionally of one domain)',
    query: ServiceListQuerySchema,
    response: json(listOf(TcpServiceSchema)),
  }),
  findServices: operation('findServices', {
    summary:
      "Every node's services whose name, domain, domain + path or public port contains q, by name, with their node",
    query: FindServicesQuerySchema,
    response: json(listOf(FoundServiceSchema)),
  }),
  listNodeServices: operation('listNodeServices', {
    summary: "A page of one node's services of one type",
    params: NodeServicesParamsSchema,
    query: NodeServiceListQuerySchema,
    response: json(listOf(AnyServiceSchema)),
  }),
  createHttpService: operation('createHttpService', {
    summary: 'Publish an HTTP service',
    params: NodeIdParamsSchema,
    body: HttpServiceCreateSchema,
    response: created(HttpServiceSchema),
    errors: ['bad_request', ...applied],
  }),
  createTcpService: operation('createTcpService', {
    summary: 'Publish a TCP/UDP service',
    params: NodeIdParamsSchema,
    body: TcpServiceCreateSchema,
    response: created(TcpServiceSchema),
    errors: ['bad_request', ...applied],
  }),
  getService: operation('getService', {
    summary: 'One service',
    params: ServiceParamsSchema,
    response: json(AnyServiceSchema),
  }),
  updateHttpService: operation('updateHttpService', {
    summary: 'Edit an HTTP service',
    params: NodeServiceParamsSchema,
    body: HttpServiceUpdateSchema,
    response: json(HttpServiceSchema),
    errors: ['bad_request', ...applied],
  }),
  updateTcpService: operation('updateTcpService', {
    summary: 'Edit a TCP/UDP service',
    params: NodeServiceParamsSchema,
    body: TcpServiceUpdateSchema,
    response: json(TcpServiceSchema),
    errors: ['bad_request', ...applied],
  }),
  enableService: operation('enableService', {
    summary: 'Serve a service',
    params: ServiceParamsSchema,
    response: json(AnyServiceSchema),
    errors: ['bad_request', ...applied],
  }),
  disableService: operation('disableService', {
    summary: 'Stop serving a service',
    params: ServiceParamsSchema,
    response: json(AnyServiceSchema),
    errors: ['bad_request', ...applied],
  }),
  deleteService: operation('deleteService', {
    summary: 'Delete a service',
    params: ServiceParamsSchema,
    response: noContent,
    errors: applied,
  }),

  logStream: operation('logStream', {
    summary: 'Live access log of a domain (domain) or a service (type, id)',
    query: LogStreamQuerySchema,
    response: events({ message: LogEventSchema }),
  }),

  listAudit: operation('listAudit', {
    summary: 'A page of the audit log, newest first (filters: node, domain, actor, action, from, to)',
    query: AuditListQuerySchema,
    response: json(listOf(AuditEntrySchema)),
  }),
  auditStream: operation('auditStream', {
    summary: 'Live audit entries matching the same filters, as they are recorded',
    query: AuditStreamQuerySchema.omit({ token: true }),
    response: events({ message: AuditEventSchema }),
  }),
  exportAudit: operation('exportAudit', {
    summary: 'The audit log matching the same filters as CSV, newest first (at most AUDIT_EXPORT_MAX_ROWS entries)',
    query: AuditExportQuerySchema,
    response: file('text/csv'),
  }),
  serviceTraffic: operation('serviceTraffic', {
    summary: "A service's traffic: a summary of the last `minutes` (default 60) and one point per minute",
    params: ServiceParamsSchema,
    query: TrafficQuerySchema,
    response: json(ServiceTrafficSchema),
  }),
  updateHealthCheck: operation('updateHealthCheck', {
    summary: "Set a service's health-check interval and timeout",
    params: ServiceParamsSchema,
    body: HealthCheckUpdateSchema,
    response: json(ServiceHealthSchema),
  }),
  serviceFigures: operation('serviceFigures', {
    summary:
      "Every service's last hour (requests, errors, bytes, sparkline) and backend health; optionally of one node or type",
    query: ServiceFiguresQuerySchema,
    response: json(ServiceFiguresListSchema),
  }),
  observeStream: operation('observeStream', {
    summary: 'Live health changes (event `health`) and drift check results (event `drift`)',
    query: ObserveStreamQuerySchema.omit({ token: true }),
    response: events({ [HEALTH_EVENT]: ServiceHealthSchema, [DRIFT_EVENT]: DriftStatusSchema }),
  }),
  systemStatus: operation('systemStatus', {
    summary: 'The last drift check, health counts and the last 24 hours of traffic of every service',
    response: json(SystemStatusSchema),
  }),

  attention: operation('attention', {
    summary: 'What needs attention (offline nodes, backends down, certificates, set-aside changes, drift) and totals',
    response: json(AttentionSchema),
  }),
  listIdentityProviders: operation('listIdentityProviders', {
    summary: 'The OpenID Connect providers visitors sign in with',
    query: PageQuerySchema,
    response: json(listOf(IdentityProviderSchema)),
  }),
  createIdentityProvider: operation('createIdentityProvider', {
    summary: 'Add an OpenID Connect provider (its client secret is stored encrypted and never returned)',
    body: IdentityProviderCreateSchema,
    response: created(IdentityProviderSchema),
  }),
  discoverIdentityProvider: operation('discoverIdentityProvider', {
    summary:
      'Test connection: run OpenID Connect discovery on an issuer and say what it offers (422 on issuer: why not)',
    body: IdentityProviderDiscoverSchema,
    response: json(IdentityProviderDiscoverySchema),
  }),
  updateIdentityProvider: operation('updateIdentityProvider', {
    summary: 'Edit an OpenID Connect provider',
    params: IdParamSchema,
    body: IdentityProviderUpdateSchema,
    response: json(IdentityProviderSchema),
    errors: [...applied, 'forbidden'],
  }),
  deleteIdentityProvider: operation('deleteIdentityProvider', {
    summary: 'Delete an OpenID Connect provider no policy or account uses',
    params: IdParamSchema,
    response: noContent,
    errors: ['bad_request', 'forbidden'],
  }),
  updateProviderConsoleSignIn: operation('updateProviderConsoleSignIn', {
    summary: 'Whether a provider signs accounts in to the console, and the roles its groups get on a first sign-in',
    params: IdParamSchema,
    body: ProviderConsoleUpdateSchema,
    response: json(IdentityProviderSchema),
  }),
  listDnsProviders: operation('listDnsProviders', {
    summary: 'Every DNS provider for DNS-01 challenges (secrets are never returned)',
    response: json(z.array(DnsProviderSchema)),
  }),
  createDnsProvider: operation('createDnsProvider', {
    summary: 'Add a DNS provider (RFC 2136 with TSIG, Cloudflare, Route 53, acme-dns)',
    body: DnsProviderCreateSchema,
    response: created(DnsProviderSchema),
  }),
  updateDnsProvider: operation('updateDnsProvider', {
    summary: 'Edit a DNS provider (absent fields, the secret too, keep their value)',
    params: IdParamSchema,
    body: DnsProviderUpdateSchema,
    response: json(DnsProviderSchema),
  }),
  deleteDnsProvider: operation('deleteDnsProvider', {
    summary: 'Delete a DNS provider no domain uses',
    params: IdParamSchema,
    response: noContent,
    errors: ['bad_request'],
  }),
  listAcmeCas: operation('listAcmeCas', {
    summary: 'Every ACME certificate authority configured (EAB HMAC keys are never returned)',
    response: json(z.array(AcmeCaSchema)),
  }),
  createAcmeCa: operation('createAcmeCa', {
    summary: 'Add an ACME certificate authority (any directory URL, with external account binding)',
    body: AcmeCaCreateSchema,
    response: created(AcmeCaSchema),
  }),
  updateAcmeCa: operation('updateAcmeCa', {
    summary: 'Edit an ACME certificate authority',
    params: IdParamSchema,
    body: AcmeCaUpdateSchema,
    response: json(AcmeCaSchema),
  }),
  deleteAcmeCa: operation('deleteAcmeCa', {
    summary: 'Delete an ACME certificate authority no domain uses',
    params: IdParamSchema,
    response: noContent,
    errors: ['bad_request'],
  }),
  listCertificates: operation('listCertificates', {
    summary: "Every domain's certificate: names, issuer, method, expiry, last attempt and its error",
    response: json(z.array(CertificateOverviewSchema)),
  }),
  renewCertificate: operation('renewCertificate', {
    summary: "Ask the CA for a new certificate of a certbot domain now (the answer: the domain's certificate, pending)",
    params: IdParamSchema,
    response: json(CertificateOverviewSchema),
    errors: ['bad_request'],
  }),
  uploadCertificate: operation('uploadCertificate', {
    summary: 'Serve your own certificate for a domain (PEM chain and key; checked; never renewed by a CA)',
    params: IdParamSchema,
    body: CertificateUploadSchema,
    response: json(DomainSchema),
    errors: applied,
  }),
  getDomainAccess: operation('getDomainAccess', {
    summary: "A domain's access policy (public when it has none)",
    params: IdParamSchema,
    response: json(DomainAccessSchema),
  }),
  updateDomainAccess: operation('updateDomainAccess', {
    summary: "Change a domain's access policy (absent fields keep their value)",
    params: IdParamSchema,
    body: DomainAccessUpdateSchema,
    response: json(DomainAccessSchema),
    errors: applied,
  }),
  getServiceAccess: operation('getServiceAccess', {
    summary: "An HTTP service's access: its own policy, its domain's and the one applied",
    params: ServiceAccessParamsSchema,
    response: json(ServiceAccessSchema),
  }),
  updateServiceAccess: operation('updateServiceAccess', {
    summary: "Change an HTTP service's own access policy (mode inherit: drop it, the domain's applies)",
    params: ServiceAccessParamsSchema,
    body: ServiceAccessUpdateSchema,
    response: json(ServiceAccessSchema),
    errors: applied,
  }),
  listShareLinks: operation('listShareLinks', {
    summary: "A page of an HTTP service's share links, newest first",
    params: ServiceAccessParamsSchema,
    query: PageQuerySchema,
    response: json(listOf(ShareLinkSchema)),
  }),
  createShareLink: operation('createShareLink', {
    summary: 'Create a share link (the answer carries its URL, once)',
    params: ServiceAccessParamsSchema,
    body: ShareLinkCreateSchema,
    response: created(ShareLinkCreatedSchema),
    errors: ['bad_request'],
  }),
  revokeShareLink: operation('revokeShareLink', {
    summary: 'Revoke a share link and end the sessions made with it',
    params: ShareLinkParamsSchema,
    response: json(ShareLinkSchema),
    errors: applied,
  }),
  listVisitorSessions: operation('listVisitorSessions', {
    summary: "A page of the visitor sessions of an HTTP service's access policy, newest first",
    params: ServiceAccessParamsSchema,
    query: PageQuerySchema,
    response: json(listOf(VisitorSessionSchema)),
  }),
  revokeVisitorSession: operation('revokeVisitorSession', {
    summary: 'End a visitor session on every gateway',
    params: VisitorSessionParamsSchema,
    response: json(VisitorSessionSchema),
    errors: applied,
  }),

  exportConfig: operation('exportConfig', {
    summary: 'The configuration document of this gateway (no secrets): nodes, tokens, domains, services, policies',
    response: json(ConfigDocumentSchema),
  }),
  planConfig: operation('planConfig', {
    summary: 'Compare a configuration document with the gateway: what applying it would create, change and delete',
    body: ConfigPlanRequestSchema,
    response: json(ConfigPlanSchema),
  }),
  applyConfig: operation('applyConfig', {
    summary:
      'Make the gateway match a configuration document (prune: also delete what it does not name); the plan carried out',
    body: ConfigPlanRequestSchema,
    response: json(ConfigApplyResultSchema),
    errors: ['bad_request', ...applied],
  }),
  listNotificationChannels: operation('listNotificationChannels', {
    summary: 'The notification channels (secrets never returned), with what waits to be delivered to each',
    query: PageQuerySchema,
    response: json(listOf(NotificationChannelSchema)),
  }),
  createNotificationChannel: operation('createNotificationChannel', {
    summary:
      'Add a notification channel (webhook, slack, discord, mattermost, ntfy or email; secrets stored encrypted)',
    body: NotificationChannelCreateSchema,
    response: created(NotificationChannelSchema),
  }),
  testNewNotificationChannel: operation('testNewNotificationChannel', {
    summary: 'Send test: send a test message through a channel not saved yet and say what happened',
    body: NotificationChannelCreateSchema,
    response: json(NotificationTestResultSchema),
  }),
  updateNotificationChannel: operation('updateNotificationChannel', {
    summary: 'Edit a notification channel (absent fields and secrets kept)',
    params: IdParamSchema,
    body: NotificationChannelUpdateSchema,
    response: json(NotificationChannelSchema),
  }),
  deleteNotificationChannel: operation('deleteNotificationChannel', {
    summary: 'Delete a notification channel and what waits to be delivered to it',
    params: IdParamSchema,
    response: noContent,
  }),
  testNotificationChannel: operation('testNotificationChannel', {
    summary: 'Send test: send a test message through a channel (with unsaved edits in the body) and say what happened',
    params: IdParamSchema,
    body: NotificationChannelUpdateSchema,
    response: json(NotificationTestResultSchema),
  }),
  getNotificationSettings: operation('getNotificationSettings', {
    summary: 'The grace period and the certificate warning of every channel',
    response: json(NotificationSettingsSchema),
  }),
  updateNotificationSettings: operation('updateNotificationSettings', {
    summary: 'Change the grace period or the certificate warning',
    body: NotificationSettingsUpdateSchema,
    response: json(NotificationSettingsSchema),
  }),
  listNotificationDeliveries: operation('listNotificationDeliveries', {
    summary: 'A page of messages queued, delivered or given up, newest first (filters: channelId, status)',
    query: NotificationDeliveryQuerySchema,
    response: json(listOf(NotificationDeliverySchema)),
  }),

  agentNode: operation('agentNode', { summary: "The token's node", response: json(NodeSchema), errors: agent }),
  agentConfig: operation('agentConfig', {
    summary: "The token's node with its wg-quick config",
    response: json(AgentConfigSchema),
    errors: agent,
  }),
  agentSetGatewayNetworks: operation('agentSetGatewayNetworks', {
    summary: "Replace the subnets the token's node routes (a node the operator made a gateway; private ranges only)",
    body: AgentGatewayNetworksSchema,
    response: json(NodeSchema),
    errors: [...agent, 'bad_request', ...applied],
  }),
  agentReportLabelProblems: operation('agentReportLabelProblems', {
    summary: "Report what is wrong with the Docker labels of the token's node's containers (replaces the last report)",
    body: LabelProblemsUpdateSchema,
    response: noContent,
    errors: [...agent, 'bad_request'],
  }),
  agentListServices: operation('agentListServices', {
    summary: "A page of the token's node's services of one type",
    params: ServiceTypeParamsSchema,
    query: PageQuerySchema,
    response: json(listOf(AnyServiceSchema)),
    errors: agent,
  }),
  agentCreateHttpService: operation('agentCreateHttpService', {
    summary: 'Publish an HTTP service on a domain of the node',
    body: AgentHttpServiceCreateSchema,
    response: created(HttpServiceSchema),
    errors: [...agent, 'bad_request', ...applied],
  }),
  agentCreateTcpService: operation('agentCreateTcpService', {
    summary: 'Publish a TCP/UDP service of the node',
    body: AgentTcpServiceCreateSchema,
    response: created(TcpServiceSchema),
    errors: [...agent, 'bad_request', ...applied],
  }),
  agentEnableService: operation('agentEnableService', {
    summary: "Serve one of the node's services",
    params: AgentServiceParamsSchema,
    response: json(AnyServiceSchema),
    errors: [...agent, 'bad_request', ...applied],
  }),
  agentDisableService: operation('agentDisableService', {
    summary: "Stop serving one of the node's services",
    params: AgentServiceParamsSchema,
    response: json(AnyServiceSchema),
    errors: [...agent, 'bad_request', ...applied],
  }),
  agentDeleteService: operation('agentDeleteService', {
    summary: "Delete one of the node's services",
    params: AgentServiceParamsSchema,
    response: noContent,
    errors: [...agent, ...applied],
  }),
  agentGetServiceAccess: operation('agentGetServiceAccess', {
    summary: "The access of one of the node's HTTP services",
    params: AgentHttpServiceParamsSchema,
    response: json(ServiceAccessSchema),
    errors: agent,
  }),
  agentUpdateServiceAccess: operation('agentUpdateServiceAccess', {
    summary: "Change the access policy of one of the node's HTTP services: only stricter than its domain's",
    params: AgentHttpServiceParamsSchema,
    body: ServiceAccessUpdateSchema,
    response: json(ServiceAccessSchema),
    errors: [...agent, ...applied],
  }),
  agentListShareLinks: operation('agentListShareLinks', {
    summary: "A page of the share links of one of the node's HTTP services",
    params: AgentHttpServiceParamsSchema,
    query: PageQuerySchema,
    response: json(listOf(ShareLinkSchema)),
    errors: agent,
  }),
  agentCreateShareLink: operation('agentCreateShareLink', {
    summary: "Create a share link of one of the node's HTTP services (its policy must allow share links)",
    params: AgentHttpServiceParamsSchema,
    body: ShareLinkCreateSchema,
    response: created(ShareLinkCreatedSchema),
    errors: [...agent, 'bad_request'],
  }),
  agentRevokeShareLink: operation('agentRevokeShareLink', {
    summary: "Revoke a share link of one of the node's HTTP services",
    params: AgentShareLinkParamsSchema,
    response: json(ShareLinkSchema),
    errors: [...agent, ...applied],
  }),
} as const satisfies { [N in RouteName]: Operation & { name: N } };

export type OperationName = keyof typeof operations;
