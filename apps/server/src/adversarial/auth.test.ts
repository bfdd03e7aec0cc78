import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  can,
  forbiddenMessage,
  formatPat,
  isRoleRefusal,
  ROLES,
  routes,
  type Role,
  type RouteName,
} from '@postern/contract';
import { eq } from 'drizzle-orm';
import { accessPolicies, accessSessions } from '../db/schema.js';
import { createVisitorSession } from '../modules/access/visitor-sessions.js';
import { createSession } from '../modules/auth/sessions.js';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';
import { connectSse } from '../test/sse-client.js';

// What holds already, kept holding: every route of the contract × every kind of caller, and forged tokens.
// Callers: nobody; the admin's session cookie alone (what a forged cross-site request carries); node A's access
// token (A owns the resources the URL names); node B's access token; the admin's session as a bearer header.
// Each route gets fresh resources, and the caller expected to succeed goes last, so a DELETE cannot hide a 401.
// Roles (docs/api.md "Accounts and roles"): every session route is tried first by a session of each role its permission
// (routes.ts) leaves out, which must get the policy's 403 before validation; then the least privileged role it allows
// makes the call that succeeds ('admin' below), so a refused write that had changed something would show in that call's
// answer. Node scope (docs/api.md "Node scope"): before them, an operator limited to a node of its own tries every
// route an operator may use, on A's things: a 404 where the route names node A, the policy's 403 elsewhere, unless the
// route answers for a scope itself (SCOPE_AWARE): so a new route is refused to scoped accounts until someone decides.

type Caller = 'none' | 'cookie' | 'own' | 'other' | 'admin';

interface World {
  session: string;
  a: { id: number; token: string };
  b: { id: number; token: string };
  serviceId: number;
  tcpServiceId: number;
  /** A service A's token created: one its token may delete (the operator's it may not). */
  agentServiceId: number;
  tokenId: number;
  domain: { id: number; domain: string };
  n: number;
  /** An HTTP service of A on a domain whose policy is protected (password, share links). */
  access: { serviceId: number; domainId: number; linkId: number; sessionId: number; providerId: number };
  /** Several operators: another account (a viewer) and an invite not taken yet. */
  accounts: { accountId: number; inviteId: number };
  /** A fresh session of an account of each role (the bootstrap admin is the owner: `session`). */
  roles: Record<Role, string>;
  /** The session the caller expected to succeed ('admin') uses. */
  actAs: string;
  /** A notification channel (only for the notification routes). */
  channelId: number;
}

interface Call {
  url: string;
  body?: object;
}

interface Row {
  call: (w: World, caller: Caller) => Call;
  /** Status per caller, in the order they are tried. */
  expected: [Caller, number][];
  /** Extra checks on the answer a caller got (B's token must only ever see B). */
  check?: Partial<Record<Caller, (body: unknown, w: World) => void>>;
}

const consoleRoute = (status: number, call: Row['call']): Row => ({
  call,
  expected: [
    ['none', 401],
    ['cookie', 401],
    ['own', 401],
    ['other', 401],
    ['admin', status],
  ],
});
const publicRoute = (status: number, call: Row['call']): Row => ({
  call,
  expected: (['none', 'cookie', 'own', 'other', 'admin'] as const).map((caller) => [caller, status]),
});
const agentRoute = (status: number, otherStatus: number, call: Row['call'], check?: Row['check']): Row => ({
  call,
  expected: [
    ['none', 401],
    ['cookie', 401],
    ['admin', 401],
    ['other', otherStatus],
    ['own', status],
  ],
  ...(check ? { check } : {}),
});
const isOfNode = (nodeId: number) => (body: unknown) => expect((body as { nodeId: number }).nodeId).toBe(nodeId);

