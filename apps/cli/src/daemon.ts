import type { AgentConfig } from '@postern/contract';
import type { AgentApi } from './api.js';
import type { Output } from './context.js';
import { TokenRejectedError } from './errors.js';
import { acceptHealthUrl } from './health.js';
import { saveWireguardConfig, updateSettings } from './store.js';
import type { System } from './system.js';
import { bringUpTunnel, isInterfacePresent, readPeerStates, tearDownTunnel } from './tunnel.js';
import { parseTunnelConfig } from './wg-config.js';

// `connect --daemon`: keeps the tunnel up until SIGTERM/SIGINT. Level-triggered: each round compares what is
// (interface present, handshake fresh, config current) with what should be, and repairs the difference.

export interface DaemonTiming {
  /** How often the interface and the handshake are checked. */
  checkMs: number;
  /** How often the config is fetched again to pick up a new key, address or endpoint. */
  refreshMs: number;
  /**
   * WireGuard re-handshakes every ~2 minutes while keepalives (25 s) flow, so a handshake older than this means
   * the path is broken (network loss, gateway restarted with a new port, endpoint moved): recreate the interface,
   * which also resolves the endpoint's name again.
   */
  staleHandshakeMs: number;
}

export const DEFAULT_TIMING: DaemonTiming = { checkMs: 10_000, refreshMs: 60_000, staleHandshakeMs: 200_000 };

/** The default timing with another refresh interval; checks run at least as often as refreshes. */
export function timingWithRefresh(refreshSeconds: number | undefined): DaemonTiming {
  if (refreshSeconds === undefined) return DEFAULT_TIMING;
  const refreshMs = refreshSeconds * 1000;
  return { ...DEFAULT_TIMING, refreshMs, checkMs: Math.min(DEFAULT_TIMING.checkMs, refreshMs) };
}

export interface DaemonOptions {
  system: System;
  api: AgentApi;
  iface: string;
  configDir: string;
  /** The wg-quick text currently applied. */
  configText: string;
  log: Output;
  signal: AbortSignal;
  timing?: DaemonTiming;
  /** The tunnel health URL stored by connect; a different one from the gateway is stored for `status --health`. */
  tunnelHealthUrl?: string;
}

export async function runDaemon(options: DaemonOptions): Promise<void> {
  const { system, api, iface, signal, log } = options;
  const timing = options.timing ?? DEFAULT_TIMING;
  let applied = options.configText;
  let appliedAt = system.now();
  let refreshedAt = system.now();
  let healthUrl = options.tunnelHealthUrl;
  const say = (line: string) => log.write(`${new Date(system.now()).toISOString()} ${line}\n`);

  const reapply = async (reason: string, text: string): Promise<void> => {
    say(`${reason}: recreating ${iface}`);
    appliedAt = system.now();
    try {
      await bringUpTunnel(system, iface, parseTunnelConfig(text), options.configDir);
      applied = text;
      say(`${iface} is up again`);
    } catch (error) {
      say(`could not bring ${iface} up: ${messageOf(error)}; retrying in ${Math.round(timing.checkMs / 1000)} s`);
    }
  };

  say(`watching ${iface}`);
  try {
    while (await pause(system, timing.checkMs, signal)) {
      if (system.now() - refreshedAt >= timing.refreshMs) {
        refreshedAt = system.now();
        const latest = await fetchConfig(api, say);
        const latestHealthUrl = acceptHealthUrl(latest?.tunnelHealthUrl);
        if (latestHealthUrl !== undefined && latestHealthUrl !== healthUrl) {
          await updateSettings(system, options.configDir, { tunnelHealthUrl: latestHealthUrl });
          healthUrl = latestHealthUrl;
        }
        if (latest !== null && hasTunnelChanged(applied, latest.config, say)) {
          await saveWireguardConfig(system, options.configDir, latest.config);
          await reapply("the gateway changed this node's configuration", latest.config);
          continue;
        }
      }
      if (!(await isInterfacePresent(system, iface))) {
        await reapply(`${iface} disappeared`, applied);
        continue;
      }
      const lastHandshakeMs = Math.max(
        ...(await readPeerStates(system, iface)).map((peer) => peer.latestHandshake * 1000),
        0,
      );
      const since = system.now() - Math.max(lastHandshakeMs, appliedAt);
      if (since > timing.staleHandshakeMs) await reapply(`no handshake for ${Math.round(since / 1000)} s`, applied);
    }
  } finally {
    say(`stopping: removing ${iface}`);
    await tearDownTunnel(system, iface);
  }
}

/**
 * Compares what would be applied, not the text, so a comment or blank line added on the gateway's side does not
 * cost an outage. A config that does not parse is reported and ignored: the tunnel keeps the one that works.
 */
function hasTunnelChanged(applied: string, latest: string, say: (line: string) => void): boolean {
  if (latest === applied) return false;
  try {
    return JSON.stringify(parseTunnelConfig(latest)) !== JSON.stringify(parseTunnelConfig(applied));
  } catch (error) {
    say(`${messageOf(error)}; keeping the current configuration`);
    return false;
  }
}

/** The new config, or null when the gateway cannot be reached right now (the tunnel keeps its old config). */
async function fetchConfig(api: AgentApi, say: (line: string) => void): Promise<AgentConfig | null> {
  try {
    return await api.getConfig();
  } catch (error) {
    if (error instanceof TokenRejectedError) throw error;
    say(messageOf(error));
    return null;
  }
}

/** Resolves false when the process was asked to stop. */
async function pause(system: System, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await system.sleep(ms, signal);
    return true;
  } catch {
    return false;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
