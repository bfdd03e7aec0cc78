// The core of the route table (routes.ts): what a route is, `buildPath`, and the routes the console's first screens
// call. A module of its own because a bundle takes a module whole: the console's first page imports this one and
// leaves the full table (and every screen's routes) to the chunks that use it.

import type { Permission } from './roles.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * Who may call: `public` anyone; `session` a console session as a bearer header (event streams: `?token=`, which
 * EventSource needs); `cookie` the HttpOnly session cookie only (GET /api/auth/session); `node-token` a node's
 * personal access token as a bearer header (the agent API).
 */
export type AuthKind = 'public' | 'session' | 'cookie' | 'node-token';

interface RouteBase {
  readonly method: HttpMethod;
  readonly path: string;
}

/**
 * A session route names the permission its caller's role must hold (roles.ts): the type makes it required, so a new
 * session route cannot be added without deciding who may call it (and the route × role matrix tests it).
 */
export interface SessionRoute extends RouteBase {
  readonly auth: 'session';
  readonly permission: Permission;
}

export interface OpenRoute extends RouteBase {
  readonly auth: Exclude<AuthKind, 'session'>;
  readonly permission?: never;
}

export type Route = SessionRoute | OpenRoute;

/**
 * The calls of the console's first screens (sign-in, the session check, the home page), apart from the table so those
 * screens can name them without loading all of it (the console's initial JavaScript budget). `routes` holds these
 * same objects under the same names: use `routes` anywhere else.
 */
export const firstPageRoutes = {
  login: { method: 'POST', path: '/api/auth/login', auth: 'public' },
  logout: { method: 'POST', path: '/api/auth/logout', auth: 'session', permission: 'self' },
  session: { method: 'GET', path: '/api/auth/session', auth: 'cookie' },
  loginSecondFactor: { method: 'POST', path: '/api/auth/login/2fa', auth: 'public' },
  currentAccount: { method: 'GET', path: '/api/auth/account', auth: 'session', permission: 'self' },
  consoleProviders: { method: 'GET', path: '/api/auth/providers', auth: 'public' },
  ssoStart: { method: 'POST', path: '/api/auth/sso/start', auth: 'public' },
  ssoFinish: { method: 'POST', path: '/api/auth/sso/finish', auth: 'public' },
  listNodes: { method: 'GET', path: '/api/nodes', auth: 'session', permission: 'read' },
  observeStream: { method: 'GET', path: '/api/observe/stream', auth: 'session', permission: 'read' },
  attention: { method: 'GET', path: '/api/system/attention', auth: 'session', permission: 'read' },
} as const satisfies Record<string, Route>;

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
