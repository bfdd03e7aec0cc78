import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { storageKeys } from '@postern/contract';
import type { AppDeps } from '../../deps.js';

// The console's session cookie (the spec's "States and transitions" and "Business constants and limits": a cookie,
// SameSite Strict, lifetime from expires_in), set and cleared by the server so no script can read it (docs/api.md
// "Session cookie"); only GET /api/auth/session reads it.
//
// Over HTTPS it is `__Host-token`: Secure, Path=/ and no Domain, which browsers enforce for the prefix, so a page on a
// sibling or parent domain (a node may own one) can neither set nor shadow it ("cookie tossing"). Cookies ignore
// ports, so it also travels to the no-domain HTTPS port of the console's host name, where node services live: the
// gateway's nginx takes it out of every request there and drops a backend's Set-Cookie for it (the Lua module,
// dataplane/nginx/lua/postern.lua). Over plain HTTP (development only) the prefix is impossible: the spec's `token`,
// with Path=/api, as before. A `token` cookie set by an earlier version is still read, and replaced by `__Host-token`
// the first time it opens a session (the transition: remove once no console can hold one, after its longest
// session lifetime).

export const SESSION_COOKIE = storageKeys.secureTokenCookie;
export const PLAIN_SESSION_COOKIE = storageKeys.tokenCookie;
export const PLAIN_SESSION_COOKIE_PATH = '/api';

/** Secure cookies are for HTTPS: directly, or from a trusted proxy saying X-Forwarded-Proto: https; or production. */
const isSecure = (deps: AppDeps, request: FastifyRequest): boolean =>
  deps.config.isProduction || request.protocol === 'https';

function secureOptions(maxAgeSeconds: number): CookieSerializeOptions {
  return { httpOnly: true, sameSite: 'strict', secure: true, path: '/', maxAge: maxAgeSeconds };
}

function plainOptions(maxAgeSeconds: number): CookieSerializeOptions {
  return { httpOnly: true, sameSite: 'strict', path: PLAIN_SESSION_COOKIE_PATH, maxAge: maxAgeSeconds };
}

const gone = { expires: new Date(0) };

/** Whether the request carries a cookie named `name` at all. */
function carries(request: FastifyRequest, name: string): boolean {
  return cookiesNamed(request, name).length > 0;
}

export function setSessionCookie(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  maxAgeSeconds: number,
): void {
  if (!isSecure(deps, request)) {
    void reply.setCookie(PLAIN_SESSION_COOKIE, token, plainOptions(maxAgeSeconds));
    return;
  }
  void reply.setCookie(SESSION_COOKIE, token, secureOptions(maxAgeSeconds));
  // An earlier version's cookie goes: the prefixed one replaces it.
  if (carries(request, PLAIN_SESSION_COOKIE))
    void reply.setCookie(PLAIN_SESSION_COOKIE, '', { ...plainOptions(0), secure: true, ...gone });
}

/** A session found through the plain cookie: over HTTPS it moves to the prefixed one (the transition above). */
export function upgradeSessionCookie(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  maxAgeSeconds: number,
): void {
  if (isSecure(deps, request)) setSessionCookie(deps, request, reply, token, maxAgeSeconds);
}

export function clearSessionCookie(deps: AppDeps, request: FastifyRequest, reply: FastifyReply): void {
  if (isSecure(deps, request)) {
    void reply.setCookie(SESSION_COOKIE, '', { ...secureOptions(0), ...gone });
    if (carries(request, PLAIN_SESSION_COOKIE))
      void reply.setCookie(PLAIN_SESSION_COOKIE, '', { ...plainOptions(0), secure: true, ...gone });
    return;
  }
  void reply.setCookie(PLAIN_SESSION_COOKIE, '', { ...plainOptions(0), ...gone });
}

function cookiesNamed(request: FastifyRequest, name: string): string[] {
  const header = request.headers.cookie;
  if (!header) return [];
  return header
    .split(';')
    .map((pair) => request.server.parseCookie(pair)[name])
    .filter((value): value is string => typeof value === 'string' && value !== '');
}

export interface SessionCookie {
  token: string;
  /** Set by an earlier version (or over plain HTTP): `token`, not `__Host-token`. */
  isPlain: boolean;
}

/**
 * Every session cookie the browser sent, the prefixed ones first (no other host can have set those), then the plain
 * ones. No other route looks at cookies. A look-alike planted with a longer path is sent before the real one, so all
 * are returned for the caller to try, not just the first.
 */
export function readSessionCookies(request: FastifyRequest): SessionCookie[] {
  return [
    ...cookiesNamed(request, SESSION_COOKIE).map((token) => ({ token, isPlain: false })),
    ...cookiesNamed(request, PLAIN_SESSION_COOKIE).map((token) => ({ token, isPlain: true })),
  ];
}