const matrix: Record<RouteName, Row> = {
  health: publicRoute(200, () => ({ url: '/api/health' })),
  openapi: publicRoute(200, () => ({ url: '/api/openapi.json' })),
  systemInfo: consoleRoute(200, () => ({ url: '/api/system/info' })),
  login: publicRoute(200, () => ({
    url: '/api/auth/login',
    body: { username: 'admin', password: 'correct-horse-battery' },
  })),
  logout: consoleRoute(204, () => ({ url: '/api/auth/logout' })),
  // A wrong current password (422) shows the call got past authentication without changing anything.
  changePassword: consoleRoute(422, () => ({
    url: '/api/auth/password',
    body: { currentPassword: 'not-the-password', newPassword: 'whatever-new-one' },
  })),
  session: {
    call: () => ({ url: '/api/auth/session' }),
    expected: [
      ['none', 401],
      ['own', 401],
      ['other', 401],
      ['admin', 401],
      ['cookie', 200],
    ],
  },
  // Public: a challenge that names no sign-in is refused to everyone alike.
  loginSecondFactor: publicRoute(401, () => ({
    url: '/api/auth/login/2fa',
    body: { challenge: 'no-such-challenge', code: '123456' },
  })),
  twoFactorStatus: consoleRoute(200, () => ({ url: '/api/auth/2fa' })),
  // Wrong password / no setup started / not on: past authentication, nothing changed.
  twoFactorSetup: consoleRoute(422, () => ({ url: '/api/auth/2fa/setup', body: { password: 'not-the-password' } })),
  twoFactorEnable: consoleRoute(400, () => ({ url: '/api/auth/2fa/enable', body: { code: '123456' } })),
  twoFactorDisable: consoleRoute(400, () => ({
    url: '/api/auth/2fa/disable',
    body: { password: 'not-the-password', code: '123456' },
  })),

  // Several operators (docs/api.md "Accounts and roles"): one's own account, signing in through a provider, invites,
  // and the owners' calls.
  currentAccount: consoleRoute(200, () => ({ url: '/api/auth/account' })),
  consoleProviders: publicRoute(200, () => ({ url: '/api/auth/providers' })),
  // No provider signs anyone in to the console here: refused alike, whoever asks.
  ssoStart: publicRoute(400, () => ({ url: '/api/auth/sso/start', body: { providerId: 999_999 } })),
  // No state cookie of a sign-in started by this browser.
  ssoFinish: publicRoute(401, () => ({ url: '/api/auth/sso/finish', body: { query: '?code=x&state=y' } })),
  linkIdentity: consoleRoute(400, () => ({
    url: '/api/auth/identity',
    body: { providerId: 999_999, password: 'not-the-password' },
  })),
  inviteInfo: publicRoute(400, () => ({ url: '/api/auth/invite', body: { token: 'no-such-invite' } })),
  acceptInvite: publicRoute(400, () => ({
    url: '/api/auth/invite/accept',
    body: { token: 'no-such-invite', password: 'a-long-enough-password' },
  })),
  listAccounts: consoleRoute(200, () => ({ url: '/api/accounts' })),
  updateAccount: consoleRoute(200, (w) => ({
    url: `/api/accounts/${w.accounts.accountId}`,
    body: { role: 'operator' },
  })),
  deleteAccount: consoleRoute(204, (w) => ({ url: `/api/accounts/${w.accounts.accountId}` })),
  // Its two-factor sign-in is off, and it has no identity bound: past authentication, nothing changed.
  resetAccountTwoFactor: consoleRoute(400, (w) => ({ url: `/api/accounts/${w.accounts.accountId}/reset-two-factor` })),
  unlinkAccountIdentity: consoleRoute(400, (w) => ({ url: `/api/accounts/${w.accounts.accountId}/identity` })),
  listInvites: consoleRoute(200, () => ({ url: '/api/invites' })),
  createInvite: consoleRoute(201, (w) => ({
    url: '/api/invites',
    body: { username: `invited-${w.n}`, role: 'viewer' },
  })),
  revokeInvite: consoleRoute(204, (w) => ({ url: `/api/invites/${w.accounts.inviteId}` })),
  updateProviderConsoleSignIn: consoleRoute(200, (w) => ({
    url: `/api/access/providers/${w.access.providerId}/console`,
    body: { consoleSignIn: false },
  })),

  listNodes: consoleRoute(200, () => ({ url: '/api/nodes' })),
  createNode: consoleRoute(201, (w) => ({ url: '/api/nodes', body: { name: `created-${w.n}` } })),
  nodeStream: consoleRoute(200, (w) => ({ url: `/api/nodes/stream?id=${w.a.id}` })),
  getNode: consoleRoute(200, (w) => ({ url: `/api/nodes/${w.a.id}` })),
  getNodeLabelProblems: consoleRoute(200, (w) => ({ url: `/api/nodes/${w.a.id}/label-problems` })),
  updateNode: consoleRoute(200, (w) => ({ url: `/api/nodes/${w.a.id}`, body: { name: `renamed-${w.n}` } })),
  deleteNode: consoleRoute(204, (w) => ({ url: `/api/nodes/${w.a.id}` })),
  downloadNodeConfig: consoleRoute(200, (w) => ({ url: `/api/nodes/${w.a.id}/download` })),
  enableNode: consoleRoute(200, (w) => ({ url: `/api/nodes/${w.a.id}/enable` })),
  disableNode: consoleRoute(200, (w) => ({ url: `/api/nodes/${w.a.id}/disable` })),

  listTokens: consoleRoute(200, (w) => ({ url: `/api/nodes/${w.a.id}/pats` })),
  createToken: consoleRoute(201, (w) => ({ url: `/api/nodes/${w.a.id}/pats`, body: { name: 'more' } })),
  revokeToken: consoleRoute(200, (w) => ({ url: `/api/nodes/${w.a.id}/pats/${w.tokenId}/revoke` })),
  deleteToken: consoleRoute(204, (w) => ({ url: `/api/nodes/${w.a.id}/pats/${w.tokenId}` })),

  listDomains: consoleRoute(200, () => ({ url: '/api/domains' })),
  createDomain: consoleRoute(201, (w) => ({ url: '/api/domains', body: { domain: `new-${w.n}.example.test` } })),
  getDomain: consoleRoute(200, (w) => ({ url: `/api/domains/${w.domain.id}` })),
  updateDomain: consoleRoute(200, (w) => ({
    url: `/api/domains/${w.domain.id}`,
    body: { domain: `moved-${w.n}.example.test` },
  })),
  deleteDomain: consoleRoute(204, (w) => ({ url: `/api/domains/${w.domain.id}` })),

  listServiceOverview: consoleRoute(200, () => ({ url: '/api/services?status=public&sort=node' })),
  listHttpServices: consoleRoute(200, () => ({ url: '/api/services/http' })),
  listTcpServices: consoleRoute(200, () => ({ url: '/api/services/tcp' })),
  findServices: consoleRoute(200, () => ({ url: '/api/services/find?q=a' })),
  listNodeServices: consoleRoute(200, (w) => ({ url: `/api/services/${w.a.id}/http` })),
  createHttpService: consoleRoute(201, (w) => ({
    url: `/api/services/${w.a.id}/http`,
    body: { name: 'web', pathLocation: `/admin-made-${w.n}`, backendPort: 80 },
  })),
  createTcpService: consoleRoute(201, (w) => ({
    url: `/api/services/${w.a.id}/tcp`,
    body: { name: 'mqtt', backendPort: 1883 },
  })),
  getService: consoleRoute(200, (w) => ({ url: `/api/services/${w.a.id}/http/${w.serviceId}` })),
  updateHttpService: consoleRoute(200, (w) => ({
    url: `/api/services/${w.a.id}/http/${w.serviceId}`,
    body: { name: 'renamed' },
  })),
  updateTcpService: consoleRoute(200, (w) => ({
    url: `/api/services/${w.a.id}/tcp/${w.tcpServiceId}`,
    body: { name: 'renamed' },
  })),
  enableService: consoleRoute(200, (w) => ({ url: `/api/services/${w.a.id}/http/${w.serviceId}/enable` })),
  disableService: consoleRoute(200, (w) => ({ url: `/api/services/${w.a.id}/http/${w.serviceId}/disable` })),
  deleteService: consoleRoute(204, (w) => ({ url: `/api/services/${w.a.id}/http/${w.serviceId}` })),

  logStream: consoleRoute(200, (w) => ({ url: `/api/logs/stream?domain=${w.domain.domain}` })),
  serviceTraffic: consoleRoute(200, (w) => ({ url: `/api/services/${w.a.id}/http/${w.serviceId}/traffic` })),
  updateHealthCheck: consoleRoute(200, (w) => ({
    url: `/api/services/${w.a.id}/http/${w.serviceId}/health-check`,
    body: { intervalSeconds: 10 },
  })),
  serviceFigures: consoleRoute(200, () => ({ url: '/api/observe/services' })),
  observeStream: consoleRoute(200, () => ({ url: '/api/observe/stream?format=events' })),
  systemStatus: consoleRoute(200, () => ({ url: '/api/system/status' })),
  attention: consoleRoute(200, () => ({ url: '/api/system/attention' })),

  listAudit: consoleRoute(200, (w) => ({ url: `/api/audit?node=${w.a.id}` })),
  auditStream: consoleRoute(200, (w) => ({ url: `/api/audit/stream?node=${w.a.id}` })),
  exportAudit: consoleRoute(200, (w) => ({ url: `/api/audit/export?node=${w.a.id}` })),

  // Configuration as code: the operator's calls like any other (a plan and an apply of an empty document change
  // nothing).
  exportConfig: consoleRoute(200, () => ({ url: '/api/config/export' })),
  planConfig: consoleRoute(200, () => ({ url: '/api/config/plan', body: { document: { version: 1 } } })),
  applyConfig: consoleRoute(200, () => ({ url: '/api/config/apply', body: { document: { version: 1 } } })),

  // Who may reach a published service (docs/ACCESS.md): the operator's calls, and a token's on its own services only.
  listIdentityProviders: consoleRoute(200, () => ({ url: '/api/access/providers' })),
  createIdentityProvider: consoleRoute(201, (w) => ({
    url: '/api/access/providers',
    body: { name: `idp-new-${w.n}`, issuer: 'https://idp.example.test', clientId: 'postern' },
  })),
  // Discovery of an issuer nothing answers on (loopback, port 1): past authentication, 422 on the issuer.
  discoverIdentityProvider: consoleRoute(422, () => ({
    url: '/api/access/providers/discover',
    body: { issuer: 'https://127.0.0.1:1' },
  })),
  updateIdentityProvider: consoleRoute(200, (w) => ({
    url: `/api/access/providers/${w.access.providerId}`,
    body: { name: `idp-renamed-${w.n}` },
  })),
  deleteIdentityProvider: consoleRoute(204, (w) => ({ url: `/api/access/providers/${w.access.providerId}` })),
  // Certificates (docs/api.md "Certificates"): the admin's alone. Ids that do not exist answer the admin 404 (past
  // authentication, nothing changed); a self-signed domain cannot be renewed (400); a body that is no PEM is 422.
  listDnsProviders: consoleRoute(200, () => ({ url: '/api/certificates/dns-providers' })),
  createDnsProvider: consoleRoute(201, (w) => ({
    url: '/api/certificates/dns-providers',
    body: { name: `dns-${w.n}`, kind: 'cloudflare', secret: 'cf-token' },
  })),
  updateDnsProvider: consoleRoute(404, () => ({ url: '/api/certificates/dns-providers/999999', body: { name: 'x' } })),
  deleteDnsProvider: consoleRoute(404, () => ({ url: '/api/certificates/dns-providers/999999' })),
  listAcmeCas: consoleRoute(200, () => ({ url: '/api/certificates/authorities' })),
  createAcmeCa: consoleRoute(201, (w) => ({
    url: '/api/certificates/authorities',
    body: { name: `ca-${w.n}`, directoryUrl: 'https://acme.example.test/directory' },
  })),
  updateAcmeCa: consoleRoute(404, () => ({ url: '/api/certificates/authorities/999999', body: { name: 'x' } })),
  deleteAcmeCa: consoleRoute(404, () => ({ url: '/api/certificates/authorities/999999' })),
  listCertificates: consoleRoute(200, () => ({ url: '/api/certificates' })),
  renewCertificate: consoleRoute(400, (w) => ({ url: `/api/certificates/${w.domain.id}/renew` })),
  uploadCertificate: consoleRoute(422, (w) => ({
    url: `/api/domains/${w.domain.id}/certificate`,
    body: { certificate: 'not a certificate', privateKey: 'not a key' },
  })),
  // Notifications (docs/api.md "Notifications"): reading is `read`, the rest `settings`; a test to a loopback or
  // metadata address is refused before anything is sent (422), whoever asks.
  listNotificationChannels: consoleRoute(200, () => ({ url: '/api/notifications/channels' })),
  createNotificationChannel: consoleRoute(201, (w) => ({
    url: '/api/notifications/channels',
    body: { kind: 'slack', name: `created-${w.n}`, url: 'https://hooks.example.test/services/T0/B0/x' },
  })),
  testNewNotificationChannel: consoleRoute(422, () => ({
    url: '/api/notifications/channels/test',
    body: { kind: 'discord', name: 'draft', url: 'http://169.254.169.254/latest/meta-data/' },
  })),
  updateNotificationChannel: consoleRoute(200, (w) => ({
    url: `/api/notifications/channels/${w.channelId}`,
    body: { enabled: false },
  })),
  deleteNotificationChannel: consoleRoute(204, (w) => ({ url: `/api/notifications/channels/${w.channelId}` })),
  testNotificationChannel: consoleRoute(422, (w) => ({
    url: `/api/notifications/channels/${w.channelId}/test`,
    body: { url: 'http://127.0.0.2:9/' },
  })),
  getNotificationSettings: consoleRoute(200, () => ({ url: '/api/notifications/settings' })),
  updateNotificationSettings: consoleRoute(200, () => ({
    url: '/api/notifications/settings',
    body: { graceSeconds: 60 },
  })),
  listNotificationDeliveries: consoleRoute(200, () => ({ url: '/api/notifications/deliveries?status=failed' })),
  getDomainAccess: consoleRoute(200, (w) => ({ url: `/api/domains/${w.access.domainId}/access` })),
  updateDomainAccess: consoleRoute(200, (w) => ({
    url: `/api/domains/${w.access.domainId}/access`,
    body: { sessionSeconds: 3600 },
  })),
  getServiceAccess: consoleRoute(200, (w) => ({ url: `/api/services/${w.a.id}/http/${w.access.serviceId}/access` })),
  updateServiceAccess: consoleRoute(200, (w) => ({
    url: `/api/services/${w.a.id}/http/${w.access.serviceId}/access`,
    body: { mode: 'protected', shareLinks: true, sessionSeconds: 600 },
  })),
  listShareLinks: consoleRoute(200, (w) => ({ url: `/api/services/${w.a.id}/http/${w.access.serviceId}/share-links` })),
  createShareLink: consoleRoute(201, (w) => ({
    url: `/api/services/${w.a.id}/http/${w.access.serviceId}/share-links`,
    body: { name: 'for a friend', ttl: 3600 },
  })),
  revokeShareLink: consoleRoute(200, (w) => ({
    url: `/api/services/${w.a.id}/http/${w.access.serviceId}/share-links/${w.access.linkId}/revoke`,
  })),
  listVisitorSessions: consoleRoute(200, (w) => ({
    url: `/api/services/${w.a.id}/http/${w.access.serviceId}/visitor-sessions`,
  })),
  revokeVisitorSession: consoleRoute(200, (w) => ({
    url: `/api/services/${w.a.id}/http/${w.access.serviceId}/visitor-sessions/${w.access.sessionId}/revoke`,
  })),
  agentGetServiceAccess: agentRoute(200, 404, (w) => ({
    url: `/api/agent/services/http/${w.access.serviceId}/access`,
  })),
  // Stricter than the domain's (no password of its own, a shorter session): allowed for the owner.
  agentUpdateServiceAccess: agentRoute(200, 404, (w) => ({
    url: `/api/agent/services/http/${w.access.serviceId}/access`,
    body: { mode: 'protected', shareLinks: true, sessionSeconds: 600 },
  })),
  agentListShareLinks: agentRoute(200, 404, (w) => ({
    url: `/api/agent/services/http/${w.access.serviceId}/share-links`,
  })),
  agentCreateShareLink: agentRoute(
    201,
    404,
    (w) => ({ url: `/api/agent/services/http/${w.access.serviceId}/share-links`, body: { name: 'link' } }),
    { own: (body, w) => expect((body as { serviceId: number }).serviceId).toBe(w.access.serviceId) },
  ),
  agentRevokeShareLink: agentRoute(200, 404, (w) => ({
    url: `/api/agent/services/http/${w.access.serviceId}/share-links/${w.access.linkId}/revoke`,
  })),

  agentNode: agentRoute(200, 200, () => ({ url: '/api/agent/node' }), {
    own: (body, w) => expect((body as { id: number }).id).toBe(w.a.id),
    other: (body, w) => expect((body as { id: number }).id).toBe(w.b.id),
  }),
  agentConfig: agentRoute(200, 200, () => ({ url: '/api/agent/config' }), {
    own: (body, w) => expect((body as { node: { id: number } }).node.id).toBe(w.a.id),
    other: (body, w) => expect((body as { node: { id: number } }).node.id).toBe(w.b.id),
  }),
  // Neither node is a gateway: 400 shows the call got past authentication, scoped to the caller's own node.
  agentSetGatewayNetworks: agentRoute(400, 400, () => ({
    url: '/api/agent/node/gateway-networks',
    body: { gatewayNetworks: ['192.168.77.0/24'] },
  })),
  // Each token reports for its own node only (the node is the token's; nothing in the body names one).
  agentReportLabelProblems: agentRoute(204, 204, () => ({
    url: '/api/agent/node/label-problems',
    body: { problems: [] },
  })),
  agentListServices: agentRoute(200, 200, () => ({ url: '/api/agent/services/http' }), {
    own: (body, w) =>
      expect((body as { data: { id: number }[] }).data.map((s) => s.id)).toEqual([w.serviceId, w.agentServiceId]),
    other: (body) => expect((body as { data: unknown[] }).data).toEqual([]),
  }),
  // Each caller names a domain of its own: a new domain becomes the publishing node's (tenancy rules).
  agentCreateHttpService: agentRoute(
    201,
    201,
    (w, caller) => ({
      url: '/api/agent/services/http',
      body: { name: 'web', domain: `agent-made-${w.n}-${caller}.example.test`, backendPort: 80 },
    }),
    {
      own: (body, w) => isOfNode(w.a.id)(body),
      other: (body, w) => isOfNode(w.b.id)(body),
    },
  ),
  agentCreateTcpService: agentRoute(
    201,
    201,
    () => ({ url: '/api/agent/services/tcp', body: { name: 'mqtt', backendPort: 1883 } }),
    {
      own: (body, w) => isOfNode(w.a.id)(body),
      other: (body, w) => isOfNode(w.b.id)(body),
    },
  ),
  agentEnableService: agentRoute(200, 404, (w) => ({ url: `/api/agent/services/http/${w.serviceId}/enable` })),
  agentDisableService: agentRoute(200, 404, (w) => ({ url: `/api/agent/services/tcp/${w.tcpServiceId}/disable` })),
  agentDeleteService: agentRoute(204, 404, (w) => ({ url: `/api/agent/services/http/${w.agentServiceId}` })),
};

