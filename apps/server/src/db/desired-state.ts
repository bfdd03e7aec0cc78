import { and, eq, or } from 'drizzle-orm';
import type { AppDeps } from '../deps.js';
import type { DesiredHttpRoute, DesiredPeer, DesiredState, DesiredStreamRoute } from '../dataplane/types.js';
import { gatewayAddress, parseSubnet } from '../dataplane/wireguard/addresses.js';
import { generateKeyPair, publicKeyFromPrivate } from '../dataplane/wireguard/keys.js';
import { domains, httpServices, nodes, settings, tcpServices } from './schema.js';

type StateDeps = Pick<AppDeps, 'db' | 'config' | 'secrets'>;

const GATEWAY_KEY_SETTING = 'gateway_private_key';

/**
 * The gateway's WireGuard private key, kept encrypted in `settings`. Created on first use; `onConflictDoNothing`
 * plus a re-read means two processes starting at once still agree on one key.
 */
export function getGatewayPrivateKey(deps: StateDeps): string {
  const read = () => deps.db.select({ value: settings.value }).from(settings).where(eq(settings.key, GATEWAY_KEY_SETTING)).get();
  let stored = read();
  if (!stored) {
    const { privateKey } = generateKeyPair();
    deps.db
      .insert(settings)
      .values({ key: GATEWAY_KEY_SETTING, value: deps.secrets.encrypt(privateKey) })
      .onConflictDoNothing()
      .run();
    stored = read();
    if (!stored) throw new Error('gateway key could not be stored');
  }
  return deps.secrets.decrypt(stored.value);
}

/** What node configs put in their [Peer] section for the gateway. */
export function getGatewayPublicKey(deps: StateDeps): string {
  return publicKeyFromPrivate(getGatewayPrivateKey(deps));
}

interface RouteNode {
  address: string;
  isGateway: boolean;
  isLocal: boolean;
}

/** A regular node only exposes its own tunnel address; gateway and local nodes target the stored host. */
const upstreamHost = (node: RouteNode, backendHost: string): string =>
  node.isGateway || node.isLocal ? backendHost : node.address;

/** Services are served when enabled and their node is connected; the local node is always "connected". */
const nodeServes = or(eq(nodes.enabled, true), eq(nodes.isLocal, true));

const routeNodeColumns = { address: nodes.address, isGateway: nodes.isGateway, isLocal: nodes.isLocal };

function loadPeers(deps: StateDeps): DesiredPeer[] {
  const rows = deps.db
    .select()
    .from(nodes)
    .where(and(eq(nodes.enabled, true), eq(nodes.isLocal, false)))
    .orderBy(nodes.id)
    .all();
  return rows.map((node) => ({
    nodeId: node.id,
    publicKey: node.publicKey,
    presharedKey: node.presharedKeyEnc ? deps.secrets.decrypt(node.presharedKeyEnc) : null,
    address: node.address,
    allowedIps: [`${node.address}/32`, ...(node.isGateway && node.gatewayNetwork ? [node.gatewayNetwork] : [])],
    // Full-tunnel nodes may leave through the gateway (forwarded and masqueraded); the others stay isolated.
    allowInternet: node.allowInternet,
  }));
}

function loadHttpRoutes(deps: StateDeps): DesiredHttpRoute[] {
  return deps.db
    .select({ service: httpServices, node: routeNodeColumns })
    .from(httpServices)
    .innerJoin(nodes, eq(nodes.id, httpServices.nodeId))
    .where(and(eq(httpServices.enabled, true), nodeServes))
    .orderBy(httpServices.id)
    .all()
    .map(({ service, node }) => ({
      serviceId: service.id,
      nodeId: service.nodeId,
      domain: service.domain === '' ? null : service.domain,
      pathLocation: service.pathLocation,
      backendProto: service.backendProto,
      backendHost: upstreamHost(node, service.backendHost),
      backendPort: service.backendPort,
      allowedIps: service.allowedIps,
      blockedIps: service.blockedIps,
    }));
}

function loadStreamRoutes(deps: StateDeps): DesiredStreamRoute[] {
  return deps.db
    .select({ service: tcpServices, node: routeNodeColumns })
    .from(tcpServices)
    .innerJoin(nodes, eq(nodes.id, tcpServices.nodeId))
    .where(and(eq(tcpServices.enabled, true), nodeServes))
    .orderBy(tcpServices.id)
    .all()
    .map(({ service, node }) => ({
      serviceId: service.id,
      nodeId: service.nodeId,
      proto: service.proto,
      port: service.port,
      ssl: service.ssl,
      domain: service.domain,
      backendHost: upstreamHost(node, service.backendHost),
      backendPort: service.backendPort,
      allowedIps: service.allowedIps,
      blockedIps: service.blockedIps,
    }));
}

/**
 * Everything the data plane serves, computed from the DB alone, so a restarted (or second) gateway converges on
 * exactly what the DB says. The reads share one transaction: a concurrent write cannot leave a route pointing at a
 * domain or node from a different moment.
 */
export function loadDesiredState(deps: StateDeps): DesiredState {
  const subnet = parseSubnet(deps.config.vpnSubnet);
  const gateway = {
    address: `${gatewayAddress(deps.config.vpnSubnet)}/${subnet.prefix}`,
    listenPort: deps.config.wgPort,
    privateKey: getGatewayPrivateKey(deps),
    publicHost: deps.config.publicHost,
  };
  return deps.db.transaction(() => ({
    gateway,
    peers: loadPeers(deps),
    http: loadHttpRoutes(deps),
    stream: loadStreamRoutes(deps),
    domains: deps.db
      .select({ domainId: domains.id, domain: domains.domain, ssl: domains.ssl })
      .from(domains)
      .orderBy(domains.id)
      .all(),
  }));
}
