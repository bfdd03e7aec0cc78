import type { AgentConfig, AgentGateway, WgDumpPeer } from '@postern/contract';
import type { AgentApi } from './api.js';
import type { Output } from './context.js';
import { TokenRejectedError } from './errors.js';
import { acceptHealthUrl } from './health.js';
import { saveWireguardConfig, updateSettings } from './store.js';
import type { System } from './system.js';
import {
  bringUpTunnel,
  isInterfacePresent,
  moveWideRoutes,
  readPeerStates,
  refreshEndpoint,
  tearDownTunnel,
  updatePeers,
} from './tunnel.js';
import { isInterfaceChanged, parseTunnelConfig, type TunnelConfig } from './wg-config.js';

// `connect --daemon`: keeps the tunnel up until SIGTERM/SIGINT. Level-triggered: each round compares what is
// (interface present, handshake fresh, config current) with what should be, and repairs the difference.
//
// Several gateways (docs/SCALE-OUT.md): one peer each. A new gateway list is applied to the running interface (peers
// added, removed, changed) so open connections survive; only a new key, address or MTU recreates it. The wide routes
// (the VPN subnet, or a full tunnel's default route) sit on one peer, the "holder": the first in the gateway's order.
// When the holder's handshake goes stale while another gateway's is fresh, they move to the first fresh one in that
// order; they move back at a refresh, once the gateway's first gateway handshakes again. Only when no gateway
// handshakes is the interface recreated, as with one gateway.

export interface DaemonTiming {
  /** How often the interface and the handshake are checked. */
  checkMs: number;
  /** How often the config is fetched again to pick up a new key, address or endpoint. */
  refreshMs: number;
  /**
   * WireGuard re-handshakes every ~2 minutes while keepalives (25 s) flow, so a handshake older than this means
   * the path is broken (network loss, gateway restarted with a new port, endpoint moved): recreate the interface,
   * which also resolves the endpoint's name again. With several gateways the same age marks one gateway as dead:
   * the wide routes leave it, and its endpoint is resolved again; the interface is recreated only when all are.
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
  /** The gateways stored by connect (names for the log); a different list from the gateway is stored for `status`. */
  gateways?: AgentGateway[];
}

