import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { requireSession } from '../../http/authenticate.js';
import { registerOperation } from '../../http/operation.js';
import { requireAgentNode } from '../agent/authenticate-agent.js';
import { getDomainAccess, getServiceAccess, updateDomainAccess, updateServiceAccess } from './policies.js';
import {
  createIdentityProvider,
  deleteIdentityProvider,
  discoverIdentityProvider,
  listIdentityProviders,
  updateIdentityProvider,
  updateProviderConsoleSignIn,
} from './providers.js';
import { createShareLink, listShareLinks, revokeShareLink } from './share-links.js';
import { listVisitorSessions, revokeVisitorSession } from './visitor-sessions.js';

// The operator's calls on access (docs/api.md "Access"): identity providers, policies, share links, visitor sessions.

export async function accessRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;

  registerOperation(
    app,
    operations.listIdentityProviders,
    async ({ query }) => await listIdentityProviders(deps, query),
  );
  registerOperation(
    app,
    operations.createIdentityProvider,
    async ({ body }) => await createIdentityProvider(deps, body),
  );
  registerOperation(
    app,
    operations.discoverIdentityProvider,
    async ({ body }) => await discoverIdentityProvider(body.issuer),
  );
  registerOperation(
    app,
    operations.updateIdentityProvider,
    async (request) => await updateIdentityProvider(deps, requireSession(request), request.params.id, request.body),
  );
  registerOperation(
    app,
    operations.deleteIdentityProvider,
    async (request) => await deleteIdentityProvider(deps, requireSession(request), request.params.id),
  );
  registerOperation(
    app,
    operations.updateProviderConsoleSignIn,
    async ({ params, body }) => await updateProviderConsoleSignIn(deps, params.id, body),
  );

  registerOperation(app, operations.getDomainAccess, async ({ params }) => await getDomainAccess(deps, params.id));
  registerOperation(
    app,
    operations.updateDomainAccess,
    async ({ params, body }) => await updateDomainAccess(deps, params.id, body),
  );
  registerOperation(
    app,
    operations.getServiceAccess,
    async ({ params }) => await getServiceAccess(deps, params.nodeId, params.id),
  );
  registerOperation(
    app,
    operations.updateServiceAccess,
    async ({ params, body }) => await updateServiceAccess(deps, params.nodeId, params.id, body, 'admin'),
  );

  registerOperation(
    app,
    operations.listShareLinks,
    async ({ params, query }) => await listShareLinks(deps, params.nodeId, params.id, query),
  );
  registerOperation(
    app,
    operations.createShareLink,
    async ({ params, body }) => await createShareLink(deps, params.nodeId, params.id, body, 'admin'),
  );
  registerOperation(
    app,
    operations.revokeShareLink,
    async ({ params }) => await revokeShareLink(deps, params.nodeId, params.id, params.linkId),
  );
  registerOperation(
    app,
    operations.listVisitorSessions,
    async ({ params, query }) => await listVisitorSessions(deps, params.nodeId, params.id, query),
  );
  registerOperation(
    app,
    operations.revokeVisitorSession,
    async ({ params }) => await revokeVisitorSession(deps, params.nodeId, params.id, params.sessionId),
  );
}

/**
 * A node's token on its own HTTP services' access (inside the agent API's scope, which authenticates the token): the
 * node comes from the token, never from the request, and its policies are held to "only stricter" (policies.ts).
 */
export function registerAgentAccessRoutes(app: FastifyInstance, deps: AppDeps): void {
  registerOperation(
    app,
    operations.agentGetServiceAccess,
    async (request) => await getServiceAccess(deps, requireAgentNode(request).id, request.params.id),
  );
  registerOperation(
    app,
    operations.agentUpdateServiceAccess,
    async (request) =>
      await updateServiceAccess(deps, requireAgentNode(request).id, request.params.id, request.body, 'node'),
  );
  registerOperation(
    app,
    operations.agentListShareLinks,
    async (request) => await listShareLinks(deps, requireAgentNode(request).id, request.params.id, request.query),
  );
  registerOperation(
    app,
    operations.agentCreateShareLink,
    async (request) =>
      await createShareLink(deps, requireAgentNode(request).id, request.params.id, request.body, 'node'),
  );
  registerOperation(
    app,
    operations.agentRevokeShareLink,
    async (request) =>
      await revokeShareLink(deps, requireAgentNode(request).id, request.params.id, request.params.linkId),
  );
}
