import { nodeScopeMessage, SCOPED_ROLES, type Operation, type Role } from '@postern/contract';
import { AppError, notFound } from '../../errors.js';

// An account limited to some nodes (docs/api.md "Node scope"): an operator or a viewer whose `nodes` lists node ids
// sees and changes only those nodes and what hangs off them (services, access tokens, the node's config). Enforced
// here, once, by the global gate (http/authenticate.ts) right after the role policy, from the matched route:
// - a route under /api/nodes/:id or with a :nodeId parameter names its node: outside the scope it is a 404, exactly
//   as for a node that does not exist, so the scope leaks no node's existence;
// - a few routes know how to answer for a scope (`scopeAware`): the node list and its stream filter themselves, the
//   node stream follows one node of the scope by `?id=`;
// - every other route (domains, the services overview and search, logs, audit, figures, settings…) is refused with
//   403: deny unless allowed, so a route added later cannot show a scoped account other nodes' things by default.

/** Whoever is asked about: the session's account as read with it. */
export interface ScopedActor {
  role: Role;
  /** null: every node. */
  nodeScope: readonly number[] | null;
}

/** The scope that counts: only operators and viewers are limited (owners and admins see every node). */
export function effectiveNodeScope(role: Role, stored: readonly number[] | null): readonly number[] | null {
  if (!(SCOPED_ROLES as readonly Role[]).includes(role)) return null;
  return stored !== null && stored.length > 0 ? stored : null;
}

/**
 * Routes that answer for a scope themselves, or that show nothing of any node. Listed by name on purpose: a new
 * route is refused to scoped accounts until someone decides here how it respects the scope.
 */
const scopeAware: ReadonlySet<string> = new Set([
  'listNodes', // filtered by nodes/service.ts listNodes
  'nodeStream', // one node of the scope by `?id=` (checked below); the list filtered by nodes/stream-hub.ts
  'systemInfo', // the gateway's version and features
  'listIdentityProviders', // names of providers a service's visitor access may use; no secrets
]);

const NODE_ID = /^[1-9]\d{0,15}$/;

function inScope(scope: readonly number[], raw: unknown): boolean {
  return typeof raw === 'string' && NODE_ID.test(raw) && scope.includes(Number(raw));
}

/** The node a route's path names: `:id` of /api/nodes/:id…, or `:nodeId`. */
function nodeParamOf(operation: Operation): 'id' | 'nodeId' | null {
  if (operation.path.startsWith('/api/nodes/:id')) return 'id';
  if (operation.path.includes('/:nodeId')) return 'nodeId';
  return null;
}

/**
 * Throws unless the actor's node scope allows the route: 404 for a node outside it, 403 for a route that would show
 * or change other nodes' things. `params` and `query` are the raw ones of the matched route.
 */
export function authorizeNodeScope(
  actor: ScopedActor,
  operation: Operation,
  params: Readonly<Record<string, unknown>>,
  query: Readonly<Record<string, unknown>>,
): void {
  const scope = actor.nodeScope;
  if (scope === null || operation.permission === 'self') return;
  const param = nodeParamOf(operation);
  if (param !== null) {
    if (!inScope(scope, params[param])) throw notFound('Node');
    return;
  }
  if (operation.name === 'nodeStream') {
    if (query.id !== undefined && !inScope(scope, query.id)) throw notFound('Node');
    return;
  }
  if (!scopeAware.has(operation.name)) throw new AppError('forbidden', nodeScopeMessage(actor.role));
}
