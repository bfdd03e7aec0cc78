import { cidrBounds, cidrPrefix, firstHostAddress, intToIpv4 } from '@postern/contract';
import { assertIPv4Cidr } from '../validate.js';

// The tunnel subnet's numbering; the arithmetic itself is the contract's (packages/contract/src/ipv4.ts).

export interface Subnet {
  /** Network address as an integer. */
  network: number;
  prefix: number;
  /** Number of addresses in the subnet, network and broadcast included. */
  size: number;
}

/** Parses "10.44.0.0/16"; host bits are ignored ("10.44.0.1/16" gives the same subnet). */
export function parseSubnet(cidr: string): Subnet {
  assertIPv4Cidr(cidr, 'subnet');
  const prefix = cidrPrefix(cidr);
  if (prefix > 30) throw new Error(`subnet ${cidr} is too small: it needs room for the gateway and nodes`);
  const [network, last] = cidrBounds(cidr);
  return { network, prefix, size: last - network + 1 };
}

export function formatSubnet(subnet: Subnet): string {
  return `${intToIpv4(subnet.network)}/${subnet.prefix}`;
}

/** The gateway takes the first host address, e.g. 10.44.0.1 in 10.44.0.0/16. */
export function gatewayAddress(subnet: string): string {
  return firstHostAddress(formatSubnet(parseSubnet(subnet)));
}

/**
 * Lowest free host address for a new node, skipping network, gateway and broadcast. `used` holds the
 * addresses already given out (without prefix). A linear scan is fine: at 10,000 nodes it is ~10,000 Set lookups.
 */
export function allocateAddress(subnet: string, used: ReadonlySet<string>): string {
  const net = parseSubnet(subnet);
  const last = net.network + net.size - 2; // broadcast excluded
  for (let n = net.network + 2; n <= last; n++) {
    const ip = intToIpv4(n);
    if (!used.has(ip)) return ip;
  }
  throw new Error(`VPN subnet ${formatSubnet(net)} is full: no free address for a new node`);
}
