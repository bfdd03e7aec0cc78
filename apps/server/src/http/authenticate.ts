import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../deps.js';
import { AppError } from '../errors.js';
import { authorizeNodeScope } from '../modules/accounts/node-scope.js';
import { authorize } from '../modules/accounts/policy.js';
import { verifySessionToken, type SessionIdentity } from '../modules/auth/sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session behind the request; set for every authenticated /api route. */
    session: SessionIdentity | null;
  }
}

/** The credentials of an `Authorization: Bearer …` header; the scheme in any case (RFC 9110, 11.1). */
export function bearerOf(header: string | undefined): string | undefined {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

export function bearerToken(request: FastifyRequest): string | undefined {
  return bearerOf(request.headers.authorization);
}

function streamToken(request: FastifyRequest): string | undefined {
  const query = request.query as Record<string, unknown> | undefined;
  return typeof query?.token === 'string' && query.token.length > 0 ? query.token : undefined;
}

/**
 * One global gate: every /api route needs a console session unless its operation's auth kind says otherwise
 * (`public`; `cookie`: GET /api/auth/session checks the cookie itself; `node-token`: the agent API checks node tokens
 * itself). Sessions come from the Authorization header (or `?token=` on event streams, which EventSource needs),
 * never from the cookie: a cookie rides along on forged cross-site requests, a header does not. The matched route
 * decides, not the raw URL, so an encoded or odd path can only end up on the stricter side: an /api path that
 * matches no operation needs a session too (then it is a 404). A session route then goes through the role policy
 * (accounts/policy.ts) with the permission its route names, then through the node scope of an account limited to
 * some nodes (accounts/node-scope.ts), before body validation and the handler.
 */
export function registerSessionAuth(app: FastifyInstance, deps: AppDeps): void {
  app.decorateRequest('session', null);
  app.addHook('onRequest', async (request) => {
    // routeOptions is built afresh on every read: read once.
    const route = request.routeOptions;
    const operation = route.config.operation;
    if (operation !== undefined && operation.auth !== 'session') return;
    const pattern = route.url;
    const path = request.url.split('?')[0] ?? '';
    if (operation === undefined && !pattern?.startsWith('/api') && !path.startsWith('/api')) return; // console assets
    const isStream = operation?.response.kind === 'events';
    const token = bearerToken(request) ?? (isStream ? streamToken(request) : undefined);
    if (!token) throw new AppError('unauthorized', 'Authentication required');
    const session = await verifySessionToken(deps, token);
    if (!session) throw new AppError('unauthorized', 'Session expired or invalid, please sign in again');
    request.session = session;
    // An /api path no operation matches needs a session and is then a 404: it does nothing to authorise.
    if (operation) {
      authorize(session, operation.permission);
      authorizeNodeScope(
        session,
        operation,
        request.params as Record<string, unknown>,
        (request.query ?? {}) as Record<string, unknown>,
      );
    }
  });
}

/** The session of an authenticated route (the global gate guarantees it). */
export function requireSession(request: FastifyRequest): SessionIdentity {
  if (!request.session) throw new AppError('unauthorized', 'Authentication required');
  return request.session;
}
