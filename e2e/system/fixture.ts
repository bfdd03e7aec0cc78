import type { NodeCreate, NodeCreated } from '@postern/contract';
import type { ApiClient } from '../harness/api.js';
import { startBackend, type BackendKind } from '../harness/backends.js';
import { startGateway, type Gateway } from '../harness/gateway.js';
import { Lab } from '../harness/lab.js';
import { createSystemTopology, type SystemTopology } from '../harness/topology.js';
import { startWireguard, waitForHandshake, type WireguardInterface } from '../harness/wireguard.js';

// The shared starting point of the system tests: the topology, the real gateway in its namespace, and a signed-in
// API client. Nodes join the way an operator sets them up: create through the API, download the config, bring
// WireGuard up from it on the node.

export interface System {
  lab: Lab;
  topology: SystemTopology;
  gateway: Gateway;
  api: ApiClient;
}

/** The gateway's extra environment, or what makes it once the namespaces exist (e.g. a database started in them). */
export type SystemEnv = Record<string, string> | ((topology: SystemTopology) => Promise<Record<string, string>>);

export async function startSystem(lab = new Lab(), gatewayEnv: SystemEnv = {}): Promise<System> {
  const topology = await createSystemTopology(lab);
  const env = typeof gatewayEnv === 'function' ? await gatewayEnv(topology) : gatewayEnv;
  const gateway = await startGateway(lab, {
    ns: topology.gatewayNs,
    apiIp: topology.gatewayMgmtIp,
    publicHost: topology.gatewayPublicIp,
    wgInterface: lab.ifName('gw'),
    // e.g. POSTERN_E2E_GATEWAY_LOG=debug: the data plane's timings (bench/apply prints them).
    env: {
      ...env,
      ...(process.env.POSTERN_E2E_GATEWAY_LOG ? { POSTERN_LOG_LEVEL: process.env.POSTERN_E2E_GATEWAY_LOG } : {}),
    },
  });
  return { lab, topology, gateway, api: await gateway.login() };
}

export interface ConnectedNode {
  node: NodeCreated;
  ns: string;
  /** The node's address inside the tunnel, from the API. */
  tunnelIp: string;
  wg: WireguardInterface;
  /** Starts a backend bound to the tunnel address; its answers carry the node's role as label. */
  serve(kind: BackendKind, port: number): Promise<void>;
}

/**
 * Creates a node through the API and brings it up in a new namespace at internet address .hostIndex.
 * `role` (at most 7 lower-case characters) names the namespace and the WireGuard interface.
 */
export async function connectNode(
  system: System,
  role: string,
  hostIndex: number,
  body: Partial<NodeCreate> = {},
): Promise<ConnectedNode> {
  return joinNode(system, await system.api.createNode({ name: `e2e-${role}`, ...body }), role, hostIndex);
}

/** Brings up an existing node: downloads its config and starts WireGuard from it, as `postern connect` would. */
export async function joinNode(
  system: System,
  node: NodeCreated,
  role: string,
  hostIndex: number,
): Promise<ConnectedNode> {
  if (node.address === null) throw new Error(`node ${node.id} has no tunnel address`);
  const tunnelIp = node.address;
  const config = await system.api.downloadNodeConfig(node.id);
  const { ns } = await system.topology.addHost(role, hostIndex);
  const wg = await startWireguard(system.lab, ns, system.lab.ifName(role), config);
  await waitForHandshake(wg, 15_000);
  return {
    node,
    ns,
    tunnelIp,
    wg,
    serve: async (kind, port) => {
      await startBackend(system.lab, ns, kind, tunnelIp, port, role);
    },
  };
}

/** Removes everything the system made and says what, if anything, survived (should be nothing). */
export async function stopSystem(system: System | undefined): Promise<string[]> {
  if (system === undefined) return [];
  await system.lab.destroy();
  return system.lab.leftovers();
}
