import type { FastifyInstance, FastifyRequest } from 'fastify';
import { routes } from '@postern/contract';
import type { AppDeps } from '../deps.js';
import { AppError } from '../errors.js';
import { verifySessionToken, type SessionIdentity } from '../modules/auth/sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session behind the request; set for every authenticated /api route. */
    session: SessionIdentity | null;
  }
}

/** No session needed; GET /api/auth/session checks the session cookie itself (the only route that reads it). */
const PUBLIC_ROUTES: ReadonlySet<string> = new Set([routes.login.path, routes.session.path, routes.health.path, routes.openapi.path]);
/** EventSource cannot set headers, so event streams take the session token as `?token=` too. */
const STREAM_ROUTES: ReadonlySet<string> = new Set([routes.nodeStream.path, routes.logStream.path]);
const AGENT_PREFIX = '/api/agent/';

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

function streamToken(request: FastifyRequest): string | undefined {
  const query = request.query as Record<string, unknown> | undefined;
  return typeof query?.token === 'string' && query.token.length > 0 ? query.token : undefined;
}

/**
 * One global gate: every /api route needs a console session except login, session, health, openapi and the agent
 * API (which checks node tokens itself). Sessions come from the Authorization header (or `?token=` on event
 * streams), never from the cookie: a cookie rides along on forged cross-site requests, a header does not. The matched route pattern decides, not the raw URL, so an encoded or odd
 * path can only end up on the stricter side.
 */
export function registerSessionAuth(app: FastifyInstance, deps: AppDeps): void {
  app.decorateRequest('session', null);
  app.addHook('onRequest', async (request) => {
    const pattern = request.routeOptions.url;
    const path = request.url.split('?')[0] ?? '';
    if (pattern !== undefined && PUBLIC_ROUTES.has(pattern)) return;
    if (pattern?.startsWith(AGENT_PREFIX)) return;
    if (!pattern?.startsWith('/api') && !path.startsWith('/api')) return; // console assets
    const token = bearerToken(request) ?? (pattern && STREAM_ROUTES.has(pattern) ? streamToken(request) : undefined);
    if (!token) throw new AppError('unauthorized', 'Authentication required');
    const session = await verifySessionToken(deps, token);
    if (!session) throw new AppError('unauthorized', 'Session expired or invalid, please sign in again');
    request.session = session;
  });
}

/** The session of an authenticated route (the global gate guarantees it). */
export function requireSession(request: FastifyRequest): SessionIdentity {
  if (!request.session) throw new AppError('unauthorized', 'Authentication required');
  return request.session;
}
