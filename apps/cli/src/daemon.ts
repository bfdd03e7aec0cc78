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

/**
 * The tunnel as the daemon keeps it: the config applied, which peer holds the wide routes, and when each peer's
 * handshake age starts counting. One method per repair; `refresh` and `check` are the two halves of a round.
 */
class TunnelWatch {
  private readonly system: System;
  private readonly iface: string;
  private readonly timing: DaemonTiming;
  private applied: string;
  private config: TunnelConfig;
  /** The peer that carries the wide routes; bringUpTunnel gives them to the first. */
  private holder: string | null;
  private appliedAt: number;
  /** When a peer was added or its endpoint set again: its handshake age counts from there. */
  private readonly peerSince = new Map<string, number>();
  refreshedAt: number;
  private healthUrl: string | undefined;
  private gateways: AgentGateway[] | undefined;

  constructor(private readonly options: DaemonOptions) {
    this.system = options.system;
    this.iface = options.iface;
    this.timing = options.timing ?? DEFAULT_TIMING;
    this.applied = options.configText;
    this.config = parseTunnelConfig(this.applied);
    this.holder = this.config.peerPublicKey;
    this.appliedAt = this.system.now();
    this.refreshedAt = this.system.now();
    this.healthUrl = options.tunnelHealthUrl;
    this.gateways = options.gateways;
  }

  readonly say = (line: string): void => {
    this.options.log.write(`${new Date(this.system.now()).toISOString()} ${line}\n`);
  };

  private readonly nameOf = (key: string): string =>
    this.gateways?.find((gateway) => gateway.publicKey === key)?.name ?? key;

  private handshakeAge(key: string, states: WgDumpPeer[]): number {
    const handshakeMs = (states.find((peer) => peer.publicKey === key)?.latestHandshake ?? 0) * 1000;
    return this.system.now() - Math.max(handshakeMs, this.peerSince.get(key) ?? this.appliedAt);
  }

  private isFresh(key: string, states: WgDumpPeer[]): boolean {
    const handshake = states.find((peer) => peer.publicKey === key)?.latestHandshake ?? 0;
    return handshake > 0 && this.system.now() - handshake * 1000 <= this.timing.staleHandshakeMs;
  }

  private async reapply(reason: string, text: string): Promise<void> {
    const { system, iface } = this;
    this.say(`${reason}: recreating ${iface}`);
    this.appliedAt = system.now();
    this.peerSince.clear();
    try {
      const parsed = parseTunnelConfig(text);
      await bringUpTunnel(system, iface, parsed, this.options.configDir);
      this.applied = text;
      this.config = parsed;
      this.holder = parsed.peerPublicKey;
      this.say(`${iface} is up again`);
    } catch (error) {
      this.say(
        `could not bring ${iface} up: ${messageOf(error)}; retrying in ${Math.round(this.timing.checkMs / 1000)} s`,
      );
    }
  }

  private async move(to: string, reason: string): Promise<void> {
    const { holder, nameOf } = this;
    if (holder === null || to === holder) return;
    this.say(`${reason}: moving the routes from ${nameOf(holder)} to ${nameOf(to)}`);
    try {
      await moveWideRoutes(this.system, this.iface, this.config, holder, to);
      this.holder = to;
    } catch (error) {
      this.say(`could not move the routes: ${messageOf(error)}`);
    }
  }

  /** The gateway list changed, nothing else: change the peers on the running interface. */
  private async applyPeers(text: string, latest: TunnelConfig): Promise<void> {
    const { system, iface, config, holder, nameOf } = this;
    const states = await readPeerStates(system, iface);
    const first = latest.peerPublicKey;
    const inLatest = (key: string | null): key is string => latest.peers.some((peer) => peer.publicKey === key);
    // The gateway's first, else the current holder, else any fresh one in order: never a gateway that is silent.
    const toHolder =
      [first, holder, ...latest.peers.map((peer) => peer.publicKey)].find(
        (key) => inLatest(key) && this.isFresh(key, states),
      ) ?? first;
    const before = new Set(config.peers.map((peer) => peer.publicKey));
    const after = new Set(latest.peers.map((peer) => peer.publicKey));
    const added = [...after].filter((key) => !before.has(key));
    const removed = [...before].filter((key) => !after.has(key));
    try {
      await updatePeers(
        system,
        iface,
        { from: config, fromHolder: holder, to: latest, toHolder },
        this.options.configDir,
      );
    } catch (error) {
      await this.reapply(`could not change the peers in place (${messageOf(error)})`, text);
      return;
    }
    for (const key of added) this.peerSince.set(key, system.now());
    for (const key of removed) this.peerSince.delete(key);
    const what = [
      added.length > 0 ? `added ${added.map(nameOf).join(', ')}` : '',
      removed.length > 0 ? `removed ${removed.map(nameOf).join(', ')}` : '',
    ].filter((part) => part !== '');
    this.say(
      `the gateway changed this node's peers${what.length > 0 ? ` (${what.join('; ')})` : ''}: applied in place`,
    );
    if (toHolder !== null && toHolder !== holder) {
      this.say(
        `the routes go to ${nameOf(toHolder)}${holder !== null && inLatest(holder) ? ` instead of ${nameOf(holder)}` : ''}`,
      );
    }
    this.applied = text;
    this.config = latest;
    this.holder = toHolder;
  }