let t: TestApp;
let base: string;
let worlds = 0;

/** The accounts of the roles below owner, made once through invites (each costs an argon2 hash). */
const roleAccounts: Partial<Record<Role, number>> = {};
/** A session of an operator limited to a node of its own (no world's node A), and that node. */
let scopedOperator = '';
let scopeNode = 0;
const SCOPED_OPERATOR = 'scoped-operator';
/**
 * Routes that answer a scoped account themselves (accounts/node-scope.ts) and show nothing of node A: 200 (lists
 * without A's things), or the status of something that does not exist. The log stream is called with a domain: 403.
 */
const SCOPE_AWARE = new Map<string, 200 | 404>([
  ['listNodes', 200],
  ['systemInfo', 200],
  ['listIdentityProviders', 200],
  ['listServiceOverview', 200],
  ['listHttpServices', 200],
  ['listTcpServices', 200],
  ['findServices', 200],
  ['listDomains', 200],
  ['serviceFigures', 200],
  ['getDomain', 404],
]);
/** Scope-aware lists whose rows would be the world's (node A's) things: empty for an operator of another node. */
const SCOPED_EMPTY = new Set([
  'listServiceOverview',
  'listHttpServices',
  'listTcpServices',
  'findServices',
  'listDomains',
  'serviceFigures',
]);

