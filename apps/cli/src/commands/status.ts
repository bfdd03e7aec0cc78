import { formatBytes, isIPv4, type NodeStatusValue, type WgDumpPeer } from '@postern/contract';
import { z } from 'zod';
import type { Command } from '../args.js';
import { labelsStatePath } from '../docker/watch.js';
import { httpClientFor, openAgentApi, resolveConfigDir, type CliContext } from '../context.js';
import { acceptHealthUrl, probeGateway, type ProbeTarget } from '../health.js';
import { DEFAULT_INTERFACE, readSettings, readWireguardConfig, type StoredSettings } from '../store.js';
import { isInterfacePresent, readPeerStates } from '../tunnel.js';
import { isFullTunnel, isHostRoute, parseTunnelConfig, peerTunnelIp, type TunnelConfig } from '../wg-config.js';

export interface TunnelStatus {
  interface: string;
  configured: boolean;
  up: boolean;
  gatewayUrl: string | null;
  address: string | null;
  /** Of the gateway that carries the routes (the only one, with one gateway), like endpoint and latestHandshake. */
  gatewayTunnelIp: string | null;
  endpoint: string | null;
  /** ISO time of the latest handshake, null before the first one. */
  latestHandshake: string | null;
  /** Over every gateway. */
  transferRx: number;
  transferTx: number;
  /** One per WireGuard peer, in the gateway's order (several gateways on one database: docs/SCALE-OUT.md). */
  gateways: GatewayStatus[];
  /** The node as the gateway sees it; not asked with --health, so probes stay cheap and local. */
  node: { name: string; status: NodeStatusValue; enabled: boolean } | null;
  /** Why the gateway could not be asked (unreachable, token revoked), else null. */
  gatewayError: string | null;
  /** Only with --health: whether the gateway answered through the tunnel. */
  healthy?: boolean;
  /**
   * With `connect --daemon --docker`: the containers whose labels could not be published, as the watcher last saw
   * them (labels.json, docs/LABELS.md); absent when the watcher never ran.
   */
  labels?: { checkedAt: string; problems: { container: string; key?: string | undefined; message: string }[] };
}

export interface GatewayStatus {
  /** From the agent config stored by connect (and kept current by the daemon); null when unknown. */
  name: string | null;
  publicKey: string;
  address: string | null;
  endpoint: string | null;
  latestHandshake: string | null;
  transferRx: number;
  transferTx: number;
  /** Carries the wide routes (the VPN subnet, or a full tunnel's default route); the others only their own address. */
  routes: boolean;
  /** Only with --health. */
  healthy?: boolean;
}

/** The API question in `status` is a courtesy: it must not make the command hang. */
const NODE_QUERY_TIMEOUT_MS = 3000;

export type HealthProbe = (target: ProbeTarget) => Promise<boolean>;

export async function runStatus(
  context: CliContext,
  command: Extract<Command, { kind: 'status' }>,
  probe: HealthProbe = (target) =>
    probeGateway(target, { client: httpClientFor(context, 'pin' in target ? target.pin : undefined) }),
): Promise<number> {
  const { status, probeTargets } = await readStatus(context, command.local, !command.health);
  if (command.health) {
    // Every gateway at once: the probes take up to 2 s each. The node is reachable through any gateway that answers.
    const answers = await Promise.all(
      probeTargets.map((target) => (status.up && target !== null ? probe(target) : Promise.resolve(false))),
    );
    status.gateways.forEach((gateway, index) => (gateway.healthy = answers[index] ?? false));
    status.healthy = status.up && answers.some(Boolean);
  }
  context.stdout.write(
    command.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status, context.system.now()),
  );
  return command.health && !status.healthy ? 1 : 0;
}

async function readStatus(
  context: CliContext,
  local: { configDir?: string; iface?: string },
  shouldAskGateway: boolean,
): Promise<{ status: TunnelStatus; probeTargets: (ProbeTarget | null)[] }> {
  const { system } = context;
  const configDir = resolveConfigDir(context, local.configDir);
  const settings = await readSettings(system, configDir);
  const text = await readWireguardConfig(system, configDir);
  const config = text === null ? null : parseTunnelConfig(text);
  const iface = local.iface ?? settings?.interface ?? DEFAULT_INTERFACE;
  const up = await isInterfacePresent(system, iface);
  const states = up ? await readPeerStates(system, iface) : [];
  const gateways = describeGateways(config, states, settings);
  const holder = gateways.find((gateway) => gateway.routes) ?? gateways[0];
  const status: TunnelStatus = {
    interface: iface,
    configured: settings !== null && config !== null,
    up,
    gatewayUrl: settings?.url ?? null,
    address: config?.addresses[0] ?? null,
    gatewayTunnelIp: holder?.address ?? null,
    endpoint: holder?.endpoint ?? null,
    latestHandshake: holder?.latestHandshake ?? null,
    transferRx: gateways.reduce((sum, gateway) => sum + gateway.transferRx, 0),
    transferTx: gateways.reduce((sum, gateway) => sum + gateway.transferTx, 0),
    gateways,
    ...(shouldAskGateway && settings !== null
      ? await askGateway(context, settings)
      : { node: null, gatewayError: null }),
    ...(await readLabelProblems(context, configDir)),
  };
  return { status, probeTargets: findProbeTargets(settings, config, gateways) };
}

