// The route table (the spec's "The calls it makes") plus the calls the spec leaves implicit (docs/api.md): method, path
// and who may call. `operations.ts` adds each route's schemas; this half imports nothing at run time, so the console's
// first page can name a route without loading zod (a 24 KiB budget item). Paths use `:param` placeholders;
// `buildPath` fills them.

import { firstPageRoutes, type Route } from './routes-core.js';

// What a route is, `buildPath` and the first screens' routes live in routes-core.ts (the console's first page loads
// that module alone); the table below holds every route.
export * from './routes-core.js';

export const routes = {
  health: { method: 'GET', path: '/api/health', auth: 'public' },
  openapi: { method: 'GET', path: '/api/openapi.json', auth: 'public' },
  /** The gateway's public facts the console prints in the connect command (admin session). */
  systemInfo: { method: 'GET', path: '/api/system/info', auth: 'session', permission: 'read' },

  login: firstPageRoutes.login,
  logout: firstPageRoutes.logout,
  changePassword: { method: 'PATCH', path: '/api/auth/password', auth: 'session', permission: 'self' },
  /** The console's way back to its session after a page load: authenticated by the HttpOnly cookie only. */
  session: firstPageRoutes.session,
  /** Two-factor sign-in: the second step of a sign-in, and the admin's enrolment (docs/api.md). */
  loginSecondFactor: firstPageRoutes.loginSecondFactor,
  twoFactorStatus: { method: 'GET', path: '/api/auth/2fa', auth: 'session', permission: 'self' },
  twoFactorSetup: { method: 'POST', path: '/api/auth/2fa/setup', auth: 'session', permission: 'self' },
  twoFactorEnable: { method: 'POST', path: '/api/auth/2fa/enable', auth: 'session', permission: 'self' },
  twoFactorDisable: { method: 'POST', path: '/api/auth/2fa/disable', auth: 'session', permission: 'self' },
  /** Several operators (docs/api.md "Accounts and roles"): who is signed in, and signing in through a provider. */
  currentAccount: firstPageRoutes.currentAccount,
  consoleProviders: firstPageRoutes.consoleProviders,
  ssoStart: firstPageRoutes.ssoStart,
  ssoFinish: firstPageRoutes.ssoFinish,
  linkIdentity: { method: 'POST', path: '/api/auth/identity', auth: 'session', permission: 'self' },
  /** An invite link's holder: what it is for, and taking it (the one-time token is the credential). */
  inviteInfo: { method: 'POST', path: '/api/auth/invite', auth: 'public' },
  acceptInvite: { method: 'POST', path: '/api/auth/invite/accept', auth: 'public' },

  listAccounts: { method: 'GET', path: '/api/accounts', auth: 'session', permission: 'accounts' },
  updateAccount: { method: 'PATCH', path: '/api/accounts/:id', auth: 'session', permission: 'accounts' },
  deleteAccount: { method: 'DELETE', path: '/api/accounts/:id', auth: 'session', permission: 'accounts' },
  resetAccountTwoFactor: {
    method: 'PATCH',
    path: '/api/accounts/:id/reset-two-factor',
    auth: 'session',
    permission: 'accounts',
  },
  unlinkAccountIdentity: {
    method: 'DELETE',
    path: '/api/accounts/:id/identity',
    auth: 'session',
    permission: 'accounts',
  },
  listInvites: { method: 'GET', path: '/api/invites', auth: 'session', permission: 'accounts' },
  createInvite: { method: 'POST', path: '/api/invites', auth: 'session', permission: 'accounts' },
  revokeInvite: { method: 'DELETE', path: '/api/invites/:id', auth: 'session', permission: 'accounts' },

  listNodes: firstPageRoutes.listNodes,
  createNode: { method: 'POST', path: '/api/nodes', auth: 'session', permission: 'operate' },
  nodeStream: { method: 'GET', path: '/api/nodes/stream', auth: 'session', permission: 'read' },
  getNode: { method: 'GET', path: '/api/nodes/:id', auth: 'session', permission: 'read' },
  updateNode: { method: 'PATCH', path: '/api/nodes/:id', auth: 'session', permission: 'operate' },
  deleteNode: { method: 'DELETE', path: '/api/nodes/:id', auth: 'session', permission: 'operate' },
  downloadNodeConfig: { method: 'GET', path: '/api/nodes/:id/download', auth: 'session', permission: 'read-secrets' },
  enableNode: { method: 'PATCH', path: '/api/nodes/:id/enable', auth: 'session', permission: 'operate' },
  disableNode: { method: 'PATCH', path: '/api/nodes/:id/disable', auth: 'session', permission: 'operate' },

  getNodeLabelProblems: {
    method: 'GET',
    path: '/api/nodes/:id/label-problems',
    auth: 'session',
    permission: 'read',
  },

  listTokens: { method: 'GET', path: '/api/nodes/:id/pats', auth: 'session', permission: 'read-secrets' },
  createToken: { method: 'POST', path: '/api/nodes/:id/pats', auth: 'session', permission: 'operate' },
  revokeToken: { method: 'PATCH', path: '/api/nodes/:id/pats/:tokenId/revoke', auth: 'session', permission: 'operate' },
  deleteToken: { method: 'DELETE', path: '/api/nodes/:id/pats/:tokenId', auth: 'session', permission: 'operate' },

  listDomains: { method: 'GET', path: '/api/domains', auth: 'session', permission: 'read' },
  createDomain: { method: 'POST', path: '/api/domains', auth: 'session', permission: 'operate' },
  getDomain: { method: 'GET', path: '/api/domains/:id', auth: 'session', permission: 'read' },
  updateDomain: { method: 'PATCH', path: '/api/domains/:id', auth: 'session', permission: 'operate' },
  deleteDomain: { method: 'DELETE', path: '/api/domains/:id', auth: 'session', permission: 'operate' },

  /** Beyond the spec: every node's services in one list, filtered, sorted and paged on the server. */
  listServiceOverview: { method: 'GET', path: '/api/services', auth: 'session', permission: 'read' },
  listHttpServices: { method: 'GET', path: '/api/services/http', auth: 'session', permission: 'read' },
  listTcpServices: { method: 'GET', path: '/api/services/tcp', auth: 'session', permission: 'read' },
  /** Beyond the spec: every node's services by name or public address, for the console's "Find service". */
  findServices: { method: 'GET', path: '/api/services/find', auth: 'session', permission: 'read' },
  listNodeServices: { method: 'GET', path: '/api/services/:nodeId/:type', auth: 'session', permission: 'read' },
  createHttpService: { method: 'POST', path: '/api/services/:nodeId/http', auth: 'session', permission: 'operate' },
  createTcpService: { method: 'POST', path: '/api/services/:nodeId/tcp', auth: 'session', permission: 'operate' },
  getService: { method: 'GET', path: '/api/services/:nodeId/:type/:id', auth: 'session', permission: 'read' },
  // The spec's `PATCH /api/services/{nodeId}/{type}/{id}`: the body depends on the type, so one route per type
  // (static segments win over `:type`).
  updateHttpService: {
    method: 'PATCH',
    path: '/api/services/:nodeId/http/:id',
    auth: 'session',
    permission: 'operate',
  },
  updateTcpService: { method: 'PATCH', path: '/api/services/:nodeId/tcp/:id', auth: 'session', permission: 'operate' },
  enableService: {
    method: 'PATCH',
    path: '/api/services/:nodeId/:type/:id/enable',
    auth: 'session',
    permission: 'operate',
  },
  disableService: {
    method: 'PATCH',
    path: '/api/services/:nodeId/:type/:id/disable',
    auth: 'session',
    permission: 'operate',
  },
  deleteService: { method: 'DELETE', path: '/api/services/:nodeId/:type/:id', auth: 'session', permission: 'operate' },

  logStream: { method: 'GET', path: '/api/logs/stream', auth: 'session', permission: 'read' },

  listAudit: { method: 'GET', path: '/api/audit', auth: 'session', permission: 'read' },
  auditStream: { method: 'GET', path: '/api/audit/stream', auth: 'session', permission: 'read' },
  /** Beyond the spec: the filtered audit log as a CSV file. */
  exportAudit: { method: 'GET', path: '/api/audit/export', auth: 'session', permission: 'read' },
  // What the gateway observes (docs/api.md "Observability").
  serviceTraffic: {
    method: 'GET',
    path: '/api/services/:nodeId/:type/:id/traffic',
    auth: 'session',
    permission: 'read',
  },
  updateHealthCheck: {
    method: 'PATCH',
    path: '/api/services/:nodeId/:type/:id/health-check',
    auth: 'session',
    permission: 'operate',
  },
  serviceFigures: { method: 'GET', path: '/api/observe/services', auth: 'session', permission: 'read' },
  observeStream: firstPageRoutes.observeStream,
  systemStatus: { method: 'GET', path: '/api/system/status', auth: 'session', permission: 'read' },
  /** Beyond the spec: what needs the operator's attention, and the totals of the home page. */
  attention: firstPageRoutes.attention,

  // Who may reach a published service (docs/ACCESS.md): identity providers, policies of domains and HTTP
  // services, share links, visitor sessions.
  listIdentityProviders: { method: 'GET', path: '/api/access/providers', auth: 'session', permission: 'read' },
  createIdentityProvider: { method: 'POST', path: '/api/access/providers', auth: 'session', permission: 'settings' },
  discoverIdentityProvider: {
    method: 'POST',
    path: '/api/access/providers/discover',
    auth: 'session',
    permission: 'settings',
  },
  updateIdentityProvider: {
    method: 'PATCH',
    path: '/api/access/providers/:id',
    auth: 'session',
    permission: 'settings',
  },
  deleteIdentityProvider: {
    method: 'DELETE',
    path: '/api/access/providers/:id',
    auth: 'session',
    permission: 'settings',
  },
  /** Whether a provider signs accounts in to the console, and the roles its groups get: the owners' decision. */
  updateProviderConsoleSignIn: {
    method: 'PATCH',
    path: '/api/access/providers/:id/console',
    auth: 'session',
    permission: 'accounts',
  },
  getDomainAccess: { method: 'GET', path: '/api/domains/:id/access', auth: 'session', permission: 'read' },
  updateDomainAccess: { method: 'PATCH', path: '/api/domains/:id/access', auth: 'session', permission: 'operate' },
  getServiceAccess: {
    method: 'GET',
    path: '/api/services/:nodeId/http/:id/access',
    auth: 'session',
    permission: 'read',
  },
  updateServiceAccess: {
    method: 'PATCH',
    path: '/api/services/:nodeId/http/:id/access',
    auth: 'session',
    permission: 'operate',
  },
  listShareLinks: {
    method: 'GET',
    path: '/api/services/:nodeId/http/:id/share-links',
    auth: 'session',
    permission: 'read',
  },
  createShareLink: {
    method: 'POST',
    path: '/api/services/:nodeId/http/:id/share-links',
    auth: 'session',
    permission: 'operate',
  },
  /** Certificates for real setups (docs/api.md "Certificates"): DNS providers, CAs, the certificates view. */
  listDnsProviders: { method: 'GET', path: '/api/certificates/dns-providers', auth: 'session', permission: 'read' },
  createDnsProvider: {
    method: 'POST',
    path: '/api/certificates/dns-providers',
    auth: 'session',
    permission: 'settings',
  },
  updateDnsProvider: {
    method: 'PATCH',
    path: '/api/certificates/dns-providers/:id',
    auth: 'session',
    permission: 'settings',
  },
  deleteDnsProvider: {
    method: 'DELETE',
    path: '/api/certificates/dns-providers/:id',
    auth: 'session',
    permission: 'settings',
  },
  listAcmeCas: { method: 'GET', path: '/api/certificates/authorities', auth: 'session', permission: 'read' },
  createAcmeCa: { method: 'POST', path: '/api/certificates/authorities', auth: 'session', permission: 'settings' },
  updateAcmeCa: { method: 'PATCH', path: '/api/certificates/authorities/:id', auth: 'session', permission: 'settings' },
  deleteAcmeCa: {
    method: 'DELETE',
    path: '/api/certificates/authorities/:id',
    auth: 'session',
    permission: 'settings',
  },
  listCertificates: { method: 'GET', path: '/api/certificates', auth: 'session', permission: 'read' },
  renewCertificate: { method: 'POST', path: '/api/certificates/:id/renew', auth: 'session', permission: 'operate' },
  uploadCertificate: { method: 'POST', path: '/api/domains/:id/certificate', auth: 'session', permission: 'operate' },
  revokeShareLink: {
    method: 'PATCH',
    path: '/api/services/:nodeId/http/:id/share-links/:linkId/revoke',
    auth: 'session',
    permission: 'operate',
  },
  listVisitorSessions: {
    method: 'GET',
    path: '/api/services/:nodeId/http/:id/visitor-sessions',
    auth: 'session',
    permission: 'read',
  },
  revokeVisitorSession: {
    method: 'PATCH',
    path: '/api/services/:nodeId/http/:id/visitor-sessions/:sessionId/revoke',
    auth: 'session',
    permission: 'operate',
  },

  // Configuration as code (docs/CONFIG-AS-CODE.md): an operator's calls like every other, so authorisation covers
  // them the same way.
  // A document holds no secret: reading and planning are reads; applying may change providers (settings).
  exportConfig: { method: 'GET', path: '/api/config/export', auth: 'session', permission: 'read' },
  planConfig: { method: 'POST', path: '/api/config/plan', auth: 'session', permission: 'read' },
  applyConfig: { method: 'POST', path: '/api/config/apply', auth: 'session', permission: 'settings' },
  // Notifications (docs/api.md "Notifications"): channels, their test, the grace period, deliveries. Reading them
  // shows no secret; changing or testing one is a setting (a test sends a message from the gateway).
  listNotificationChannels: { method: 'GET', path: '/api/notifications/channels', auth: 'session', permission: 'read' },
  createNotificationChannel: {
    method: 'POST',
    path: '/api/notifications/channels',
    auth: 'session',
    permission: 'settings',
  },
  testNewNotificationChannel: {
    method: 'POST',
    path: '/api/notifications/channels/test',
    auth: 'session',
    permission: 'settings',
  },
  updateNotificationChannel: {
    method: 'PATCH',
    path: '/api/notifications/channels/:id',
    auth: 'session',
    permission: 'settings',
  },
  deleteNotificationChannel: {
    method: 'DELETE',
    path: '/api/notifications/channels/:id',
    auth: 'session',
    permission: 'settings',
  },
  testNotificationChannel: {
    method: 'POST',
    path: '/api/notifications/channels/:id/test',
    auth: 'session',
    permission: 'settings',
  },
  getNotificationSettings: { method: 'GET', path: '/api/notifications/settings', auth: 'session', permission: 'read' },
  updateNotificationSettings: {
    method: 'PATCH',
    path: '/api/notifications/settings',
    auth: 'session',
    permission: 'settings',
  },
  listNotificationDeliveries: {
    method: 'GET',
    path: '/api/notifications/deliveries',
    auth: 'session',
    permission: 'read',
  },

  // Agent API for the `postern` CLI: authenticated by the node's personal access token, scoped to that node.
  agentNode: { method: 'GET', path: '/api/agent/node', auth: 'node-token' },
  agentConfig: { method: 'GET', path: '/api/agent/config', auth: 'node-token' },
  agentSetGatewayNetworks: { method: 'PATCH', path: '/api/agent/node/gateway-networks', auth: 'node-token' },
  agentReportLabelProblems: { method: 'PATCH', path: '/api/agent/node/label-problems', auth: 'node-token' },
  agentListServices: { method: 'GET', path: '/api/agent/services/:type', auth: 'node-token' },
  agentCreateHttpService: { method: 'POST', path: '/api/agent/services/http', auth: 'node-token' },
  agentCreateTcpService: { method: 'POST', path: '/api/agent/services/tcp', auth: 'node-token' },
  agentEnableService: { method: 'PATCH', path: '/api/agent/services/:type/:id/enable', auth: 'node-token' },
  agentDisableService: { method: 'PATCH', path: '/api/agent/services/:type/:id/disable', auth: 'node-token' },
  agentDeleteService: { method: 'DELETE', path: '/api/agent/services/:type/:id', auth: 'node-token' },
  // A node's token on its own HTTP services' access: only stricter than the domain's policy (docs/ACCESS.md).
  agentGetServiceAccess: { method: 'GET', path: '/api/agent/services/http/:id/access', auth: 'node-token' },
  agentUpdateServiceAccess: { method: 'PATCH', path: '/api/agent/services/http/:id/access', auth: 'node-token' },
  agentListShareLinks: { method: 'GET', path: '/api/agent/services/http/:id/share-links', auth: 'node-token' },
  agentCreateShareLink: { method: 'POST', path: '/api/agent/services/http/:id/share-links', auth: 'node-token' },
  agentRevokeShareLink: {
    method: 'PATCH',
    path: '/api/agent/services/http/:id/share-links/:linkId/revoke',
    auth: 'node-token',
  },
} as const satisfies Record<string, Route>;

export type RouteName = keyof typeof routes;