beforeAll(async () => {
  // A TCP service per world: more worlds than the default range has ports.
  t = await buildTestApp({ env: { POSTERN_TCP_PORT_RANGE: '30000-30400' } });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const owner = await t.login();
  for (const [username, role] of [
    ...ROLES.filter((r) => r !== 'owner').map((r) => [`role-${r}`, r] as const),
    [SCOPED_OPERATOR, 'operator'] as const,
  ]) {
    const invite = await json<{ url: string }>('POST', '/api/invites', owner, { username, role });
    const token = invite.url.slice(invite.url.indexOf('#') + 1);
    const accepted = await t.app.inject({
      method: 'POST',
      url: '/api/auth/invite/accept',
      payload: { token, password: `the-${role}s-password` },
    });
    expect(accepted.statusCode, accepted.body).toBe(201);
  }
  const accounts = await json<{ data: { id: number; username: string }[] }>('GET', '/api/accounts?limit=100', owner);
  for (const account of accounts.data) {
    const role = ROLES.find((r) => account.username === `role-${r}`);
    if (role) roleAccounts[role] = account.id;
    if (account.username === SCOPED_OPERATOR) {
      scopeNode = (await json<{ id: number }>('POST', '/api/nodes', owner, { name: 'scoped-operators-node' })).id;
      await json('PATCH', `/api/accounts/${account.id}`, owner, { nodes: [scopeNode] });
      scopedOperator = (await createSession(t.deps, account.id, 'password')).token;
    }
  }
});
afterAll(() => t.cleanup());

