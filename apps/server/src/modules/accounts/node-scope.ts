import { nodeScopeMessage, SCOPED_ROLES, type Operation, type Role } from '@postern/contract';
import { AppError, notFound } from '../../errors.js';

// An account limited to some nodes (docs/api.md "Node scope"): an operator or a viewer whose `nodes` lists node ids
// sees and changes only those nodes and what hangs off them (services, access tokens, the node's config). Enforced
// here, once, by the global gate (http/authenticate.ts) right after the role policy, from the matched route:
// - a route under /api/nodes/:id or with a :nodeId parameter names its node: outside the scope it is a 404, exactly
//   as for a node that does not exist, so the scope leaks no node's existence;
// - a few routes know how to answer for a scope (`scopeAware`): the node list and its stream, the services overview,
//   lists and search, the domains list and a domain, the services' figures and a service's log filter themselves;
// - every other route (a domain's settings, a domain's log, audit, the gateway's status, settings…) is refused with
//   403: deny unless allowed, so a route added later cannot show a scoped account other nodes' things by default.
// Kept refused on purpose: the audit log (an entry's subject is a node, a service, a domain, an account or a
// setting, and its details name others: filtering it by node would be a rule per action, leaky when one is missed),
// the gateway's status and attention list and the observe stream (counts and events of every service), and every
// change to a domain (its certificate and access settings reach every service on it, of any node).

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
  'listServiceOverview', // only the scope's nodes' services, in SQL (services/overview.ts branchSelect)
  'listHttpServices', // the same, through the shaped page (services/list-queries.ts `nodes`)
  'listTcpServices', // the same
  'findServices', // the same (services/find-services.ts matches)
  'listDomains', // the domains carrying a service of the scope's nodes, unless another node owns them
  'getDomain', // the same rule; another domain is a 404 (domains/service.ts visibleTo)
  'serviceFigures', // only the scope's nodes' services (observe/routes.ts)
  'logStream', // a service's log: another node's service is a 404 (logs/service.ts); a domain's log: 403 below
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
  // A domain's log has the lines of every service on it, of any node, and of requests no service matched.
  if (operation.name === 'logStream' && typeof query.domain === 'string' && query.domain !== '')
    throw new AppError('forbidden', nodeScopeMessage(actor.role));
  if (!scopeAware.has(operation.name)) throw new AppError('forbidden', nodeScopeMessage(actor.role));
}