  /** Fetches the config again and applies what changed; true when the tunnel was changed (the round ends there). */
  async refresh(): Promise<boolean> {
    const { system, iface, options, nameOf } = this;
    this.refreshedAt = system.now();
    const latest = await fetchConfig(options.api, this.say);
    const latestHealthUrl = acceptHealthUrl(latest?.tunnelHealthUrl);
    if (latestHealthUrl !== undefined && latestHealthUrl !== this.healthUrl) {
      await updateSettings(system, options.configDir, { tunnelHealthUrl: latestHealthUrl });
      this.healthUrl = latestHealthUrl;
    }
    if (latest?.gateways !== undefined && JSON.stringify(latest.gateways) !== JSON.stringify(this.gateways)) {
      await updateSettings(system, options.configDir, { gateways: latest.gateways });
      this.gateways = latest.gateways;
    }
    if (latest !== null && hasTunnelChanged(this.applied, latest.config, this.say)) {
      await saveWireguardConfig(system, options.configDir, latest.config);
      const parsed = parseTunnelConfig(latest.config);
      if (isInterfaceChanged(this.config, parsed) || !(await isInterfacePresent(system, iface))) {
        await this.reapply("the gateway changed this node's configuration", latest.config);
      } else {
        await this.applyPeers(latest.config, parsed);
      }
      return true;
    }
    const first = this.config.peerPublicKey;
    if (latest !== null && first !== null && this.holder !== first) {
      if (this.isFresh(first, await readPeerStates(system, iface))) {
        await this.move(first, `${nameOf(first)} answers again and comes first in the gateway's list`);
      }
    }
    return false;
  }

  /** The interface present, a handshake fresh, the routes on a live peer, every endpoint answering. */
  async check(): Promise<void> {
    const { system, iface, timing, nameOf } = this;
    if (!(await isInterfacePresent(system, iface))) {
      await this.reapply(`${iface} disappeared`, this.applied);
      return;
    }
    const states = await readPeerStates(system, iface);
    const lastHandshakeMs = Math.max(...states.map((peer) => peer.latestHandshake * 1000), 0);
    const since = system.now() - Math.max(lastHandshakeMs, this.appliedAt);
    if (since > timing.staleHandshakeMs) {
      await this.reapply(`no handshake for ${Math.round(since / 1000)} s`, this.applied);
      return;
    }
    const holder = this.holder;
    if (holder !== null && this.handshakeAge(holder, states) > timing.staleHandshakeMs) {
      const next = this.config.peers
        .map((peer) => peer.publicKey)
        .find((key) => key !== holder && this.isFresh(key, states));
      if (next !== undefined) {
        await this.move(
          next,
          `no handshake with ${nameOf(holder)} for ${Math.round(this.handshakeAge(holder, states) / 1000)} s`,
        );
      }
    }
    for (const peer of this.config.peers) {
      const age = this.handshakeAge(peer.publicKey, states);
      if (age <= timing.staleHandshakeMs || peer.endpoint === null) continue;
      this.say(
        `no handshake with ${nameOf(peer.publicKey)} for ${Math.round(age / 1000)} s: resolving its endpoint again`,
      );
      this.peerSince.set(peer.publicKey, system.now());
      await refreshEndpoint(system, iface, peer).catch((error: unknown) => this.say(messageOf(error)));
    }
  }
}

export async function runDaemon(options: DaemonOptions): Promise<void> {
  const { system, iface, signal } = options;
  const timing = options.timing ?? DEFAULT_TIMING;
  const watch = new TunnelWatch(options);
  watch.say(`watching ${iface}`);
  try {
    while (await pause(system, timing.checkMs, signal)) {
      if (system.now() - watch.refreshedAt >= timing.refreshMs && (await watch.refresh())) continue;
      await watch.check();
    }
  } finally {
    watch.say(`stopping: removing ${iface}`);
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