const LabelsStateSchema = z.object({
  checkedAt: z.string(),
  problems: z.array(z.object({ container: z.string(), key: z.string().optional(), message: z.string() })),
});

async function readLabelProblems(context: CliContext, configDir: string): Promise<Pick<TunnelStatus, 'labels'>> {
  const text = await context.system.readText(labelsStatePath(configDir));
  if (text === null) return {};
  try {
    return { labels: LabelsStateSchema.parse(JSON.parse(text)) };
  } catch {
    return {};
  }
}

/**
 * The config's peers in order, with the interface's state matched by public key (a peer the interface has and the
 * config not, e.g. from another connect, comes last). Who carries the routes is read from the interface: the daemon
 * may have moved them off the first gateway.
 */
function describeGateways(
  config: TunnelConfig | null,
  states: WgDumpPeer[],
  settings: StoredSettings | null,
): GatewayStatus[] {
  const configured = config?.peers ?? [];
  const byKey = new Map(states.map((state) => [state.publicKey, state]));
  // One peer each side is the one gateway, whatever key the interface shows (as before several gateways existed).
  const single = configured.length === 1 && states.length === 1 ? states[0] : undefined;
  const rows: GatewayStatus[] = configured.map((peer, index) => {
    const state = single ?? byKey.get(peer.publicKey);
    const known = settings?.gateways?.find((gateway) => gateway.publicKey === peer.publicKey);
    return {
      name: known?.name ?? null,
      publicKey: peer.publicKey,
      address: (config && peerTunnelIp(config, peer)) ?? known?.address ?? null,
      endpoint: state?.endpoint ?? peer.endpoint,
      latestHandshake: handshakeTime(state),
      transferRx: state?.transferRx ?? 0,
      transferTx: state?.transferTx ?? 0,
      routes: state === undefined ? index === 0 : state.allowedIps.some((cidr) => !isHostRoute(cidr)),
    };
  });
  const unknown = states.filter(
    (state) => single === undefined && !configured.some((p) => p.publicKey === state.publicKey),
  );
  for (const state of unknown) {
    rows.push({
      name: null,
      publicKey: state.publicKey,
      address: null,
      endpoint: state.endpoint,
      latestHandshake: handshakeTime(state),
      transferRx: state.transferRx,
      transferTx: state.transferTx,
      routes: state.allowedIps.some((cidr) => !isHostRoute(cidr)),
    });
  }
  return rows;
}

function handshakeTime(state: WgDumpPeer | undefined): string | null {
  return state && state.latestHandshake > 0 ? new Date(state.latestHandshake * 1000).toISOString() : null;
}

/**
 * One probe target per gateway row. Several gateways: each gateway's own tunnel health URL (from the stored
 * gateway list). One gateway: its tunnel health URL when it gave one; else (an older gateway) its API's health route
 * at the tunnel address. A full tunnel routes everything through the gateway, so its public host answers through
 * the tunnel too.
 */
function findProbeTargets(
  settings: StoredSettings | null,
  config: TunnelConfig | null,
  gateways: GatewayStatus[],
): (ProbeTarget | null)[] {
  if (settings === null || config === null) return gateways.length > 0 ? gateways.map(() => null) : [null];
  const localAddress = config.addresses.map((cidr) => cidr.split('/')[0] ?? '').find(isIPv4);
  if (localAddress === undefined) return gateways.map(() => null);
  if (gateways.length > 1 && settings.gateways !== undefined) {
    return gateways.map((gateway) => {
      const known = settings.gateways?.find((item) => item.publicKey === gateway.publicKey);
      const healthUrl = acceptHealthUrl(known?.tunnelHealthUrl);
      return healthUrl === undefined ? null : { healthUrl, localAddress };
    });
  }
  const single = findProbeTarget(settings, config, localAddress, gateways.find((gateway) => gateway.routes)?.address);
  return gateways.length > 1 ? gateways.map((gateway) => (gateway.routes ? single : null)) : [single];
}

