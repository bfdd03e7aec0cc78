// IPv4 arithmetic, the one copy for the server, the CLI and the console (the data plane's Lua module has its own,
// in Lua). Addresses are unsigned 32-bit integers held in a JS number (bitwise operators would make them signed).
// Callers validate first (isIPv4, isIPv4Cidr in validators.ts): these functions do not check their input.

/** `10.1.2.3` → 167838211. */
export function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

/** 167838211 → `10.1.2.3`. */
export function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/** The prefix length of a CIDR; a bare address is a /32. */
export function cidrPrefix(cidr: string): number {
  return Number(cidr.split('/')[1] ?? '32');
}

/** An address or CIDR as written, as [address, prefix]: `10.0.0.5/8` → [167772165, 8] (host bits kept). */
export function cidrToInts(cidr: string): [number, number] {
  return [ipv4ToInt(cidr.split('/')[0] ?? ''), cidrPrefix(cidr)];
}

/** First and last address of a CIDR (host bits ignored) as integers; a bare address is a /32. */
export function cidrBounds(cidr: string): [number, number] {
  const [address, prefix] = cidrToInts(cidr);
  const size = 2 ** (32 - prefix);
  const start = Math.floor(address / size) * size;
  return [start, start + size - 1];
}

/** The CIDR with its host bits cleared: `10.0.0.5/8` → `10.0.0.0/8`. */
export function cidrNetwork(cidr: string): string {
  return `${intToIpv4(cidrBounds(cidr)[0])}/${cidrPrefix(cidr)}`;
}

/** The first host address of a subnet, the one after the network address: `10.44.0.0/16` → `10.44.0.1`. */
export function firstHostAddress(cidr: string): string {
  return intToIpv4(cidrBounds(cidr)[0] + 1);
}

/** Whether `ip` lies inside `cidr` (the network and broadcast addresses included). */
export function isInSubnet(ip: string, cidr: string): boolean {
  const [start, end] = cidrBounds(cidr);
  const value = ipv4ToInt(ip);
  return value >= start && value <= end;
}

/** Two CIDRs (or plain addresses) overlap when their ranges share an address. */
export function cidrsOverlap(a: string, b: string): boolean {
  const [aStart, aEnd] = cidrBounds(a);
  const [bStart, bEnd] = cidrBounds(b);
  return aStart <= bEnd && bStart <= aEnd;
}