async function json<T>(method: string, url: string, token: string, body?: object): Promise<T> {
  const response = await t.app.inject({
    method: method as 'POST',
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(body ? { payload: body } : {}),
  });
  if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return response.json<T>();
}

/** Only the access routes need the protected service (its password costs an argon2 hash per world). */
const ACCESS_ROUTES = new Set<string>([
  ...(Object.keys(routes) as RouteName[]).filter((name) => /Access|ShareLink|VisitorSession|Provider/.test(name)),
]);

/** Two nodes with a token each, a service and an extra token of A, a domain: all fresh. */
async function buildWorld(name: string): Promise<World> {
  const n = ++worlds;
  const session = await t.login();
  const a = await json<World['a']>('POST', '/api/nodes', session, { name: `a-${n}` });
  const b = await json<World['b']>('POST', '/api/nodes', session, { name: `b-${n}` });
  const service = await json<{ id: number }>('POST', `/api/services/${a.id}/http`, session, {
    name: 'svc',
    pathLocation: `/svc-${n}`,
    backendPort: 80,
  });
  const tcp = await json<{ id: number }>('POST', `/api/services/${a.id}/tcp`, session, {
    name: 'tcp',
    backendPort: 1883,
  });
  // HTTP: the worlds share one app, whose TCP port range would run out.
  const byToken = await json<{ id: number }>('POST', '/api/agent/services/http', a.token, {
    name: 'tenant-made',
    domain: `tenant-${n}.example.test`,
    backendPort: 80,
  });
  const pat = await json<{ id: number }>('POST', `/api/nodes/${a.id}/pats`, session, { name: 'extra' });
  const domain = await json<World['domain']>('POST', '/api/domains', session, { domain: `d-${n}.example.test` });
  return {
    session,
    a,
    b,
    serviceId: service.id,
    tcpServiceId: tcp.id,
    agentServiceId: byToken.id,
    tokenId: pat.id,
    domain,
    n,
    access: ACCESS_ROUTES.has(name) ? await buildAccess(session, a.id, n) : NO_ACCESS,
    accounts: ACCOUNT_ROUTES.has(name) ? await buildAccounts(session, n) : { accountId: 0, inviteId: 0 },
    roles: await roleSessions(session),
    actAs: session,
    channelId: /Notification/.test(name)
      ? (
          await json<{ id: number }>('POST', '/api/notifications/channels', session, {
            kind: 'webhook',
            name: `hook-${n}`,
            url: 'https://hooks.example.test/postern',
            signingSecret: 'a-signing-secret-of-the-world',
          })
        ).id
      : 0,
  };
}