function findProbeTarget(
  settings: StoredSettings,
  config: TunnelConfig,
  localAddress: string,
  gatewayTunnelIp: string | null | undefined,
): ProbeTarget | null {
  if (settings.tunnelHealthUrl !== undefined) return { healthUrl: settings.tunnelHealthUrl, localAddress };
  const host = gatewayTunnelIp ?? (isFullTunnel(config) ? new URL(settings.url).hostname : null);
  if (host === null) return null;
  return { gatewayUrl: settings.url, host, localAddress, ...(settings.pin === undefined ? {} : { pin: settings.pin }) };
}

async function askGateway(
  context: CliContext,
  settings: StoredSettings,
): Promise<Pick<TunnelStatus, 'node' | 'gatewayError'>> {
  try {
    const api = openAgentApi(
      context,
      {
        url: settings.url,
        token: settings.token,
        insecure: settings.insecure === true,
        ...(settings.pin === undefined ? {} : { pin: settings.pin }),
      },
      NODE_QUERY_TIMEOUT_MS,
    );
    const node = await api.getNode();
    return { node: { name: node.name, status: node.status, enabled: node.enabled }, gatewayError: null };
  } catch (error) {
    return { node: null, gatewayError: error instanceof Error ? error.message : String(error) };
  }
}

export function formatStatus(status: TunnelStatus, now: number): string {
  const rows: [string, string][] = [
    ['Interface', `${status.interface} (${status.up ? 'up' : 'down'})`],
    ['Gateway', status.gatewayUrl ?? 'not configured: run "postern connect --url URL --token TOKEN"'],
  ];
  if (status.node)
    rows.push(['Node', `${status.node.name} (${status.node.status}${status.node.enabled ? '' : ', disabled'})`]);
  if (status.gatewayError) rows.push(['Node', `unknown: ${status.gatewayError}`]);
  rows.push(['Address', status.address ?? '-']);
  const ago = (time: string | null) =>
    time === null ? 'never' : `${Math.max(0, Math.round((now - Date.parse(time)) / 1000))} s ago`;
  if (status.gateways.length > 1) {
    const holder = status.gateways.find((gateway) => gateway.routes);
    rows.push([
      'Gateways',
      `${status.gateways.length}${holder ? `, routes via ${printable(holder.name ?? holder.publicKey)}` : ''}`,
    ]);
    const names = status.gateways.map((gateway) => printable(gateway.name ?? gateway.publicKey));
    const endpoints = status.gateways.map((gateway) => gateway.endpoint ?? '-');
    const handshakes = status.gateways.map((gateway) => (status.up ? `handshake ${ago(gateway.latestHandshake)}` : ''));
    const width = (column: string[]) => Math.max(...column.map((cell) => cell.length));
    status.gateways.forEach((gateway, index) => {
      const cells = [
        (names[index] ?? '').padEnd(width(names)),
        (endpoints[index] ?? '').padEnd(width(endpoints)),
        (handshakes[index] ?? '').padEnd(width(handshakes)),
        (gateway.routes ? 'routes' : '').padEnd(6),
        gateway.healthy === undefined ? '' : gateway.healthy ? 'health ok' : 'health failing',
      ];
      rows.push([
        '',
        cells
          .filter((cell) => cell !== '')
          .join('  ')
          .trimEnd(),
      ]);
    });
  } else {
    rows.push(['Endpoint', status.endpoint ?? '-']);
    if (status.up) rows.push(['Handshake', ago(status.latestHandshake)]);
  }
  if (status.up) {
    rows.push(['Transfer', `${formatBytes(status.transferRx)} received, ${formatBytes(status.transferTx)} sent`]);
  }
  if (status.healthy !== undefined) {
    const answering = status.gateways.filter((gateway) => gateway.healthy).length;
    const which =
      status.gateways.length > 1
        ? `${answering} of ${status.gateways.length} gateways answer through the tunnel`
        : 'the gateway answers through the tunnel';
    rows.push(['Health', status.healthy ? `ok (${which})` : 'failing']);
  }
  if (status.labels) {
    const { problems } = status.labels;
    rows.push([
      'Labels',
      problems.length === 0
        ? `every labelled container published (checked ${ago(status.labels.checkedAt)})`
        : `${problems.length} problem${problems.length === 1 ? '' : 's'} (checked ${ago(status.labels.checkedAt)})`,
    ]);
    for (const problem of problems.slice(0, 20)) {
      const where = problem.key === undefined ? problem.container : `${problem.container} (${problem.key})`;
      rows.push(['', printable(`${where}: ${problem.message}`)]);
    }
    if (problems.length > 20) rows.push(['', `… and ${problems.length - 20} more (postern status --json)`]);
  }
  return rows.map(([label, value]) => `${(label === '' ? '' : `${label}:`).padEnd(11)}${value}\n`).join('');
}

/** Names come from the gateway's answer: never let one write control characters to the terminal. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?');
}
