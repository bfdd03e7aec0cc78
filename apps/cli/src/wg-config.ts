import {
  firstHostAddress,
  isHostName,
  isIPv4,
  isIPv4Cidr,
  isIpOrCidr,
  isIPv6,
  isInSubnet,
  isPrintableAscii,
  isWireGuardKey,
} from '@postern/contract';

/** An IPv4 or IPv6 address, optionally with a prefix: what wg-quick's Address and AllowedIPs take. */
export function isWgAddress(value: string): boolean {
  if (isIpOrCidr(value) || isIPv6(value)) return true;
  const [ip = '', prefix, ...rest] = value.split('/');
  return rest.length === 0 && prefix !== undefined && isIPv6(ip) && /^(12[0-8]|1[01]\d|[1-9]?\d)$/.test(prefix);
}
import { CliError } from './errors.js';

// Splits the wg-quick text the gateway hands out into what `wg setconf` accepts plus what wg-quick itself would
// apply (Address, MTU, routes for AllowedIPs). Every value is checked against an allow-list because it ends up
// in `wg setconf` input and `ip` arguments; hook keys (PostUp, …) are never executed, only dropped.

export interface TunnelConfig {
  /** Interface addresses with prefix, e.g. `10.8.0.2/32`. */
  addresses: string[];
  mtu: number | null;
  /** Input for `wg setconf`: wg-quick-only keys removed. */
  setconf: string;
  /** Union of the peers' AllowedIPs: the routes to add. */
  allowedIps: string[];
  /** The first peer's endpoint (the gateway that carries the wide routes when all answer). */
  endpoint: string | null;
  /** The first peer's public key. */
  peerPublicKey: string | null;
  /** The `[Interface]` lines of `setconf` (checked): a change here needs a new interface, a peer change does not. */
  interfaceLines: string[];
  /** One per `[Peer]`, in the gateway's order (one per gateway: docs/SCALE-OUT.md). */
  peers: TunnelPeer[];
}

export interface TunnelPeer {
  publicKey: string;
  endpoint: string | null;
  allowedIps: string[];
  /**
   * The peer's checked `Key = Value` lines as `wg setconf` takes them, with `ALLOWED_IPS_SLOT` where its AllowedIPs
   * go (rendered from `allowedIps`, so the wide routes can move to another peer).
   */
  lines: string[];
}

export const ALLOWED_IPS_SLOT = 'AllowedIPs';

type Validator = (value: string) => string;

const interfaceKeys: Record<string, Validator> = {
  PrivateKey: wgKey,
  ListenPort: integerIn(0, 65535),
  FwMark: (value) => (value === 'off' ? value : integerIn(0, 0xffffffff)(value)),
};
const peerKeys: Record<string, Validator> = {
  PublicKey: wgKey,
  PresharedKey: wgKey,
  AllowedIPs: (value) => ipList(value).join(', '),
  Endpoint: endpoint,
  PersistentKeepalive: (value) => (value === 'off' ? value : integerIn(0, 65535)(value)),
};
/** wg-quick keys `wg setconf` does not know. Hooks are dropped on purpose: running config text is never allowed. */
const quickOnlyKeys = new Set([
  'Address',
  'DNS',
  'MTU',
  'Table',
  'PreUp',
  'PostUp',
  'PreDown',
  'PostDown',
  'SaveConfig',
]);

