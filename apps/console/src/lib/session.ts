import { storageKeys } from '@postern/contract';

// The session is the `token` cookie (console-spec §4, §9): SameSite=Strict, Secure only in production builds,
// lifetime from the login answer's expires_in. The redirect target survives a forced logout in localStorage.

const DEFAULT_REDIRECT = '/';
const LOGIN_PATH = '/login';

type Navigate = (to: string) => Promise<void>;
let navigate: Navigate | null = null;

/** The router registers itself here; session code must not import the router (it imports us). */
export function setSessionNavigator(fn: Navigate | null): void {
  navigate = fn;
}

export function readToken(): string | null {
  for (const part of document.cookie.split(';')) {
    const [rawName, ...rest] = part.trim().split('=');
    if (rawName === storageKeys.tokenCookie) {
      const value = decodeURIComponent(rest.join('='));
      return value === '' ? null : value;
    }
  }
  return null;
}

export function hasToken(): boolean {
  return readToken() !== null;
}

function cookieAttributes(maxAgeSeconds: number): string {
  const secure = import.meta.env.PROD ? '; Secure' : '';
  return `; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; SameSite=Strict${secure}`;
}

export function storeToken(token: string, expiresInSeconds: number): void {
  document.cookie = `${storageKeys.tokenCookie}=${encodeURIComponent(token)}${cookieAttributes(expiresInSeconds)}`;
}

export function clearToken(): void {
  document.cookie = `${storageKeys.tokenCookie}=${cookieAttributes(0)}`;
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

/** Clears the token, remembers where the user was and goes to the login screen. */
export async function logout(): Promise<void> {
  clearToken();
  saveRedirectTarget(currentPath());
  try {
    if (!navigate) throw new Error('router not ready');
    await navigate(LOGIN_PATH);
  } catch (error) {
    console.error('navigation to login failed', error);
    window.location.assign(LOGIN_PATH);
  }
}
