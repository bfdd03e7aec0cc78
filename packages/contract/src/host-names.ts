import { isIPv4 } from './validators.js';

// Host-name syntax: the one rule for the API's input, the data plane's render-time check, the CLI's reading of a
// WireGuard config and the gateway's settings. Lower case only: callers fold case first where input may have it
// (after isPrintableAscii, so no look-alike letter folds into ASCII).
//
// A label is 1 to 63 of [a-z0-9-], neither starting nor ending with '-' (RFC 1123 §2.1 allows a leading digit:
// `1password.com`). The right-most label is never all digits (RFC 3696 §2): `1.2.3` or `999.1.1.1` is a mistyped
// address, and read as a name it would go to DNS instead of failing. A name is at most 253 characters, without the
// trailing dot.

const LABEL = '(?!-)[a-z0-9-]{1,63}(?<!-)';
const hostNameRe = new RegExp(`^(${LABEL}\\.)*(?![0-9]+$)${LABEL}$`);
/** The top-level label of a public domain: letters, or an internationalised one in its ASCII form (RFC 5890). */
const topLevelLabelRe = /^(xn--[a-z0-9-]{1,59}|[a-z]{2,63})$/;

/** A host name (lower case): one label (`db`, `localhost`) or several, no wildcard, no trailing dot. */
export function isHostName(value: string): boolean {
  return value.length <= 253 && hostNameRe.test(value);
}

/**
 * A fully qualified public domain (lower case): a host name of at least two labels whose top-level label is letters
 * or an A-label (`xn--…`), as a certificate authority issues for. `localhost` or `db.lan2` are host names, not domains.
 */
export function isDomainName(value: string): boolean {
  const topLevel = value.slice(value.lastIndexOf('.') + 1);
  return value.includes('.') && isHostName(value) && topLevelLabelRe.test(topLevel);
}

/**
 * A wildcard domain, `*.example.com`: `*` as the whole left-most label of a name that is itself a domain (so at least
 * `*.example.com`, never `*.com`). Like a certificate's wildcard (RFC 6125) it covers exactly one label:
 * `app.example.com`, not `example.com` nor `a.b.example.com`.
 */
export function isWildcardDomainName(value: string): boolean {
  return value.startsWith('*.') && isDomainName(value.slice(2));
}

/** A domain entry's name: a domain, or a wildcard domain. */
export function isDomainOrWildcard(value: string): boolean {
  return isDomainName(value) || isWildcardDomainName(value);
}

/** The wildcard domain that would cover `name` (`app.example.com` → `*.example.com`), or null when none could. */
export function wildcardOf(name: string): string | null {
  if (!isDomainName(name)) return null;
  const parent = name.slice(name.indexOf('.') + 1);
  return isDomainName(parent) ? `*.${parent}` : null;
}

/** Whether a certificate name (a domain or a wildcard, RFC 6125) covers the host name `name`. */
export function certificateNameCovers(certName: string, name: string): boolean {
  const pattern = certName.toLowerCase();
  const host = name.toLowerCase();
  return pattern === host || (pattern.startsWith('*.') && wildcardOf(host) === pattern);
}

/** A backend host: an IPv4 address or a host name (single-label names like `db` or `localhost` too). */
export function isBackendHost(value: string): boolean {
  return isIPv4(value) || isHostName(value);
}
