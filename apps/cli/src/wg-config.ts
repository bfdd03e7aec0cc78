import {
  intToIpv4,
  ipv4ToInt,
  isIPv4,
  isIPv4Cidr,
  isIpOrCidr,
  isIPv6,
  isInSubnet,
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
  endpoint: string | null;
  peerPublicKey: string | null;
}

const HOST = /^(\[[0-9A-Fa-f:]+\]|[A-Za-z0-9.-]{1,253})$/;

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
  const setconf: string[] = [];
  const addresses: string[] = [];
  const allowedIps: string[] = [];
  let mtu: number | null = null;
  let endpointValue: string | null = null;
  let peerPublicKey: string | null = null;
  let section: 'Interface' | 'Peer' | null = null;

  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') return;
    const fail = (why: string): never => {
      throw new CliError(`Invalid WireGuard configuration from the gateway (line ${index + 1}): ${why}`);
    };
    const header = /^\[(Interface|Peer)\]$/.exec(line);
    if (header) {
      section = header[1] as 'Interface' | 'Peer';
      setconf.push(`[${section}]`);
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
      setconf.push(`${key} = ${checked}`);
      if (key === 'AllowedIPs') allowedIps.push(...ipList(value));
      if (key === 'Endpoint') endpointValue = checked;
      if (key === 'PublicKey') peerPublicKey = checked;
    }
  });

  if (!setconf.some((line) => line.startsWith('PrivateKey = '))) {
    throw new CliError('Invalid WireGuard configuration from the gateway: no PrivateKey');
  }
  if (addresses.length === 0) throw new CliError('Invalid WireGuard configuration from the gateway: no Address');
  return {
    addresses,
    mtu,
    setconf: `${setconf.join('\n')}\n`,
    allowedIps: [...new Set(allowedIps)],
    endpoint: endpointValue,
    peerPublicKey,
  };
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
  const [network = '', prefix = '32'] = subnet.split('/');
  const size = 2 ** (32 - Number(prefix));
  return intToIpv4(Math.floor(ipv4ToInt(network) / size) * size + 1);
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

function endpoint(value: string): string {
  const match = /^(.+):(\d{1,5})$/.exec(value);
  if (!match?.[1] || !match[2] || !HOST.test(match[1])) throw new Error('bad endpoint');
  integerIn(1, 65535)(match[2]);
  return value;
}