/** A fresh session per role (no password hashing: the matrix is about what a role may do, not signing in). */
async function roleSessions(owner: string): Promise<Record<Role, string>> {
  const sessions: Partial<Record<Role, string>> = { owner };
  for (const role of ROLES.filter((r) => r !== 'owner')) {
    const id = roleAccounts[role];
    if (id === undefined) throw new Error(`no ${role} account`);
    sessions[role] = (await createSession(t.deps, id, 'password')).token;
  }
  return sessions as Record<Role, string>;
}

/** Only the owners' account routes need another account (taking its invite costs an argon2 hash). */
const ACCOUNT_ROUTES = new Set<string>([
  'updateAccount',
  'deleteAccount',
  'resetAccountTwoFactor',
  'unlinkAccountIdentity',
  'revokeInvite',
]);

async function buildAccounts(session: string, n: number): Promise<World['accounts']> {
  const invite = await json<{ url: string }>('POST', '/api/invites', session, {
    username: `viewer-${n}`,
    role: 'viewer',
  });
  const token = invite.url.slice(invite.url.indexOf('#') + 1);
  await t.app.inject({
    method: 'POST',
    url: '/api/auth/invite/accept',
    payload: { token, password: 'the-viewers-password' },
  });
  const accounts = await json<{ data: { id: number; username: string }[] }>('GET', '/api/accounts?limit=100', session);
  const pending = await json<{ id: number }>('POST', '/api/invites', session, {
    username: `pending-${n}`,
    role: 'viewer',
  });
  return { accountId: accounts.data.find((a) => a.username === `viewer-${n}`)?.id ?? 0, inviteId: pending.id };
}