export function parseTunnelConfig(text: string): TunnelConfig {
  const addresses: string[] = [];
  const interfaceLines: string[] = [];
  const peers: TunnelPeer[] = [];
  let mtu: number | null = null;
  let section: 'Interface' | 'Peer' | null = null;
  let peer: TunnelPeer | null = null;

  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') return;
    const fail = (why: string): never => {
      throw new CliError(`Invalid WireGuard configuration from the gateway (line ${index + 1}): ${why}`);
    };
    const header = /^\[(Interface|Peer)\]$/.exec(line);
    if (header) {
      section = header[1] as 'Interface' | 'Peer';
      if (section === 'Interface' && (interfaceLines.length > 0 || addresses.length > 0 || peers.length > 0)) {
        fail('a second [Interface]');
      }
      peer = section === 'Peer' ? { publicKey: '', endpoint: null, allowedIps: [], lines: [] } : null;
      if (peer) peers.push(peer);
      return;
    }
    const pair = /^([A-Za-z]+)\s*=\s*(.*)$/.exec(line);
    if (!pair || section === null) return fail('expected "[Interface]", "[Peer]" or "Key = Value"');
    const key = pair[1] ?? '';
    const value = pair[2] ?? '';
    if (section === 'Interface' && key === 'Address') {
      addresses.push(...ipList(value).map(withHostPrefix));
    } else if (section === 'Interface' && key === 'MTU') {
      mtu = Number(integerIn(576, 65535)(value));
    } else if (quickOnlyKeys.has(key)) {
      // wg-quick-only setting we do not apply (DNS, hooks, routing table choice).
    } else {
      const validate = (section === 'Interface' ? interfaceKeys : peerKeys)[key];
      if (!validate) return fail(`unknown key ${JSON.stringify(key)}`);
      let checked: string;
      try {
        checked = validate(value);
      } catch {
        return fail(`invalid ${key}`);
      }
      if (peer === null) {
        interfaceLines.push(`${key} = ${checked}`);
      } else if (key === 'AllowedIPs') {
        if (!peer.allowedIps.length) peer.lines.push(ALLOWED_IPS_SLOT);
        peer.allowedIps.push(...ipList(value));
      } else {
        peer.lines.push(`${key} = ${checked}`);
        if (key === 'Endpoint') peer.endpoint = checked;
        if (key === 'PublicKey') peer.publicKey = checked;
      }
    }
  });

  if (!interfaceLines.some((line) => line.startsWith('PrivateKey = '))) {
    throw new CliError('Invalid WireGuard configuration from the gateway: no PrivateKey');
  }
  if (addresses.length === 0) throw new CliError('Invalid WireGuard configuration from the gateway: no Address');
  const keys = peers.map((item) => item.publicKey);
  if (keys.includes(''))
    throw new CliError('Invalid WireGuard configuration from the gateway: a [Peer] without PublicKey');
  if (new Set(keys).size !== keys.length) {
    throw new CliError('Invalid WireGuard configuration from the gateway: the same PublicKey in two [Peer] sections');
  }
  for (const item of peers) item.allowedIps = [...new Set(item.allowedIps)];
  const config: TunnelConfig = {
    addresses,
    mtu,
    setconf: '',
    allowedIps: [...new Set(peers.flatMap((item) => item.allowedIps))],
    endpoint: peers[0]?.endpoint ?? null,
    peerPublicKey: peers[0]?.publicKey ?? null,
    interfaceLines,
    peers,
  };
  config.setconf = renderSetconf(config, config.peerPublicKey);
  return config;
}

/** A host route (/32, /128): a gateway's own tunnel address, which stays with its peer. */
export function isHostRoute(cidr: string): boolean {
  const [ip = '', prefix] = cidr.split('/');
  return prefix === (isIPv4(ip) ? '32' : '128');
}

/**
 * The routes that may move between peers: the first peer's AllowedIPs other than its own host routes (the VPN
 * subnet, or 0.0.0.0/0 for a full tunnel). Only a config with several peers has any to move.
 */
export function wideRoutes(config: TunnelConfig): string[] {
  if (config.peers.length < 2) return [];
  return (config.peers[0]?.allowedIps ?? []).filter((cidr) => !isHostRoute(cidr));
}

/**
 * Each peer's AllowedIPs when `holder` (a peer's public key) carries the wide routes. WireGuard sends a packet to
 * the peer with the longest matching AllowedIPs entry, so each gateway's replies go to it and the rest to the holder.
 */
export function allowedIpsWithHolder(config: TunnelConfig, holder: string | null): Map<string, string[]> {
  const wide = wideRoutes(config);
  const first = config.peers[0]?.publicKey;
  const target = holder !== null && config.peers.some((peer) => peer.publicKey === holder) ? holder : first;
  return new Map(
    config.peers.map((peer) => {
      const own = peer.publicKey === first ? peer.allowedIps.filter((cidr) => !wide.includes(cidr)) : peer.allowedIps;
      return [peer.publicKey, peer.publicKey === target ? [...new Set([...own, ...wide])] : own];
    }),
  );
}

