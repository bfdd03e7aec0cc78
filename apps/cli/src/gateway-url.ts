import { BlockList, isIP } from 'node:net';
import { CliError, UsageError } from './errors.js';

// Which gateway URLs the CLI talks to. The token and the node's private key travel in these requests, so plain
// HTTP is accepted only where it never crosses the internet: loopback and private or on-link addresses.

const INVALID_URL_HINT = 'expected http(s)://host[:port]';

export function parseGatewayUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`Invalid gateway URL ${JSON.stringify(url)}: ${INVALID_URL_HINT}`);
  }
  if (
    (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') ||
    parsed.username !== '' ||
    parsed.password !== ''
  ) {
    throw new CliError(`Invalid gateway URL ${JSON.stringify(url)}: ${INVALID_URL_HINT}`);
  }
  return parsed;
}

/**
 * Loopback and addresses that are never routed on the internet:
 * - 127.0.0.0/8, ::1 (loopback);
 * - 10/8, 172.16/12, 192.168/16 (RFC 1918) and fc00::/7 (unique local);
 * - 100.64.0.0/10 (RFC 6598 shared space: carrier-grade NAT, and overlays such as Tailscale);
 * - 169.254/16 and fe80::/10 (link-local: the same wire only).
 * IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) count as their IPv4 address.
 */
const local = new BlockList();
local.addSubnet('127.0.0.0', 8, 'ipv4');
local.addSubnet('10.0.0.0', 8, 'ipv4');
local.addSubnet('172.16.0.0', 12, 'ipv4');
local.addSubnet('192.168.0.0', 16, 'ipv4');
local.addSubnet('100.64.0.0', 10, 'ipv4');
local.addSubnet('169.254.0.0', 16, 'ipv4');
local.addAddress('::1', 'ipv6');
local.addSubnet('fc00::', 7, 'ipv6');
local.addSubnet('fe80::', 10, 'ipv6');

/**
 * Whether plain HTTP to this URL host stays off the internet. A host NAME counts as public (it may resolve
 * anywhere, and DNS can be spoofed), except `localhost`.
 */
export function isLocalOrPrivateHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost') return true;
  const family = isIP(host);
  if (family === 0) return false;
  return local.check(host, family === 6 ? 'ipv6' : 'ipv4');
}

export const INSECURE_HINT =
  "use the gateway's https:// address (the console shows the connect command, with --pin for a self-signed certificate), " +
  'or pass --insecure to send them unencrypted anyway';

/** Refuses plain HTTP to a public address unless the user said --insecure. */
export function checkGatewayUrl(url: string, options: { insecure: boolean }): URL {
  const parsed = parseGatewayUrl(url);
  if (parsed.protocol === 'http:' && !options.insecure && !isLocalOrPrivateHost(parsed.hostname)) {
    throw new UsageError(
      `Refusing plain-HTTP gateway URL ${url}: the access token and the node's WireGuard key would cross the internet unencrypted; ${INSECURE_HINT}.`,
    );
  }
  return parsed;
}
