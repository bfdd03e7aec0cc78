// The route table (the spec's "The calls it makes") plus the calls the spec leaves implicit (docs/api.md): method, path
// and who may call. `operations.ts` adds each route's schemas; this half imports nothing, so the console's first page
// can name a route without loading zod (a 24 KiB budget item). Paths use `:param` placeholders; `buildPath` fills them.

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * Who may call: `public` anyone; `session` a console session as a bearer header (event streams: `?token=`, which
 * EventSource needs); `cookie` the HttpOnly session cookie only (GET /api/auth/session); `node-token` a node's
 * personal access token as a bearer header (the agent API).
 */
export type AuthKind = 'public' | 'session' | 'cookie' | 'node-token';

export interface Route {
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth: AuthKind;
}

export const routes = {
  health: { method: 'GET', path: '/api/health', auth: 'public' },
  openapi: { method: 'GET', path: '/api/openapi.json', auth: 'public' },
  /** The gateway's public facts the console prints in the connect command (admin session). */
  systemInfo: { method: 'GET', path: '/api/system/info', auth: 'session' },

  login: { method: 'POST', path: '/api/auth/login', auth: 'public' },
  logout: { method: 'POST', path: '/api/auth/logout', auth: 'session' },
  changePassword: { method: 'PATCH', path: '/api/auth/password', auth: 'session' },
  /** The console's way back to its session after a page load: authenticated by the HttpOnly cookie only. */
  session: { method: 'GET', path: '/api/auth/session', auth: 'cookie' },
  /** Two-factor sign-in: the second step of a sign-in, and the admin's enrolment (docs/api.md). */
  loginSecondFactor: { method: 'POST', path: '/api/auth/login/2fa', auth: 'public' },
  twoFactorStatus: { method: 'GET', path: '/api/auth/2fa', auth: 'session' },
  twoFactorSetup: { method: 'POST', path: '/api/auth/2fa/setup', auth: 'session' },
  twoFactorEnable: { method: 'POST', path: '/api/auth/2fa/enable', auth: 'session' },
  twoFactorDisable: { method: 'POST', path: '/api/auth/2fa/disable', auth: 'session' },

  listNodes: { method: 'GET', path: '/api/nodes', auth: 'session' },
  createNode: { method: 'POST', path: '/api/nodes', auth: 'session' },
  nodeStream: { method: 'GET', path: '/api/nodes/stream', auth: 'session' },
  getNode: { method: 'GET', path: '/api/nodes/:id', auth: 'session' },
  updateNode: { method: 'PATCH', path: '/api/nodes/:id', auth: 'session' },
  deleteNode: { method: 'DELETE', path: '/api/nodes/:id', auth: 'session' },
  downloadNodeConfig: { method: 'GET', path: '/api/nodes/:id/download', auth: 'session' },
  enableNode: { method: 'PATCH', path: '/api/nodes/:id/enable', auth: 'session' },
  disableNode: { method: 'PATCH', path: '/api/nodes/:id/disable', auth: 'session' },

  listTokens: { method: 'GET', path: '/api/nodes/:id/pats', auth: 'session' },
  createToken: { method: 'POST', path: '/api/nodes/:id/pats', auth: 'session' },
  revokeToken: { method: 'PATCH', path: '/api/nodes/:id/pats/:tokenId/revoke', auth: 'session' },
  deleteToken: { method: 'DELETE', path: '/api/nodes/:id/pats/:tokenId', auth: 'session' },

  listDomains: { method: 'GET', path: '/api/domains', auth: 'session' },
  createDomain: { method: 'POST', path: '/api/domains', auth: 'session' },
  getDomain: { method: 'GET', path: '/api/domains/:id', auth: 'session' },
  updateDomain: { method: 'PATCH', path: '/api/domains/:id', auth: 'session' },
  deleteDomain: { method: 'DELETE', path: '/api/domains/:id', auth: 'session' },

  /** Beyond the spec: every node's services in one list, filtered, sorted and paged on the server. */
  listServiceOverview: { method: 'GET', path: '/api/services', auth: 'session' },
  listHttpServices: { method: 'GET', path: '/api/services/http', auth: 'session' },
  listTcpServices: { method: 'GET', path: '/api/services/tcp', auth: 'session' },
  /** Beyond the spec: every node's services by name or public address, for the console's "Find service". */
  findServices: { method: 'GET', path: '/api/services/find', auth: 'session' },
  listNodeServices: { method: 'GET', path: '/api/services/:nodeId/:type', auth: 'session' },
  createHttpService: { method: 'POST', path: '/api/services/:nodeId/http', auth: 'session' },
  createTcpService: { method: 'POST', path: '/api/services/:nodeId/tcp', auth: 'session' },
  getService: { method: 'GET', path: '/api/services/:nodeId/:type/:id', auth: 'session' },
  // The spec's `PATCH /api/services/{nodeId}/{type}/{id}`: the body depends on the type, so one route per type
  // (static segments win over `:type`).
  updateHttpService: { method: 'PATCH', path: '/api/services/:nodeId/http/:id', auth: 'session' },
  updateTcpService: { method: 'PATCH', path: '/api/services/:nodeId/tcp/:id', auth: 'session' },
  enableService: { method: 'PATCH', path: '/api/services/:nodeId/:type/:id/enable', auth: 'session' },
  disableService: { method: 'PATCH', path: '/api/services/:nodeId/:type/:id/disable', auth: 'session' },
  deleteService: { method: 'DELETE', path: '/api/services/:nodeId/:type/:id', auth: 'session' },

  logStream: { method: 'GET', path: '/api/logs/stream', auth: 'session' },

  listAudit: { method: 'GET', path: '/api/audit', auth: 'session' },
  auditStream: { method: 'GET', path: '/api/audit/stream', auth: 'session' },
  /** Beyond the spec: the filtered audit log as a CSV file. */
  exportAudit: { method: 'GET', path: '/api/audit/export', auth: 'session' },
  // What the gateway observes (docs/api.md "Observability").
  serviceTraffic: { method: 'GET', path: '/api/services/:nodeId/:type/:id/traffic', auth: 'session' },
  updateHealthCheck: { method: 'PATCH', path: '/api/services/:nodeId/:type/:id/health-check', auth: 'session' },
  serviceFigures: { method: 'GET', path: '/api/observe/services', auth: 'session' },
  observeStream: { method: 'GET', path: '/api/observe/stream', auth: 'session' },
  systemStatus: { method: 'GET', path: '/api/system/status', auth: 'session' },
  /** Beyond the spec: what needs the operator's attention, and the totals of the home page. */
  attention: { method: 'GET', path: '/api/system/attention', auth: 'session' },

  // Who may reach a published service (docs/ACCESS.md): identity providers, policies of domains and HTTP
  // services, share links, visitor sessions.
  listIdentityProviders: { method: 'GET', path: '/api/access/providers', auth: 'session' },
  createIdentityProvider: { method: 'POST', path: '/api/access/providers', auth: 'session' },
  discoverIdentityProvider: { method: 'POST', path: '/api/access/providers/discover', auth: 'session' },
  updateIdentityProvider: { method: 'PATCH', path: '/api/access/providers/:id', auth: 'session' },
  deleteIdentityProvider: { method: 'DELETE', path: '/api/access/providers/:id', auth: 'session' },
  getDomainAccess: { method: 'GET', path: '/api/domains/:id/access', auth: 'session' },
  updateDomainAccess: { method: 'PATCH', path: '/api/domains/:id/access', auth: 'session' },
  getServiceAccess: { method: 'GET', path: '/api/services/:nodeId/http/:id/access', auth: 'session' },
  updateServiceAccess: { method: 'PATCH', path: '/api/services/:nodeId/http/:id/access', auth: 'session' },
  listShareLinks: { method: 'GET', path: '/api/services/:nodeId/http/:id/share-links', auth: 'session' },
  createShareLink: { method: 'POST', path: '/api/services/:nodeId/http/:id/share-links', auth: 'session' },
  revokeShareLink: {
    method: 'PATCH',
    path: '/api/services/:nodeId/http/:id/share-links/:linkId/revoke',
    auth: 'session',
  },
  listVisitorSessions: { method: 'GET', path: '/api/services/:nodeId/http/:id/visitor-sessions', auth: 'session' },
  revokeVisitorSession: {
    method: 'PATCH',
    path: '/api/services/:nodeId/http/:id/visitor-sessions/:sessionId/revoke',
    auth: 'session',
  },

  // Configuration as code (docs/CONFIG-AS-CODE.md): an operator's calls like every other, so authorisation covers
  // them the same way.
  exportConfig: { method: 'GET', path: '/api/config/export', auth: 'session' },
  planConfig: { method: 'POST', path: '/api/config/plan', auth: 'session' },
  applyConfig: { method: 'POST', path: '/api/config/apply', auth: 'session' },

  // Agent API for the `postern` CLI: authenticated by the node's personal access token, scoped to that node.
  agentNode: { method: 'GET', path: '/api/agent/node', auth: 'node-token' },
  agentConfig: { method: 'GET', path: '/api/agent/config', auth: 'node-token' },
  agentSetGatewayNetworks: { method: 'PATCH', path: '/api/agent/node/gateway-networks', auth: 'node-token' },
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

/** The `:name` placeholders of a path, as a union of names. */
export type PathParamName<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParamName<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** What fills a path's placeholders. */
export type PathParams<P extends string> = { [K in PathParamName<P>]: string | number };

export function buildPath(path: string, params: Readonly<Record<string, string | number>> = {}): string {
  return path.replace(/:([A-Za-z]+)/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined) throw new Error(`missing path parameter ${key} for ${path}`);
    return encodeURIComponent(String(value));
  });
}