/** `wg setconf`/`wg syncconf` input with the wide routes on `holder` (null: on the first peer, as the gateway sent). */
export function renderSetconf(config: TunnelConfig, holder: string | null): string {
  const allowed = allowedIpsWithHolder(config, holder);
  const lines = ['[Interface]', ...config.interfaceLines];
  for (const peer of config.peers) {
    const ips = allowed.get(peer.publicKey) ?? [];
    lines.push('[Peer]');
    for (const line of peer.lines) {
      if (line !== ALLOWED_IPS_SLOT) lines.push(line);
      else if (ips.length > 0) lines.push(`AllowedIPs = ${ips.join(', ')}`);
    }
    // A peer whose config had no AllowedIPs can still be handed the wide routes.
    if (!peer.lines.includes(ALLOWED_IPS_SLOT) && ips.length > 0) lines.push(`AllowedIPs = ${ips.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Whether going from `a` to `b` needs a new interface (key, address, MTU, port, fwmark), not only peer changes. */
export function isInterfaceChanged(a: TunnelConfig, b: TunnelConfig): boolean {
  return (
    JSON.stringify([a.addresses, a.mtu, a.interfaceLines]) !== JSON.stringify([b.addresses, b.mtu, b.interfaceLines])
  );
}

/** The gateway's tunnel address a peer stands for: its own host route, else (one gateway) the subnet's first host. */
export function peerTunnelIp(config: TunnelConfig, peer: TunnelPeer): string | null {
  const own = peer.allowedIps.find((cidr) => isHostRoute(cidr) && isIPv4(cidr.split('/')[0] ?? ''));
  if (own !== undefined) return own.split('/')[0] ?? null;
  return config.peers.length === 1 ? findGatewayTunnelIp(config) : null;
}

/**
 * The gateway's own tunnel address: the first host of the VPN subnet, i.e. of the AllowedIPs entry that holds
 * the node's address. Null for a full tunnel (only 0.0.0.0/0), which does not name the subnet.
 */
export function findGatewayTunnelIp(config: TunnelConfig): string | null {
  const nodeIp = config.addresses.map((cidr) => cidr.split('/')[0] ?? '').find(isIPv4);
  if (!nodeIp) return null;
  const subnet = config.allowedIps.find(
    (cidr) => isIPv4Cidr(cidr) && !cidr.endsWith('/0') && !cidr.endsWith('/32') && isInSubnet(nodeIp, cidr),
  );
  if (!subnet) return null;
  return firstHostAddress(subnet);
}

export function isFullTunnel(config: TunnelConfig): boolean {
  return config.allowedIps.some((cidr) => cidr.endsWith('/0'));
}

function wgKey(value: string): string {
  if (!isWireGuardKey(value)) throw new Error('invalid key');
  return value;
}

function integerIn(min: number, max: number): Validator {
  return (value) => {
    if (!/^\d{1,10}$/.test(value) || Number(value) < min || Number(value) > max) throw new Error('out of range');
    return String(Number(value));
  };
}

function ipList(value: string): string[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0 || !items.every(isWgAddress)) {
    throw new CliError(`Invalid WireGuard configuration from the gateway: bad address list ${JSON.stringify(value)}`);
  }
  return items;
}

function withHostPrefix(address: string): string {
  if (address.includes('/')) return address;
  return isIPv4(address) ? `${address}/32` : `${address}/128`;
}

/** `[IPv6]`, IPv4 or a host name (any letter case: DNS ignores it). */
function isEndpointHost(host: string): boolean {
  if (host.startsWith('[') && host.endsWith(']')) return isIPv6(host.slice(1, -1));
  return isIPv4(host) || (isPrintableAscii(host) && isHostName(host.toLowerCase()));
}

function endpoint(value: string): string {
  const match = /^(.+):(\d{1,5})$/.exec(value);
  if (!match?.[1] || !match[2] || !isEndpointHost(match[1])) throw new Error('bad endpoint');
  integerIn(1, 65535)(match[2]);
  return value;
}
