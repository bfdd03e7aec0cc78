import { cidrNetwork, isIPv4, isIPv4Cidr } from '@postern/contract';
import { runCommand } from '../exec.js';

// The networks the gateway host reaches by itself, so the control plane can refuse a gateway node's network that
// would take one of them over. Every table counts, not only main: the local table holds the host's own addresses
// (one on `lo` is in no other table), and policy routing (a VPN client, a cloud agent, Kubernetes) keeps its routes
// in tables of their own. `ip -o` prints one route per line, e.g.
//   default via 192.0.2.1 dev eth0
//   192.0.2.0/24 dev eth0 proto kernel scope link src 192.0.2.2
//   blackhole 10.9.0.0/16
//   203.0.113.9 via 192.0.2.1 dev eth0
//   100.64.0.7 dev tailscale0 table 52
//   local 10.9.9.9 dev lo table local proto kernel scope host src 10.9.9.9
// A route type (unicast, blackhole, local, ...) may come first; a destination without a prefix is a single host.

const ROUTE_TYPES = new Set([
  'unicast',
  'local',
  'broadcast',
  'multicast',
  'throw',
  'unreachable',
  'prohibit',
  'blackhole',
  'nat',
  'anycast',
]);

/** Destinations of `ip -4 -o route show table all` output, skipping default routes and `wgInterface`'s routes. */
export function parseHostRoutes(output: string, wgInterface: string): string[] {
  const networks = new Set<string>();
  for (const line of output.split('\n')) {
    const words = line
      .trim()
      .split(/\s+/)
      .filter((word) => word !== '' && word !== '\\');
    if (ROUTE_TYPES.has(words[0] ?? '')) words.shift();
    const [destination] = words;
    if (destination === undefined || destination === 'default') continue;
    const dev = words.indexOf('dev');
    if (dev > 0 && words[dev + 1] === wgInterface) continue;
    const cidr = isIPv4(destination) ? `${destination}/32` : destination;
    if (isIPv4Cidr(cidr)) networks.add(cidrNetwork(cidr));
  }
  return [...networks];
}

/** The host's own IPv4 networks and addresses, every table, read with iproute2 (argv only, no shell). */
export async function readHostNetworks(wgInterface: string): Promise<string[]> {
  const { stdout } = await runCommand('ip', ['-4', '-o', 'route', 'show', 'table', 'all'], { timeoutMs: 5000 });
  return parseHostRoutes(stdout, wgInterface);
}
