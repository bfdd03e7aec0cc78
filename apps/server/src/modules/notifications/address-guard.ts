import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import { isRefusedIPv4, isRefusedIPv6 } from '@postern/contract';
import { METADATA_ADDRESSES } from '../../lib/network-guard.js';

// Where a notification may go (docs/api.md "Notifications", "Outbound addresses"). A channel's URL or SMTP host is
// an address the gateway connects to on the admin's word, and the answer to a DNS question, or a redirect, is not
// the admin's word: so every address a name resolves to is checked when it is sent to, and the connection is made
// to the checked address (the lookup below is the socket's own), never to a second answer. Redirects are not
// followed. Refused: this machine (loopback, 0/8, every address of its interfaces, so no service bound to a public
// address is reached from inside either), link-local (169.254/16 and fe80::/10: the clouds' metadata services),
// the known metadata addresses, multicast and broadcast, and the tunnel network (POSTERN_VPN_SUBNET: the nodes'
// tunnel addresses are the gateway's way into them, never a place for a message). Private LAN addresses are allowed:
// a Mattermost, ntfy or mail relay in the LAN is a normal place to send to.

export class RefusedAddressError extends Error {}

export interface AddressPolicy {
  /** Why the gateway never connects to `address`; null when it may. */
  refusal(address: string): string | null;
}

export interface AddressPolicyOptions {
  /** POSTERN_VPN_SUBNET. */
  vpnSubnet: string;
  /** This machine's addresses (default: every interface's, read at each check: addresses come and go). */
  localAddresses?: () => string[];
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));
}

const METADATA = new Set(METADATA_ADDRESSES.map(([address]) => address));

export function createAddressPolicy(options: AddressPolicyOptions): AddressPolicy {
  const tunnel = ipaddr.parseCIDR(options.vpnSubnet);
  const local = options.localAddresses ?? interfaceAddresses;
  return {
    refusal(address) {
      if (!ipaddr.isValid(address)) return 'not an IP address';
      const parsed = ipaddr.process(address);
      const plain = parsed.toString();
      if (parsed.kind() === 'ipv4' ? isRefusedIPv4(plain) : isRefusedIPv6(plain))
        return 'a loopback, link-local, multicast or unspecified address';
      if (METADATA.has(plain)) return 'a cloud metadata address';
      if (parsed.kind() === 'ipv4' && tunnel[0].kind() === 'ipv4' && parsed.match(tunnel)) return 'the tunnel network';
      const own = local().map((entry) => (ipaddr.isValid(entry) ? ipaddr.process(entry).toString() : entry));
      if (own.includes(plain)) return "one of this gateway's own addresses";
      return null;
    },
  };
}

/** What resolves a host name: every IPv4 and IPv6 address of it (the system's resolver, /etc/hosts first). */
export type Resolve = (host: string) => Promise<string[]>;

export const systemResolve: Resolve = async (host) => (await dnsLookup(host, { all: true })).map((a) => a.address);

/**
 * The addresses of `host` the gateway may connect to, in the resolver's order. Refused when any of them is refused:
 * a name that also points at this machine is not one to send to.
 */
export async function resolveAllowed(host: string, policy: AddressPolicy, resolve: Resolve): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses = isIP(bare) ? [bare] : await resolve(bare);
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  for (const address of addresses) {
    const why = policy.refusal(address);
    if (why !== null)
      throw new RefusedAddressError(
        `${host}${address === bare ? '' : ` resolves to ${address}, which`} is ${why}: notifications are never sent there`,
      );
  }
  return addresses;
}

/**
 * A `lookup` for node:http(s)/net: the socket connects only to addresses `resolveAllowed` passed (with Node's
 * happy-eyeballs it asks for all of them).
 */
export function guardedLookup(policy: AddressPolicy, resolve: Resolve): LookupFunction {
  return (hostname, options, callback) => {
    resolveAllowed(hostname, policy, resolve).then(
      (addresses) => {
        const entries = addresses.map((address) => ({ address, family: isIP(address) }));
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const fitting = wanted === 0 ? entries : entries.filter((entry) => entry.family === wanted);
        if (options.all) {
          callback(null, fitting);
          return;
        }
        const first = fitting[0];
        if (first) callback(null, first.address, first.family);
        else callback(new Error(`${hostname} has no IPv${String(wanted)} address`), '', 0);
      },
      (error: unknown) => {
        callback(error instanceof Error ? error : new Error(String(error)), '', 0);
      },
    );
  };
}
