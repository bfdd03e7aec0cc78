import { BlockList, isIPv6 } from 'node:net';

// The control plane speaks plain HTTP. nginx publishes the console and API over HTTPS and reaches the control
// plane on loopback, so any wider listen address serves sign-in and the API unencrypted to whoever can reach it.

export interface ListenAddress {
  address: string;
  port: number;
}

interface WarningLogger {
  warn(fields: object, message: string): void;
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

export function isLoopbackAddress(address: string): boolean {
  // BlockList also matches IPv4-mapped IPv6 (::ffff:127.0.0.1) against the IPv4 rule.
  return loopback.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
}

/**
 * Logs one warning when the control plane listens beyond loopback (0.0.0.0, ::, a LAN or public address), naming
 * the addresses and the setting. Takes the bound addresses (`app.addresses()`), so a host name is judged by what
 * it resolved to. Returns whether it warned.
 */
export function warnIfPlainHttpBeyondLoopback(
  logger: WarningLogger,
  addresses: readonly (ListenAddress | string)[],
): boolean {
  // A string is a unix socket path: local by nature.
  const exposed = addresses.filter(
    (entry): entry is ListenAddress => typeof entry !== 'string' && !isLoopbackAddress(entry.address),
  );
  if (exposed.length === 0) return false;
  const shown = exposed.map((entry) =>
    isIPv6(entry.address) ? `[${entry.address}]:${entry.port}` : `${entry.address}:${entry.port}`,
  );
  logger.warn(
    { addresses: shown, setting: 'POSTERN_HOST' },
    `The control plane serves plain HTTP on ${shown.join(', ')}, beyond loopback: sign-in, session tokens and the API ` +
      'cross the network unencrypted. Unless that network is trusted, set POSTERN_HOST=127.0.0.1 (the default) and ' +
      'use the console and API through nginx at https://<POSTERN_PUBLIC_HOST>.',
  );
  return true;
}
