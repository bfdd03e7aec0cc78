// Allow-list validators for every value the data plane writes into a WireGuard or nginx config. The contract
// validates input before it is stored; these run again at render time so a bad row can never become config
// (defence in depth: the renderers are the last gate before text that a root process parses).

const IPV4_OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4_RE = new RegExp(`^${IPV4_OCTET}(?:\\.${IPV4_OCTET}){3}$`);
const HOST_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAME_RE = new RegExp(`^(?=.{1,253}$)${HOST_LABEL}(?:\\.${HOST_LABEL})*$`);
const BASE64_KEY_RE = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
const PATH_RE = /^\/[A-Za-z0-9._~\-/]*$/;
const IFNAME_RE = /^[A-Za-z0-9_-]{1,15}$/;

export function isIPv4(value: string): boolean {
  return IPV4_RE.test(value);
}

export function isIPv4Cidr(value: string): boolean {
  const [ip, prefix, ...rest] = value.split('/');
  return rest.length === 0 && ip !== undefined && isIPv4(ip) && prefix !== undefined && /^(?:3[0-2]|[12]?\d)$/.test(prefix);
}

/** An IPv4 address or CIDR, as used by allow/deny and AllowedIPs. */
export function isIPv4OrCidr(value: string): boolean {
  return isIPv4(value) || isIPv4Cidr(value);
}

/** Lower-case DNS name (no wildcard, no trailing dot). */
export function isHostname(value: string): boolean {
  return HOSTNAME_RE.test(value);
}

/** A WireGuard key: exactly 32 bytes in canonical base64. */
export function isWgKey(value: string): boolean {
  return BASE64_KEY_RE.test(value);
}

export function isPort(value: number): boolean {
  return Number.isInteger(value) && value >= 1 && value <= 65535;
}

/** URL path prefix: no spaces, quotes, braces, semicolons, `$`, `..` segments or `//`. */
export function isPathPrefix(value: string): boolean {
  return PATH_RE.test(value) && !value.includes('//') && !/(?:^|\/)\.\.?(?:\/|$)/.test(value) && value.length <= 1024;
}

export function isInterfaceName(value: string): boolean {
  return IFNAME_RE.test(value);
}

function check<T>(ok: (value: T) => boolean, what: string) {
  return (value: T, field = what): T => {
    if (!ok(value)) throw new Error(`invalid ${field}: ${JSON.stringify(value)}`);
    return value;
  };
}

export const assertIPv4 = check(isIPv4, 'IPv4 address');
export const assertIPv4Cidr = check(isIPv4Cidr, 'IPv4 CIDR');
export const assertIPv4OrCidr = check(isIPv4OrCidr, 'IPv4 address or CIDR');
export const assertHostname = check(isHostname, 'host name');
export const assertWgKey = check(isWgKey, 'WireGuard key');
export const assertPort = check(isPort, 'port');
export const assertPathPrefix = check(isPathPrefix, 'path');
export const assertInterfaceName = check(isInterfaceName, 'interface name');
export const assertPositiveInt = check((n: number) => Number.isSafeInteger(n) && n >= 0, 'id');

/** A backend or endpoint host: IPv4 literal or DNS name. */
export const assertHost = check((v: string) => isIPv4(v) || isHostname(v), 'host');
