import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { storageKeys } from '@postern/contract';
import type { AppDeps } from '../../deps.js';

// The console's session cookie (console-spec §4, §9: `token`, SameSite Strict, lifetime from expires_in), set and
// cleared by the server so no script can read it (docs/api.md "Session cookie"): cookies are not isolated by port,
// and services without a domain are published on another port of the console's host. Path=/api keeps it off
// every page outside the API (that port reserves /api), and only GET /api/auth/session reads it.

export const SESSION_COOKIE = storageKeys.tokenCookie;
export const SESSION_COOKIE_PATH = '/api';

function cookieOptions(deps: AppDeps, request: FastifyRequest, maxAgeSeconds: number): CookieSerializeOptions {
  return {
    httpOnly: true,
    sameSite: 'strict',
    path: SESSION_COOKIE_PATH,
    maxAge: maxAgeSeconds,
    // request.protocol is https behind a trusted proxy that says X-Forwarded-Proto: https (the gateway's nginx).
    secure: deps.config.isProduction || request.protocol === 'https',
  };
}

export function setSessionCookie(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  maxAgeSeconds: number,
): void {
  void reply.setCookie(SESSION_COOKIE, token, cookieOptions(deps, request, maxAgeSeconds));
}

export function clearSessionCookie(deps: AppDeps, request: FastifyRequest, reply: FastifyReply): void {
  void reply.setCookie(SESSION_COOKIE, '', { ...cookieOptions(deps, request, 0), expires: new Date(0) });
}

/**
 * Every value the browser sent under the session cookie's name, parsed here only (no other route looks at cookies).
 * A page on another port of this host cannot read our cookie but can plant one of the same name with a longer
 * path, which browsers send first; so all of them are returned for the caller to try, not just the first.
 */
export function readSessionCookies(request: FastifyRequest): string[] {
  const header = request.headers.cookie;
  if (!header) return [];
  return header
    .split(';')
    .map((pair) => request.server.parseCookie(pair)[SESSION_COOKIE])
    .filter((value): value is string => typeof value === 'string' && value !== '');
}
