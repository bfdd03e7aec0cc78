import { assertIPv4Cidr } from '../validate.js';

// IPv4 address arithmetic for the tunnel subnet. Addresses are handled as unsigned 32-bit integers.

export interface Subnet {
  /** Network address as an integer. */
  network: number;
  prefix: number;
  /** Number of addresses in the subnet, network and broadcast included. */
  size: number;
}

export function ipToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

export function intToIp(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/** Parses "10.44.0.0/16"; host bits are ignored ("10.44.0.1/16" gives the same subnet). */
export function parseSubnet(cidr: string): Subnet {
  assertIPv4Cidr(cidr, 'subnet');
  const [ip = '', prefixText = ''] = cidr.split('/');
  const prefix = Number(prefixText);
  if (prefix > 30) throw new Error(`subnet ${cidr} is too small: it needs room for the gateway and nodes`);
  const size = 2 ** (32 - prefix);
  const network = Math.floor(ipToInt(ip) / size) * size;
  return { network, prefix, size };
}

export function formatSubnet(subnet: Subnet): string {
  return `${intToIp(subnet.network)}/${subnet.prefix}`;
}

export function isInSubnet(ip: string, subnet: Subnet): boolean {
  const n = ipToInt(ip);
  return n >= subnet.network && n < subnet.network + subnet.size;
}

/** The gateway takes the first host address, e.g. 10.44.0.1 in 10.44.0.0/16. */
export function gatewayAddress(subnet: string): string {
  return intToIp(parseSubnet(subnet).network + 1);
}

/**
 * Lowest free host address for a new node, skipping network, gateway and broadcast. `used` holds the
 * addresses already given out (without prefix). A linear scan is fine: at 10,000 nodes it is ~10,000 Set lookups.
 */
export function allocateAddress(subnet: string, used: ReadonlySet<string>): string {
  const net = parseSubnet(subnet);
  const last = net.network + net.size - 2; // broadcast excluded
  for (let n = net.network + 2; n <= last; n++) {
    const ip = intToIp(n);
    if (!used.has(ip)) return ip;
  }
  throw new Error(`VPN subnet ${formatSubnet(net)} is full: no free address for a new node`);
}
