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

// The state of a sign-in through an identity provider (sso.ts), between the start and the provider's redirect back:
// encrypted, HttpOnly, 10 minutes. Its name starts with `__Host-postern-` over HTTPS, a prefix nginx takes out of
// every request to a node's service (it is the console host's only). Lax: the console's page reads it with a
// same-origin POST after arriving from the provider.
export const SSO_STATE_COOKIE = '__Host-postern-sso';
export const PLAIN_SSO_STATE_COOKIE = 'postern-sso';
const PLAIN_SSO_STATE_PATH = '/api/auth';

function ssoCookie(deps: AppDeps, request: FastifyRequest): { name: string; options: CookieSerializeOptions } {
  return isSecure(deps, request)
    ? { name: SSO_STATE_COOKIE, options: { httpOnly: true, sameSite: 'lax', secure: true, path: '/' } }
    : { name: PLAIN_SSO_STATE_COOKIE, options: { httpOnly: true, sameSite: 'lax', path: PLAIN_SSO_STATE_PATH } };
}

export function setSsoStateCookie(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  value: string,
  maxAgeSeconds: number,
): void {
  const { name, options } = ssoCookie(deps, request);
  void reply.setCookie(name, value, { ...options, maxAge: maxAgeSeconds });
}

/** The state cookie of this browser's sign-in through a provider (the last one sent, if several). */
export function readSsoStateCookie(deps: AppDeps, request: FastifyRequest): string | undefined {
  return cookiesNamed(request, ssoCookie(deps, request).name).at(-1);
}

export function clearSsoStateCookie(deps: AppDeps, request: FastifyRequest, reply: FastifyReply): void {
  const { name, options } = ssoCookie(deps, request);
  void reply.setCookie(name, '', { ...options, maxAge: 0, ...gone });
}
