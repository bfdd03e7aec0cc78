import type { AgentConfig } from '@postern/contract';
import { checkConnection, type AgentApi } from '../api.js';
import type { Command } from '../args.js';
import { openAgentApi, resolveConnection, type CliContext } from '../context.js';
import { runDaemon, timingWithRefresh } from '../daemon.js';
import { DEFAULT_DOCKER_SOCKET, openDockerEngine, runLabelWatcher } from '../docker/watch.js';
import { GatewayUnreachableError } from '../errors.js';
import { acceptHealthUrl } from '../health.js';
import { DEFAULT_INTERFACE, readSettings, saveConnection } from '../store.js';
import { bringUpTunnel, findTools, readPeerStates, tearDownTunnel } from '../tunnel.js';
import { parseTunnelConfig } from '../wg-config.js';

const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 60_000;

/** How long connect waits for the first handshake before it reports the tunnel as "up, still trying". */
export const HANDSHAKE_WAIT_MS = 10_000;

export async function runConnect(context: CliContext, command: Extract<Command, { kind: 'connect' }>): Promise<number> {
  const { system, stdout, stderr, signal } = context;
  const connection = await resolveConnection(context, command.connection);
  const { url, token, pin, insecure, configDir } = connection;
  checkConnection(connection);
  await findTools(system);
  // A damaged settings file must not stop the connect that rewrites it.
  const previousIface = (await readSettings(system, configDir).catch(() => null))?.interface;
  const iface = command.iface ?? previousIface ?? DEFAULT_INTERFACE;
  const progress = (line: string) => stderr.write(`${line}\n`);

  progress(`Connecting to ${url} …`);
  const api = openAgentApi(context, connection);
  const {
    node,
    config: text,
    tunnelHealthUrl: offeredHealthUrl,
    gateways,
  } = command.daemon ? await fetchConfigPatiently(context, api) : await api.getConfig();
  const config = parseTunnelConfig(text);
  const tunnelHealthUrl = acceptHealthUrl(offeredHealthUrl);
  await saveConnection(
    system,
    configDir,
    {
      url,
      token,
      interface: iface,
      // What this connect trusted is what later commands and the daemon trust; no pin given: none stored.
      ...(pin === undefined ? {} : { pin }),
      ...(insecure ? { insecure: true as const } : {}),
      ...(tunnelHealthUrl === undefined ? {} : { tunnelHealthUrl }),
      ...(gateways === undefined ? {} : { gateways }),
    },
    text,
  );

  progress(`Bringing up ${iface} for node "${node.name}" …`);
  // One node key, one tunnel: an interface of an earlier connect under another name would fight this one.
  if (previousIface !== undefined && previousIface !== iface) await tearDownTunnel(system, previousIface);
  const implementation = await bringUpTunnel(system, iface, config, configDir);
  const others = config.peers.length - 1;
  const endpoint = `${config.endpoint ?? 'the gateway'}${others > 0 ? ` (and ${others} more gateway${others > 1 ? 's' : ''})` : ''}`;
  progress(`Waiting for the first handshake with ${endpoint} …`);
  const isConnected = await waitForHandshake(context, iface, signal);
  const address = config.addresses.join(', ');
  if (isConnected) {
    stdout.write(`Connected: ${iface} (${implementation}) ${address} via ${endpoint}\n`);
  } else {
    stderr.write(
      `Tunnel ${iface} (${implementation}) is up with ${address}, but no handshake with ${endpoint} yet; WireGuard keeps trying.\n`,
    );
  }
  if (!command.daemon) return 0;
  const timing = timingWithRefresh(context.env.refreshSeconds);
  // The label watcher ends with the daemon (same signal); a refused token ends both.
  const stopLabels = new AbortController();
  const onStop = () => stopLabels.abort();
  signal.addEventListener('abort', onStop, { once: true });
  const labels =
    command.docker === undefined
      ? Promise.resolve()
      : runLabelWatcher({
          engine: openDockerEngine(command.docker.socket ?? DEFAULT_DOCKER_SOCKET, command.docker.filter),
          api,
          system,
          log: stdout,
          signal: stopLabels.signal,
          configDir,
          resyncMs: timing.refreshMs,
        });
  const tunnel = runDaemon({
    system,
    api,
    iface,
    configDir,
    configText: text,
    log: stdout,
    signal,
    timing,
    ...(tunnelHealthUrl === undefined ? {} : { tunnelHealthUrl }),
    ...(gateways === undefined ? {} : { gateways }),
  });
  try {
    // Only a refused token ends the watcher early; then the tunnel stops too (the process exits with its code).
    await Promise.all([tunnel, labels]);
  } finally {
    stopLabels.abort();
    signal.removeEventListener('abort', onStop);
  }
  return 0;
}

/**
 * The daemon often starts before the network (boot, container start): it keeps trying an unreachable gateway
 * with growing pauses instead of exiting. Every other error (token, config) ends it.
 */
async function fetchConfigPatiently(context: CliContext, api: AgentApi): Promise<AgentConfig> {
  for (let pauseMs = RETRY_FIRST_MS; ; pauseMs = Math.min(pauseMs * 2, RETRY_MAX_MS)) {
    try {
      return await api.getConfig();
    } catch (error) {
      if (!(error instanceof GatewayUnreachableError)) throw error;
      context.stderr.write(`${error.message}; retrying in ${pauseMs / 1000} s\n`);
      await context.system.sleep(pauseMs, context.signal);
    }
  }
}

async function waitForHandshake(context: CliContext, iface: string, signal: AbortSignal): Promise<boolean> {
  const { system } = context;
  const deadline = system.now() + HANDSHAKE_WAIT_MS;
  while (!signal.aborted) {
    const peers = await readPeerStates(system, iface);
    if (peers.some((peer) => peer.latestHandshake > 0)) return true;
    if (system.now() >= deadline) return false;
    try {
      await system.sleep(200, signal);
    } catch {
      return false;
    }
  }
  return false;
}
