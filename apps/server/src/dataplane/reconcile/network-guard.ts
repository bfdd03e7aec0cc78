import { isIPv4 } from '@postern/contract';
import {
  findNetworkClash,
  tokenNetworkPolicy,
  type NetworkFacts,
  type ReachedAddress,
} from '../../lib/network-guard.js';
import type { GatewayReach } from '../reach.js';
import type { DesiredPeer, DesiredState } from '../types.js';

// Subnets a gateway node's token set are checked when it sets them, and again on every apply: what the gateway
// reaches changes (the operator publishes a backend inside such a subnet, the host gains a route, a setting moves),
// and a subnet that has become unsafe must stop being routed rather than quietly take the gateway's traffic. Such
// a subnet is left out of the node's peer and routes (the node's other subnets keep working) and the node is
// reported with the reason (its applyError, for the operator). The operator's own subnets are the operator's
// decision and are not re-checked here.

export interface NetworkGuardOptions {
  vpnSubnet: string;
  /** POSTERN_NODE_NETWORK_MIN_PREFIX. */
  minPrefix: number;
  /** The host's own routes (every table, not the default route, not the WireGuard interface's). */
  hostNetworks: () => Promise<string[]>;
  /** The internet address a peer connects from, as the status poll last saw it. */
  underlayOf: (publicKey: string) => string | null;
  reach: Pick<GatewayReach, 'knownDestinations' | 'known'>;
}

export interface GuardedState {
  state: DesiredState;
  /** Node id → why some of its subnets are not routed. */
  rejected: Map<number, string>;
}

/** The backends the gateway reaches for services of nodes other than `selfId` (names as far as they are known). */
function backendsBesides(state: DesiredState, selfId: number, reach: NetworkGuardOptions['reach']): ReachedAddress[] {
  const backends: ReachedAddress[] = [];
  const add = (kind: string, serviceId: number, nodeId: number, host: string) => {
    if (nodeId === selfId) return;
    for (const address of isIPv4(host) ? [host] : reach.known(host)) {
      const named = host === address ? '' : ` (${host})`;
      backends.push({
        address,
        what: `the backend${named} of the ${kind} service ${String(serviceId)} of node ${String(nodeId)}`,
        kind: 'backend',
      });
    }
  };
  for (const route of state.http) add('HTTP', route.serviceId, route.nodeId, route.backendHost);
  for (const route of state.stream) add(route.proto.toUpperCase(), route.serviceId, route.nodeId, route.backendHost);
  return backends;
}

const subnetsOf = (peer: DesiredPeer): string[] => peer.allowedIps.filter((cidr) => cidr !== `${peer.address}/32`);

export function createNetworkGuard(options: NetworkGuardOptions): (state: DesiredState) => Promise<GuardedState> {
  return async (state) => {
    const guarded = state.peers.filter((peer) => peer.networksByToken === true && subnetsOf(peer).length > 0);
    if (guarded.length === 0) return { state, rejected: new Map() };
    const rejected = new Map<number, string>();
    // Unreadable routes: nothing can be shown safe, so the token's subnets wait (and say why).
    const hostRoutes = await options.hostNetworks().catch(() => null);
    // The operator's subnets stand; a token's subnet must not overlap them, nor one of another token kept before it.
    const kept: NetworkFacts['gatewayNetworks'][number][] = state.peers
      .filter((peer) => peer.networksByToken !== true)
      .flatMap((peer) =>
        subnetsOf(peer).map((network) => ({ nodeId: peer.nodeId, who: `node ${String(peer.nodeId)}`, network })),
      );
    const underlay = state.peers.flatMap((peer) => {
      const ip = options.underlayOf(peer.publicKey);
      return ip === null ? [] : [{ who: `node ${String(peer.nodeId)}`, ip }];
    });
    const settings = options.reach.knownDestinations();
    const checked = new Map<number, DesiredPeer>();
    for (const peer of [...guarded].sort((a, b) => a.nodeId - b.nodeId)) {
      const facts: NetworkFacts = {
        vpnSubnet: options.vpnSubnet,
        gatewayNetworks: kept,
        underlay,
        hostRoutes: hostRoutes ?? [],
        reached: [...settings, ...backendsBesides(state, peer.nodeId, options.reach)],
      };
      const allowed: string[] = [];
      const reasons: string[] = [];
      for (const network of subnetsOf(peer)) {
        const why =
          hostRoutes === null
            ? "the host's routes could not be read"
            : (tokenNetworkPolicy(network, options.minPrefix) ?? findNetworkClash(network, facts, peer.nodeId));
        if (why === null) {
          allowed.push(network);
          kept.push({ nodeId: peer.nodeId, who: `node ${String(peer.nodeId)}`, network });
        } else reasons.push(`${network} (${why})`);
      }
      if (reasons.length === 0) continue;
      rejected.set(peer.nodeId, `Not routed (set by the node's token; the gateway needs it): ${reasons.join('; ')}`);
      checked.set(peer.nodeId, { ...peer, allowedIps: [`${peer.address}/32`, ...allowed] });
    }
    if (checked.size === 0) return { state, rejected };
    return { state: { ...state, peers: state.peers.map((peer) => checked.get(peer.nodeId) ?? peer) }, rejected };
  };
}
