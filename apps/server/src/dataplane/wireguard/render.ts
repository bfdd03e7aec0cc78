import type { DesiredPeer } from '../types.js';
import {
  assertHost,
  assertIPv4,
  assertIPv4Cidr,
  assertIPv4OrCidr,
  assertPort,
  assertWgKey,
  isIPv4,
  isPort,
} from '../validate.js';
import { formatSubnet, parseSubnet } from './addresses.js';

// Pure wg-quick / `wg setconf` renderers. Every value is validated against an allow-list first: a newline in
// a key would otherwise let a value add its own `[Peer]` or `PostUp` line.

export const DEFAULT_KEEPALIVE_SECONDS = 25;

export interface NodeConfigInput {
  nodePrivateKey: string;
  /** Node's tunnel address without prefix. */
  nodeAddress: string;
  presharedKey: string | null;
  gatewayPublicKey: string;
  /** "host:port" the node dials. */
  endpoint: string;
  vpnSubnet: string;
  /** Extra subnets the node should send into the tunnel (e.g. reachable through the gateway). */
  gatewayNetworkRoutes?: string[];
  /** Full tunnel: all IPv4 traffic goes through the gateway. */
  allowInternet: boolean;
  keepalive?: number;
}

function assertEndpoint(endpoint: string): string {
  const match = /^(.+):(\d{1,5})$/.exec(endpoint);
  if (!match?.[1] || !match[2]) throw new Error(`invalid endpoint: ${JSON.stringify(endpoint)}`);
  assertHost(match[1], 'endpoint host');
  assertPort(Number(match[2]), 'endpoint port');
  return endpoint;
}

function assertKeepalive(value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > 65535) throw new Error(`invalid keepalive: ${value}`);
  return value;
}

/** The wg-quick file a node runs (download and agent API). */
export function renderNodeConfig(input: NodeConfigInput): string {
  const subnet = formatSubnet(parseSubnet(input.vpnSubnet));
  const routes = input.allowInternet
    ? ['0.0.0.0/0']
    : [subnet, ...(input.gatewayNetworkRoutes ?? []).map((cidr) => assertIPv4Cidr(cidr, 'gateway network route'))];
  const lines = [
    '[Interface]',
    `Address = ${assertIPv4(input.nodeAddress, 'node address')}/32`,
    `PrivateKey = ${assertWgKey(input.nodePrivateKey, 'node private key')}`,
    '',
    '[Peer]',
    `PublicKey = ${assertWgKey(input.gatewayPublicKey, 'gateway public key')}`,
    ...(input.presharedKey === null ? [] : [`PresharedKey = ${assertWgKey(input.presharedKey, 'preshared key')}`]),
    `Endpoint = ${assertEndpoint(input.endpoint)}`,
    `AllowedIPs = ${[...new Set(routes)].join(', ')}`,
    `PersistentKeepalive = ${assertKeepalive(input.keepalive ?? DEFAULT_KEEPALIVE_SECONDS)}`,
  ];
  return `${lines.join('\n')}\n`;
}

export interface ServerConfigInput {
  privateKey: string;
  listenPort: number;
  /** `endpoint`: where the peer was last seen, so a re-added peer (reconnect, restart) is dialled at once. */
  peers: (DesiredPeer & { endpoint?: string | null })[];
}

const IPV4_ENDPOINT_RE = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/;

/** Gateway-side keepalive towards a peer whose endpoint is known: starts a handshake as soon as the peer is set. */
export const GATEWAY_KEEPALIVE_SECONDS = 25;

export function isIPv4Endpoint(endpoint: string): boolean {
  const match = IPV4_ENDPOINT_RE.exec(endpoint);
  return Boolean(match?.[1] && match[2] && isIPv4(match[1]) && isPort(Number(match[2])));
}

function assertIPv4Endpoint(endpoint: string): string {
  if (!isIPv4Endpoint(endpoint)) throw new Error(`invalid peer endpoint: ${JSON.stringify(endpoint)}`);
  return endpoint;
}

/** The gateway side for `wg syncconf`: interface key and port, one [Peer] per enabled node. */
export function renderServerConfig(input: ServerConfigInput): string {
  const blocks = [
    [
      '[Interface]',
      `PrivateKey = ${assertWgKey(input.privateKey, 'gateway private key')}`,
      `ListenPort = ${assertPort(input.listenPort, 'listen port')}`,
    ],
    ...input.peers.map((peer) => [
      '[Peer]',
      `PublicKey = ${assertWgKey(peer.publicKey, 'peer public key')}`,
      ...(peer.presharedKey === null ? [] : [`PresharedKey = ${assertWgKey(peer.presharedKey, 'preshared key')}`]),
      `AllowedIPs = ${peer.allowedIps.map((ip) => assertIPv4OrCidr(ip, 'peer allowed IP')).join(', ')}`,
      ...(peer.endpoint
        ? [`Endpoint = ${assertIPv4Endpoint(peer.endpoint)}`, `PersistentKeepalive = ${GATEWAY_KEEPALIVE_SECONDS}`]
        : []),
    ]),
  ];
  return `${blocks.map((block) => block.join('\n')).join('\n\n')}\n`;
}
