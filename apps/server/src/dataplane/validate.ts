// Allow-list validators for every value the data plane writes into a WireGuard or nginx config. The contract
// validates input before it is stored; these run again at render time so a bad row can never become config
// (defence in depth: the renderers are the last gate before text that a root process parses).

import { isBackendHost, isHostName, isIPv4, isIPv4Cidr, isIpOrCidr, isPathLocation, isPort } from '@postern/contract';

// The same allow-lists the contract applies to input, so whatever is stored can be rendered.
export { isIPv4, isIPv4Cidr, isPort };

const BASE64_KEY_RE = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
const IFNAME_RE = /^[A-Za-z0-9_-]{1,15}$/;

/** An IPv4 address or CIDR, as used by allow/deny and AllowedIPs. */
export const isIPv4OrCidr = isIpOrCidr;

/** Lower-case DNS name (no wildcard, no trailing dot, no all-digit top-level label). */
export const isHostname = isHostName;

/** A WireGuard key: exactly 32 bytes in canonical base64. */
export function isWgKey(value: string): boolean {
  return BASE64_KEY_RE.test(value);
}

/** URL path prefix: no spaces, quotes, braces, semicolons, `$`, `.`/`..` segments or `//`. */
export const isPathPrefix = isPathLocation;

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
export const assertHost = check(isBackendHost, 'host');