const NO_ACCESS: World['access'] = { serviceId: 0, domainId: 0, linkId: 0, sessionId: 0, providerId: 0 };

/** A's service on a domain protected by a password with share links, a link, a visitor session and a provider. */
async function buildAccess(session: string, nodeId: number, n: number): Promise<World['access']> {
  const web = await json<{ id: number }>('POST', `/api/services/${nodeId}/http`, session, {
    name: 'protected',
    domain: `acc-${n}.example.test`,
    backendPort: 80,
  });
  const domains = await json<{ data: { id: number }[] }>('GET', `/api/domains?search=acc-${n}.example.test`, session);
  const domainId = domains.data[0]?.id ?? 0;
  await json('PATCH', `/api/domains/${domainId}/access`, session, {
    mode: 'protected',
    password: 'visitor-pin-1',
    shareLinks: true,
  });
  const link = await json<{ id: number }>('POST', `/api/services/${nodeId}/http/${web.id}/share-links`, session, {
    name: 'existing',
  });
  const policy = await t.db.select().from(accessPolicies).where(eq(accessPolicies.domainId, domainId)).get();
  if (!policy) throw new Error('no policy');
  await createVisitorSession(t.deps, {
    policy,
    serviceId: web.id,
    host: `acc-${n}.example.test`,
    method: 'password',
    address: '127.0.0.1',
  });
  const sessionRow = await t.db.select().from(accessSessions).where(eq(accessSessions.policyId, policy.id)).get();
  const provider = await json<{ id: number }>('POST', '/api/access/providers', session, {
    name: `idp-${n}`,
    issuer: 'https://idp.example.test',
    clientId: 'postern',
  });
  return { serviceId: web.id, domainId, linkId: link.id, sessionId: sessionRow?.id ?? 0, providerId: provider.id };
}

function credentials(caller: Caller, w: World): { authorization?: string; cookie?: string } {
  switch (caller) {
    case 'none':
      return {};
    case 'cookie':
      return { cookie: `token=${w.session}` };
    case 'own':
      return { authorization: `Bearer ${w.a.token}` };
    case 'other':
      return { authorization: `Bearer ${w.b.token}` };
    case 'admin':
      return { authorization: `Bearer ${w.actAs}` };
  }
}

/** Event streams carry the credential as `?token=` (EventSource sends no headers) and never end on their own. */
async function openStreamAs(caller: Caller, w: World, url: string): Promise<number> {
  const { authorization, cookie } = credentials(caller, w);
  const token = authorization?.slice('Bearer '.length);
  const client = await connectSse(`${base}${url}${token ? `&token=${token}` : ''}`, cookie ? { cookie } : {});
  client.close();
  return client.status;
}

describe('authorisation matrix: every route × every caller', () => {
  it.each(Object.entries(matrix))('%s', async (name, row) => {
    const route = routes[name as RouteName];
    const w = await buildWorld(name);
    const isStream = (
      [routes.nodeStream.path, routes.logStream.path, routes.auditStream.path, routes.observeStream.path] as string[]
    ).includes(route.path);
    if (route.auth === 'session' && route.permission !== 'self' && can('operator', route.permission)) {
      w.actAs = scopedOperator;
      const { url, body } = row.call(w, 'admin');
      const what = `scoped operator on ${route.method} ${url}`;
      const namesNodeA = new RegExp(`^/api/(nodes|services)/(stream\\?id=)?${w.a.id}(/|$)`).test(url);
      const expected = namesNodeA ? 404 : (SCOPE_AWARE.get(name) ?? 403);
      if (isStream) expect(await openStreamAs('admin', w, url), what).toBe(expected);
      else {
        const response = await t.app.inject({
          method: route.method,
          url,
          headers: credentials('admin', w),
          ...(body ? { payload: body } : {}),
        });
        expect(response.statusCode, `${what}: ${response.body}`).toBe(expected);
        const answer = response.json<{ message?: string; data?: { id: number }[] }>();
        if (expected === 404)
          expect(answer, what).toEqual({
            code: 'not_found',
            message: `${namesNodeA ? 'Node' : 'Domain'} not found`,
            messageCode: namesNodeA ? 'node_not_found' : 'domain_not_found',
          });
        if (SCOPED_EMPTY.has(name)) expect(answer.data, what).toEqual([]);
        if (expected === 403) expect(isRoleRefusal(answer.message), what).toBe(true);
        if (name === 'listNodes')
          expect(
            answer.data?.map((node) => node.id),
            what,
          ).toEqual([scopeNode]);
      }
    }
    if (route.auth === 'session') {
      const { permission } = route;
      for (const role of ROLES.filter((r) => !can(r, permission))) {
        w.actAs = w.roles[role];
        const { url, body } = row.call(w, 'admin');
        if (isStream) {
          expect(await openStreamAs('admin', w, url), `${role} on ${route.method} ${url}`).toBe(403);
          continue;
        }
        const response = await t.app.inject({
          method: route.method,
          url,
          headers: credentials('admin', w),
          ...(body ? { payload: body } : {}),
        });
        expect(response.statusCode, `${role} on ${route.method} ${url}: ${response.body}`).toBe(403);
        // The policy's own message, before validation (no field errors) and before the handler.
        expect(response.json(), `${role} on ${route.method} ${url}`).toEqual({
          code: 'forbidden',
          message: forbiddenMessage(role, permission),
        });
      }
      // The least privileged role the permission allows; one's own account's calls stay the bootstrap owner's.
      const doer = ROLES.filter((r) => can(r, permission)).at(-1) ?? 'owner';
      w.actAs = permission === 'self' ? w.session : w.roles[doer];
    }
    for (const [caller, status] of row.expected) {
      const { url, body } = row.call(w, caller);
      if (isStream) {
        expect(await openStreamAs(caller, w, url), `${caller} on ${route.method} ${url}`).toBe(status);
        continue;
      }
      const response = await t.app.inject({
        method: route.method,
        url,
        headers: credentials(caller, w),
        ...(body ? { payload: body } : {}),
      });
      expect(response.statusCode, `${caller} on ${route.method} ${url}: ${response.body}`).toBe(status);
      expect(response.headers['cache-control'], `${caller} on ${route.method} ${url}`).toBe('no-store');
      if (status === 401) expect(response.json()).toHaveProperty('message');
      if (status === 401 && body) expect(response.json()).not.toHaveProperty('errors'); // refused before validation
      row.check?.[caller]?.(response.statusCode === 204 ? null : response.json(), w);
    }
  });
});

