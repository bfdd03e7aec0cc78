// Allow-list validators for every value that can end up in an nginx or WireGuard config. They accept only
// what is needed and nothing that could break out of a quoted config token (no quotes, spaces, ';', '{', '$').

const IPV4_OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = `${IPV4_OCTET}(\\.${IPV4_OCTET}){3}`;
const ipv4Re = new RegExp(`^${IPV4}$`);
const ipv4CidrRe = new RegExp(`^${IPV4}/(3[0-2]|[12]?\\d)$`);

export function isIPv4(value: string): boolean {
  return ipv4Re.test(value);
}

export function isIPv4Cidr(value: string): boolean {
  return ipv4CidrRe.test(value);
}

/** IPv6 in any RFC 4291 textual form (no zone id, no embedded IPv4 tail needed here). */
export function isIPv6(value: string): boolean {
  if (!/^[0-9a-fA-F:]{2,39}$/.test(value)) return false;
  const doubleColons = value.split('::').length - 1;
  if (doubleColons > 1) return false;
  const groups = value.split(':');
  if (doubleColons === 0) return groups.length === 8 && groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g));
  const [head = '', tail = ''] = value.split('::');
  const parts = [...(head ? head.split(':') : []), ...(tail ? tail.split(':') : [])];
  return parts.length <= 7 && parts.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g));
}

/**
 * An IPv4 address, optionally with a prefix length, for `allow`/`deny` lists. The gateway serves IPv4 only, so
 * an IPv6 entry could never match a client.
 */
export function isIpOrCidr(value: string): boolean {
  return isIPv4(value) || isIPv4Cidr(value);
}

/**
 * A URL path prefix: starts with '/', only RFC 3986 unreserved characters and '/', no empty segment, and no segment
 * ending in '.' (which also rules out '.' and '..'). The data plane's renderer accepts exactly this set, so whatever
 * is stored can be served; and the data plane's loose reading of a request path (postern.lua: trailing dots dropped,
 * see the dataplane README's "Paths: one canonical form") leaves every such prefix as it is, but for letter case.
 */
export function isPathLocation(value: string): boolean {
  return isPathLocationSyntax(value) && !hasDotEndedSegment(value);
}

/** isPathLocation's characters and length (it has a message of its own). */
export function isPathLocationSyntax(value: string): boolean {
  return value.length <= 255 && /^\/[A-Za-z0-9._~\-/]*$/.test(value) && !value.includes('//');
}

/** Whether a segment of the path ends in '.' (`/a.`, `/./b`, `/..`): isPathLocation's other rule. */
export function hasDotEndedSegment(value: string): boolean {
  return value.split('/').some((segment) => segment.endsWith('.'));
}

/**
 * A path location as it is stored, compared and served: nginx treats `/api` and `/api/` as the same prefix, so
 * trailing slashes are dropped (`/` stays `/`).
 */
export function normalizePathLocation(path: string): string {
  return path.replace(/\/+$/, '') || '/';
}

const isAtOrBelow = (path: string, prefix: string): boolean =>
  prefix === '/' || path === prefix || path.startsWith(`${prefix}/`);

/**
 * Whether two path locations of one host differ only in letter case where it matters: one equals or lies below the
 * other once ASCII letters are folded, but not as written (`/Adm` and `/adm`, `/Docs` and `/docs/api`). The data
 * plane refuses a request that lies between two such spellings (postern.lua's within()), so they cannot both be
 * served on one host: the later one is refused (422) or set aside.
 */
export function pathLocationsDifferInCase(a: string, b: string): boolean {
  const [x, y] = [normalizePathLocation(a), normalizePathLocation(b)];
  const [foldedX, foldedY] = [x.toLowerCase(), y.toLowerCase()];
  return (isAtOrBelow(foldedX, foldedY) && !isAtOrBelow(x, y)) || (isAtOrBelow(foldedY, foldedX) && !isAtOrBelow(y, x));
}

/**
 * Printable ASCII and nothing else. Checked before a value is lower-cased: `toLowerCase` folds some non-ASCII
 * letters into ASCII ones (U+212A KELVIN SIGN becomes "k"), which would let a look-alike name pass as another.
 */
export function isPrintableAscii(value: string): boolean {
  return /^[\x21-\x7e]*$/.test(value);
}

/**
 * Paths the gateway keeps for itself on every host (ACME HTTP-01 answers, the data plane's internal locations),
 * and those it keeps on the host of services without a domain (the console's API, the Path of its session cookie).
 */
export const reservedPaths = {
  always: ['/.well-known/acme-challenge', '/_postern'],
  withoutDomain: ['/api'],
} as const;

/**
 * The reserved prefix a service path equals or lies below, or null. Compared after the normalisation a request
 * path can get on its way to nginx (repeated slashes merged, trailing slashes dropped) and without regard to the
 * case of ASCII letters: nginx matches case-sensitively, but a case variant of a reserved path has no use that
 * would be worth the doubt.
 */
export function findReservedPath(path: string, hasDomain: boolean): string | null {
  const normalised = normalizePathLocation(path.replace(/\/{2,}/g, '/')).replace(/[A-Z]/g, (c) => c.toLowerCase());
  const prefixes: readonly string[] = hasDomain
    ? reservedPaths.always
    : [...reservedPaths.always, ...reservedPaths.withoutDomain];
  return prefixes.find((prefix) => isAtOrBelow(normalised, prefix)) ?? null;
}

export function isPort(value: number): boolean {
  return Number.isInteger(value) && value >= 1 && value <= 65535;
}
