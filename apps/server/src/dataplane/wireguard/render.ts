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

/** One gateway a node's tunnel reaches (docs/SCALE-OUT.md: several gateways share one database). */
export interface NodeConfigGateway {
  publicKey: string;
  /** "host:port" the node dials. */
  endpoint: string;
  /** The gateway's tunnel address, no prefix. */
  address: string;
}

/** The one gateway (`gatewayPublicKey`, `endpoint`), or every live gateway in order (`gateways`, at least one). */
export type NodeConfigInput = NodeConfigBase &
  ({ gatewayPublicKey: string; endpoint: string; gateways?: never } | { gateways: NodeConfigGateway[] });

interface NodeConfigBase {
  nodePrivateKey: string;
  /** Node's tunnel address without prefix. */
  nodeAddress: string;
  presharedKey: string | null;
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

/**
 * The wg-quick file a node runs (download and agent API): one [Peer] per gateway, in the given order. With several
 * gateways each peer routes its own gateway's address (/32) and the first also the wide routes (the VPN subnet and
 * gateway networks, or 0.0.0.0/0): WireGuard picks the peer by longest prefix, so each gateway's replies go back to
 * it and everything else to the first (the CLI moves the wide routes on when the first one's handshake goes stale).
 * One gateway: no /32, the file exactly as before several gateways existed.
 */
export function renderNodeConfig(input: NodeConfigInput): string {
  const subnet = formatSubnet(parseSubnet(input.vpnSubnet));
  const wide = input.allowInternet
    ? ['0.0.0.0/0']
    : [subnet, ...(input.gatewayNetworkRoutes ?? []).map((cidr) => assertIPv4Cidr(cidr, 'gateway network route'))];
  const peers: (Omit<NodeConfigGateway, 'address'> & { address: string | null })[] =
    input.gateways === undefined
      ? [{ publicKey: input.gatewayPublicKey, endpoint: input.endpoint, address: null }]
      : input.gateways;
  if (peers.length === 0) throw new Error('a node config needs at least one gateway');
  const several = peers.length > 1;
  const keepalive = assertKeepalive(input.keepalive ?? DEFAULT_KEEPALIVE_SECONDS);
  const presharedKey = input.presharedKey === null ? null : assertWgKey(input.presharedKey, 'preshared key');
  const blocks = [
    [
      '[Interface]',
      `Address = ${assertIPv4(input.nodeAddress, 'node address')}/32`,
      `PrivateKey = ${assertWgKey(input.nodePrivateKey, 'node private key')}`,
    ],
    ...peers.map((peer, i) => {
      const own = several && peer.address !== null ? [`${assertIPv4(peer.address, 'gateway address')}/32`] : [];
      const routes = [...own, ...(i === 0 ? wide : [])];
      return [
        '[Peer]',
        `PublicKey = ${assertWgKey(peer.publicKey, 'gateway public key')}`,
        ...(presharedKey === null ? [] : [`PresharedKey = ${presharedKey}`]),
        `Endpoint = ${assertEndpoint(peer.endpoint)}`,
        `AllowedIPs = ${[...new Set(routes)].join(', ')}`,
        `PersistentKeepalive = ${keepalive}`,
      ];
    }),
  ];
  return `${blocks.map((block) => block.join('\n')).join('\n\n')}\n`;
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