const base64url = (value: object | string): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('forged and misused tokens', () => {
  it('refuses session tokens that were not signed by this gateway', async () => {
    const real = await t.login();
    const [header = '', payload = '', signature = ''] = real.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const otherSession = JSON.parse(Buffer.from((await t.login()).split('.')[1] ?? '', 'base64url').toString()) as {
      sub: string;
    };
    const signWith = (key: Buffer, head: object, body: object) => {
      const input = `${base64url(head)}.${base64url(body)}`;
      return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
    };
    const forged = {
      'alg none': `${base64url({ alg: 'none' })}.${payload}.`,
      'alg none, no signature part': `${base64url({ alg: 'none' })}.${payload}`,
      'another key': signWith(randomBytes(32), { alg: 'HS256' }, claims),
      'empty key': signWith(Buffer.alloc(0), { alg: 'HS256' }, claims),
      'swapped session id': `${header}.${base64url({ ...claims, sub: `${otherSession.sub}x` })}.${signature}`,
      'longer lifetime': `${header}.${base64url({ ...claims, exp: 4_102_444_800 })}.${signature}`,
      'signature of another token': `${header}.${payload}.${signature.slice(0, -4)}AAAA`,
      'access token as session': formatPat(randomBytes(36)),
    };
    for (const [what, token] of Object.entries(forged)) {
      const response = await t.app.inject({ url: '/api/nodes', headers: { authorization: `Bearer ${token}` } });
      expect(response.statusCode, what).toBe(401);
      const stream = await connectSse(`${base}/api/nodes/stream?page=1&token=${token}`);
      stream.close();
      expect(stream.status, `${what} on a stream`).toBe(401);
      expect(
        (await t.app.inject({ url: '/api/auth/session', headers: { cookie: `token=${token}` } })).statusCode,
        `${what} as cookie`,
      ).toBe(401);
    }
    expect((await t.app.inject({ url: '/api/nodes', headers: { authorization: `Bearer ${real}` } })).statusCode).toBe(
      200,
    );
  });

  it('refuses access tokens that are malformed, unknown, revoked, of a deleted node, or a session token', async () => {
    const session = await t.login();
    const node = await json<{ id: number; token: string }>('POST', '/api/nodes', session, { name: 'forgery-target' });
    const revoked = await json<{ id: number; token: string }>('POST', `/api/nodes/${node.id}/pats`, session, {
      name: 'to-revoke',
    });
    await json('PATCH', `/api/nodes/${node.id}/pats/${revoked.id}/revoke`, session);
    const deletedNode = await json<{ id: number; token: string }>('POST', '/api/nodes', session, { name: 'gone' });
    await t.app.inject({
      method: 'DELETE',
      url: `/api/nodes/${deletedNode.id}`,
      headers: { authorization: `Bearer ${session}` },
    });
    const badChecksum = `${node.token.slice(0, -1)}${node.token.endsWith('A') ? 'B' : 'A'}`;
    const cases = {
      'bad checksum': badChecksum,
      'well-formed but unknown': formatPat(randomBytes(36)),
      revoked: revoked.token,
      'of a deleted node': deletedNode.token,
      'session token': session,
      'lower-cased': node.token.toLowerCase(),
      'with trailing junk': `${node.token}x`,
    };
    for (const [what, token] of Object.entries(cases)) {
      const response = await t.app.inject({ url: '/api/agent/config', headers: { authorization: `Bearer ${token}` } });
      expect(response.statusCode, what).toBe(401);
      expect(response.body, what).not.toContain('PrivateKey');
    }
    expect(
      (await t.app.inject({ url: '/api/agent/config', headers: { authorization: `Bearer ${node.token}` } })).statusCode,
    ).toBe(200);
  });
});
