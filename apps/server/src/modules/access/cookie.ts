import { createHmac, timingSafeEqual } from 'node:crypto';
import { ACCESS_COOKIE_PREFIX } from '@postern/contract';

// The visitor cookie (docs/ACCESS.md "The session cookie"): `v1.<kid>.<payload>.<mac>`, the MAC an HMAC-SHA-256 of
// `v1.<kid>.<payload>|<host>`. nginx's Lua module (postern_access.lua) verifies exactly this; the host is in the MAC
// and not in the cookie, so a cookie made for one host fails on every other.

export interface CookiePayload {
  /** Session id (128 random bits, base64url): the unit of revocation. */
  s: string;
  /** The policy it was made under, and that policy's epoch then. */
  p: number;
  e: number;
  /** Expiry, unix seconds. */
  x: number;
  /** Identity for the backend's headers (printable ASCII). */
  u?: string;
  m?: string;
  g?: string[];
  /** A share link's path: the session is good below it only. */
  a?: string;
}

export const accessCookieName = (policyId: number): string => `${ACCESS_COOKIE_PREFIX}${policyId}`;

function macOf(key: Uint8Array, body: string, host: string): string {
  return createHmac('sha256', key).update(`${body}|${host}`).digest('base64url');
}

export function signAccessCookie(key: Uint8Array, kid: string, host: string, payload: CookiePayload): string {
  const body = `v1.${kid}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${body}.${macOf(key, body, host)}`;
}

/** The payload of a cookie this host's key made, or null (any other value, another host's, a changed byte). */
export function verifyAccessCookie(key: Uint8Array, kid: string, host: string, value: string): CookiePayload | null {
  const parts = value.split('.');
  if (parts.length !== 4 || parts[0] !== 'v1' || parts[1] !== kid) return null;
  const body = parts.slice(0, 3).join('.');
  const given = Buffer.from(parts[3] ?? '', 'base64url');
  const expected = Buffer.from(macOf(key, body, host), 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const payload = JSON.parse(Buffer.from(parts[2] ?? '', 'base64url').toString('utf8')) as CookiePayload;
    return typeof payload.s === 'string' && typeof payload.p === 'number' ? payload : null;
  } catch {
    return null;
  }
}

/**
 * A header value nginx may pass to a backend: printable ASCII only (a CR or LF would split the request); anything
 * else is percent-encoded, and so are commas inside one group name (the header is a comma-separated list).
 */
export function headerSafe(value: string, max = 256): string {
  let out = '';
  // Code points, not UTF-16 units: a character outside the BMP is encoded whole (a lone surrogate as U+FFFD).
  for (const c of Array.from(value.normalize('NFC'))) {
    out +=
      /^[\x20-\x7e]$/.test(c) && c !== '%'
        ? c
        : Array.from(Buffer.from(c, 'utf8'), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
    if (out.length >= max) break;
  }
  return out.slice(0, max);
}

/** Groups for the cookie: header-safe, commas encoded, at most 50 names and 1 KiB together. */
export function cookieGroups(groups: readonly string[]): string[] {
  const out: string[] = [];
  let size = 0;
  for (const group of groups) {
    const safe = headerSafe(group, 128).replace(/,/g, '%2C');
    if (safe === '' || out.length >= 50 || size + safe.length > 1024) continue;
    out.push(safe);
    size += safe.length + 1;
  }
  return out;
}