export async function runDaemon(options: DaemonOptions): Promise<void> {
  const { system, api, iface, signal, log } = options;
  const timing = options.timing ?? DEFAULT_TIMING;
  let applied = options.configText;
  let config = parseTunnelConfig(applied);
  /** The peer that carries the wide routes; bringUpTunnel gives them to the first. */
  let holder = config.peerPublicKey;
  let appliedAt = system.now();
  /** When a peer was added or its endpoint set again: its handshake age counts from there. */
  const peerSince = new Map<string, number>();
  let refreshedAt = system.now();
  let healthUrl = options.tunnelHealthUrl;
  let gateways = options.gateways;
  const say = (line: string) => log.write(`${new Date(system.now()).toISOString()} ${line}\n`);
  const nameOf = (key: string) => gateways?.find((gateway) => gateway.publicKey === key)?.name ?? key;
  const handshakeAge = (key: string, states: WgDumpPeer[]) => {
    const handshakeMs = (states.find((peer) => peer.publicKey === key)?.latestHandshake ?? 0) * 1000;
    return system.now() - Math.max(handshakeMs, peerSince.get(key) ?? appliedAt);
  };
  const isFresh = (key: string, states: WgDumpPeer[]) => {
    const handshake = states.find((peer) => peer.publicKey === key)?.latestHandshake ?? 0;
    return handshake > 0 && system.now() - handshake * 1000 <= timing.staleHandshakeMs;
  };

  const reapply = async (reason: string, text: string): Promise<void> => {
    say(`${reason}: recreating ${iface}`);
    appliedAt = system.now();
    peerSince.clear();
    try {
      const parsed = parseTunnelConfig(text);
      await bringUpTunnel(system, iface, parsed, options.configDir);
      applied = text;
      config = parsed;
      holder = parsed.peerPublicKey;
      say(`${iface} is up again`);
    } catch (error) {
      say(`could not bring ${iface} up: ${messageOf(error)}; retrying in ${Math.round(timing.checkMs / 1000)} s`);
    }
  };

  const move = async (to: string, reason: string): Promise<void> => {
    if (holder === null || to === holder) return;
    say(`${reason}: moving the routes from ${nameOf(holder)} to ${nameOf(to)}`);
    try {
      await moveWideRoutes(system, iface, config, holder, to);
      holder = to;
    } catch (error) {
      say(`could not move the routes: ${messageOf(error)}`);
    }
  };

  /** The gateway list changed, nothing else: change the peers on the running interface. */
  const applyPeers = async (text: string, latest: TunnelConfig): Promise<void> => {
    const states = await readPeerStates(system, iface);
    const first = latest.peerPublicKey;
    const inLatest = (key: string | null): key is string => latest.peers.some((peer) => peer.publicKey === key);
    // The gateway's first, else the current holder, else any fresh one in order: never a gateway that is silent.
    const toHolder =
      [first, holder, ...latest.peers.map((peer) => peer.publicKey)].find(
        (key) => inLatest(key) && isFresh(key, states),
      ) ?? first;
    const before = new Set(config.peers.map((peer) => peer.publicKey));
    const after = new Set(latest.peers.map((peer) => peer.publicKey));
    const added = [...after].filter((key) => !before.has(key));
    const removed = [...before].filter((key) => !after.has(key));
    try {
      await updatePeers(system, iface, { from: config, fromHolder: holder, to: latest, toHolder }, options.configDir);
    } catch (error) {
      await reapply(`could not change the peers in place (${messageOf(error)})`, text);
      return;
    }
    for (const key of added) peerSince.set(key, system.now());
    for (const key of removed) peerSince.delete(key);
    const what = [
      added.length > 0 ? `added ${added.map(nameOf).join(', ')}` : '',
      removed.length > 0 ? `removed ${removed.map(nameOf).join(', ')}` : '',
    ].filter((part) => part !== '');
    say(`the gateway changed this node's peers${what.length > 0 ? ` (${what.join('; ')})` : ''}: applied in place`);
    if (toHolder !== null && toHolder !== holder) {
      say(
        `the routes go to ${nameOf(toHolder)}${holder !== null && inLatest(holder) ? ` instead of ${nameOf(holder)}` : ''}`,
      );
    }
    applied = text;
    config = latest;
    holder = toHolder;
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
        if (latest?.gateways !== undefined && JSON.stringify(latest.gateways) !== JSON.stringify(gateways)) {
          await updateSettings(system, options.configDir, { gateways: latest.gateways });
          gateways = latest.gateways;
        }
        if (latest !== null && hasTunnelChanged(applied, latest.config, say)) {
          await saveWireguardConfig(system, options.configDir, latest.config);
          const parsed = parseTunnelConfig(latest.config);
          if (isInterfaceChanged(config, parsed) || !(await isInterfacePresent(system, iface))) {
            await reapply("the gateway changed this node's configuration", latest.config);
          } else {
            await applyPeers(latest.config, parsed);
          }
          continue;
        }
        const first = config.peerPublicKey;
        if (latest !== null && first !== null && holder !== first) {
          if (isFresh(first, await readPeerStates(system, iface))) {
            await move(first, `${nameOf(first)} answers again and comes first in the gateway's list`);
          }
        }
      }
      if (!(await isInterfacePresent(system, iface))) {
        await reapply(`${iface} disappeared`, applied);
        continue;
      }
      const states = await readPeerStates(system, iface);
      const lastHandshakeMs = Math.max(...states.map((peer) => peer.latestHandshake * 1000), 0);
      const since = system.now() - Math.max(lastHandshakeMs, appliedAt);
      if (since > timing.staleHandshakeMs) {
        await reapply(`no handshake for ${Math.round(since / 1000)} s`, applied);
        continue;
      }
      if (holder !== null && handshakeAge(holder, states) > timing.staleHandshakeMs) {
        const next = config.peers.map((peer) => peer.publicKey).find((key) => key !== holder && isFresh(key, states));
        if (next !== undefined) {
          await move(
            next,
            `no handshake with ${nameOf(holder)} for ${Math.round(handshakeAge(holder, states) / 1000)} s`,
          );
        }
      }
      for (const peer of config.peers) {
        const age = handshakeAge(peer.publicKey, states);
        if (age <= timing.staleHandshakeMs || peer.endpoint === null) continue;
        say(
          `no handshake with ${nameOf(peer.publicKey)} for ${Math.round(age / 1000)} s: resolving its endpoint again`,
        );
        peerSince.set(peer.publicKey, system.now());
        await refreshEndpoint(system, iface, peer).catch((error: unknown) => say(messageOf(error)));
      }
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
