import { createApiClient, fetchTransport, isApiError, firstPageRoutes, storageKeys } from '@postern/contract';

// The session (the spec's "States and transitions" and "Business constants and limits": a `token` cookie, SameSite
// Strict, lifetime from expires_in) is a cookie the SERVER sets on sign-in and clears on sign-out: HttpOnly and
// Path=/api, so no script can read it, not even ours (docs/api.md "Session cookie"). This page keeps the token from the
// sign-in answer in memory; after a reload the guards ask GET /api/auth/session, the one route that reads the cookie,
// for it again. The redirect target survives a forced logout in localStorage.

const DEFAULT_REDIRECT = '/';
const LOGIN_PATH = '/login';

type Navigate = (to: string) => Promise<void>;
let navigate: Navigate | null = null;

/** The router registers itself here; session code must not import the router (it imports us). */
export function setSessionNavigator(fn: Navigate | null): void {
  navigate = fn;
}

let current: { token: string; expiresAt: number } | null = null;
/**
 * Set when the server has no session for this browser (asked, or signed out here): it is not asked again until a
 * sign-in.
 */
let isKnownSignedOut = false;
let restoring: Promise<boolean> | null = null;

export function readToken(): string | null {
  if (current && current.expiresAt <= Date.now()) current = null;
  return current?.token ?? null;
}

export function hasToken(): boolean {
  return readToken() !== null;
}

/** Keeps the token of a sign-in (the server has set the cookie beside it) for `expiresInSeconds`. */
export function storeToken(token: string, expiresInSeconds: number): void {
  current = { token, expiresAt: Date.now() + Math.max(0, expiresInSeconds) * 1000 };
  isKnownSignedOut = false;
}

export function clearToken(): void {
  current = null;
}

function toSession(body: unknown): { token: string; expires_in: number } | null {
  if (
    typeof body === 'object' &&
    body !== null &&
    'token' in body &&
    'expires_in' in body &&
    typeof body.token === 'string' &&
    typeof body.expires_in === 'number'
  ) {
    return { token: body.token, expires_in: body.expires_in };
  }
  return null;
}

/**
 * The contract's client without the console's error rules (lib/api.ts): a refused session here is an answer, not a
 * reason to sign out again. Bare routes, so this first-page module loads no schema.
 */
const transport = fetchTransport({ credentials: 'include' });

async function fetchSession(): Promise<boolean> {
  try {
    const session = toSession(await createApiClient({ transport }).call(firstPageRoutes.session));
    if (session && session.expires_in > 0) {
      storeToken(session.token, session.expires_in);
      return true;
    }
  } catch (error) {
    if (!isApiError(error)) console.error('could not ask the server for the session', error);
  }
  isKnownSignedOut = true;
  return false;
}

/**
 * True when there is a session: the one in memory, or (after a page load) the one behind the server's cookie.
 * The server is asked at most once at a time, and not again after it said no.
 */
export async function restoreSession(): Promise<boolean> {
  if (hasToken()) return true;
  if (isKnownSignedOut) return false;
  restoring ??= fetchSession().finally(() => (restoring = null));
  return restoring;
}

export function saveRedirectTarget(path: string): void {
  // Never send the user back to the login screen after signing in.
  const target = path.startsWith(LOGIN_PATH) ? DEFAULT_REDIRECT : path;
  localStorage.setItem(storageKeys.redirect, target);
}

/** The stored target, default '/'; only same-origin paths, so a crafted value cannot send the user elsewhere. */
export function readRedirectTarget(): string {
  const stored = localStorage.getItem(storageKeys.redirect);
  if (!stored || !stored.startsWith('/') || stored.startsWith('//')) return DEFAULT_REDIRECT;
  return stored;
}

export function clearRedirectTarget(): void {
  localStorage.removeItem(storageKeys.redirect);
}

function currentPath(): string {
  return window.location.pathname + window.location.search + window.location.hash;
}

/**
 * Ends the session on the server, which also clears the cookie this page cannot touch (best effort: a session that
 * already ended answers 401, and the cookie then names nothing).
 */
async function endServerSession(token: string): Promise<void> {
  try {
    await createApiClient({ transport, token }).call(firstPageRoutes.logout);
  } catch (error) {
    if (!isApiError(error)) console.error('server logout failed; signed out locally', error);
  }
}

let signingOut: Promise<void> | null = null;

/**
 * Clears the token (here and on the server), remembers where the user was and goes to the login screen. A second call
 * while one runs (a live stream that dropped when the token went) joins it instead of leaving for the login screen
 * before the server has answered.
 */
export function logout(): Promise<void> {
  signingOut ??= signOutOnce().finally(() => {
    signingOut = null;
  });
  return signingOut;
}

async function signOutOnce(): Promise<void> {
  const token = readToken();
  clearToken();
  isKnownSignedOut = true;
  saveRedirectTarget(currentPath());
  if (token) await endServerSession(token);
  try {
    if (!navigate) throw new Error('router not ready');
    await navigate(LOGIN_PATH);
  } catch (error) {
    console.error('navigation to login failed', error);
    window.location.assign(LOGIN_PATH);
  }
}

/** Back to the state of a fresh page load: no token in memory, the server not yet asked (tests start here). */
export function forgetSession(): void {
  current = null;
  isKnownSignedOut = false;
  restoring = null;
}
