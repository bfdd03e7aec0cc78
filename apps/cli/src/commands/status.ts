import { formatBytes, isIPv4, type NodeStatusValue } from '@postern/contract';
import type { Command } from '../args.js';
import { httpClientFor, openAgentApi, resolveConfigDir, type CliContext } from '../context.js';
import { probeGateway, type ProbeTarget } from '../health.js';
import { DEFAULT_INTERFACE, readSettings, readWireguardConfig, type StoredSettings } from '../store.js';
import { isInterfacePresent, readPeerStates } from '../tunnel.js';
import { findGatewayTunnelIp, isFullTunnel, parseTunnelConfig, type TunnelConfig } from '../wg-config.js';

export interface TunnelStatus {
  interface: string;
  configured: boolean;
  up: boolean;
  gatewayUrl: string | null;
  address: string | null;
  gatewayTunnelIp: string | null;
  endpoint: string | null;
  /** ISO time of the latest handshake, null before the first one. */
  latestHandshake: string | null;
  transferRx: number;
  transferTx: number;
  /** The node as the gateway sees it; not asked with --health, so probes stay cheap and local. */
  node: { name: string; status: NodeStatusValue; enabled: boolean } | null;
  /** Why the gateway could not be asked (unreachable, token revoked), else null. */
  gatewayError: string | null;
  /** Only with --health: whether the gateway answered through the tunnel. */
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
  const { status, probeTarget } = await readStatus(context, command.local, !command.health);
  if (command.health) status.healthy = status.up && probeTarget !== null && (await probe(probeTarget));
  context.stdout.write(
    command.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status, context.system.now()),
  );
  return command.health && !status.healthy ? 1 : 0;
}

async function readStatus(
  context: CliContext,
  local: { configDir?: string; iface?: string },
  shouldAskGateway: boolean,
): Promise<{ status: TunnelStatus; probeTarget: ProbeTarget | null }> {
  const { system } = context;
  const configDir = resolveConfigDir(context, local.configDir);
  const settings = await readSettings(system, configDir);
  const text = await readWireguardConfig(system, configDir);
  const config = text === null ? null : parseTunnelConfig(text);
  const iface = local.iface ?? settings?.interface ?? DEFAULT_INTERFACE;
  const up = await isInterfacePresent(system, iface);
  const peer = up ? (await readPeerStates(system, iface))[0] : undefined;
  const gatewayTunnelIp = config === null ? null : findGatewayTunnelIp(config);
  const status: TunnelStatus = {
    interface: iface,
    configured: settings !== null && config !== null,
    up,
    gatewayUrl: settings?.url ?? null,
    address: config?.addresses[0] ?? null,
    gatewayTunnelIp,
    endpoint: peer?.endpoint ?? config?.endpoint ?? null,
    latestHandshake: peer && peer.latestHandshake > 0 ? new Date(peer.latestHandshake * 1000).toISOString() : null,
    transferRx: peer?.transferRx ?? 0,
    transferTx: peer?.transferTx ?? 0,
    ...(shouldAskGateway && settings !== null
      ? await askGateway(context, settings)
      : { node: null, gatewayError: null }),
  };
  return { status, probeTarget: settings && config ? findProbeTarget(settings, config, gatewayTunnelIp) : null };
}

/**
 * The gateway's tunnel health URL when it gave one; else (an older gateway) its API's health route at the tunnel
 * address. A full tunnel routes everything through the gateway, so its public host answers through the tunnel too.
 */
function findProbeTarget(
  settings: StoredSettings,
  config: TunnelConfig,
  gatewayTunnelIp: string | null,
): ProbeTarget | null {
  const localAddress = config.addresses.map((cidr) => cidr.split('/')[0] ?? '').find(isIPv4);
  if (localAddress === undefined) return null;
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
  rows.push(['Address', status.address ?? '-'], ['Endpoint', status.endpoint ?? '-']);
  if (status.up) {
    const handshake =
      status.latestHandshake === null
        ? 'never'
        : `${Math.max(0, Math.round((now - Date.parse(status.latestHandshake)) / 1000))} s ago`;
    rows.push(
      ['Handshake', handshake],
      ['Transfer', `${formatBytes(status.transferRx)} received, ${formatBytes(status.transferTx)} sent`],
    );
  }
  if (status.healthy !== undefined)
    rows.push(['Health', status.healthy ? 'ok (the gateway answers through the tunnel)' : 'failing']);
  return rows.map(([label, value]) => `${`${label}:`.padEnd(11)}${value}\n`).join('');
}
