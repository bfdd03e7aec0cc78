import type { NodeStatus, NodeStatusSource, WgPeerStatus } from '../types.js';
import { createSingleFlight } from '../../lib/serial.js';
import { hostOfEndpoint } from './dump.js';

// Status thresholds. WireGuard re-handshakes every 120 s (REKEY_AFTER_TIME) while traffic flows, and a node's
// PersistentKeepalive (25 s) keeps traffic flowing, so a healthy peer's latest handshake is never much older
// than 120 s + one keepalive + jitter. Hence:
//   online  — handshake younger than 150 s (2 min rekey + 30 s slack)
//   idle    — younger than 300 s (a couple of missed rekeys: the node may be back any moment)
//   offline — older, or never
export const ONLINE_THRESHOLD_SECONDS = 150;
export const IDLE_THRESHOLD_SECONDS = 300;

export function statusFromHandshake(latestHandshakeSeconds: number, nowMs: number): NodeStatus['status'] {
  if (latestHandshakeSeconds <= 0) return 'offline';
  const age = nowMs / 1000 - latestHandshakeSeconds;
  if (age < ONLINE_THRESHOLD_SECONDS) return 'online';
  if (age < IDLE_THRESHOLD_SECONDS) return 'idle';
  return 'offline';
}

export function toNodeStatus(peer: WgPeerStatus, nowMs: number): NodeStatus {
  return {
    status: statusFromHandshake(peer.latestHandshake, nowMs),
    clientIp: hostOfEndpoint(peer.endpoint),
    latestHandshakeTimestamp: peer.latestHandshake > 0 ? new Date(peer.latestHandshake * 1000).toISOString() : null,
    transferRx: peer.transferRx,
    transferTx: peer.transferTx,
  };
}

function isSameStatus(a: NodeStatus | undefined, b: NodeStatus | undefined): boolean {
  return (
    a?.status === b?.status &&
    a?.clientIp === b?.clientIp &&
    a?.latestHandshakeTimestamp === b?.latestHandshakeTimestamp &&
    a?.transferRx === b?.transferRx &&
    a?.transferTx === b?.transferTx
  );
}

export interface StatusPollerOptions {
  dump: () => Promise<WgPeerStatus[]>;
  intervalMs?: number;
  now?: () => number;
  /** Injectable timer so tests drive polls by hand. Returns a cancel function. */
  every?: (ms: number, tick: () => void) => () => void;
  onError?: (err: unknown) => void;
}

export interface StatusPoller extends NodeStatusSource {
  start(): void;
  stop(): void;
  /** One poll now; resolves after listeners were told. */
  poll(): Promise<void>;
}

const everyWithSetInterval = (ms: number, tick: () => void): (() => void) => {
  const handle = setInterval(tick, ms);
  handle.unref();
  return () => clearInterval(handle);
};

/** ONE poll of `wg show dump` for the whole process, whatever the number of SSE subscribers. */
export function createStatusPoller(options: StatusPollerOptions): StatusPoller {
  const { dump, intervalMs = 2000, now = Date.now, every = everyWithSetInterval, onError = () => undefined } = options;
  let current = new Map<string, NodeStatus>();
  const listeners = new Set<(keys: string[]) => void>();
  let cancel: (() => void) | null = null;
  let lastErrorText: string | null = null;

  async function pollOnce(): Promise<void> {
    let peers: WgPeerStatus[];
    try {
      peers = await dump();
      lastErrorText = null;
    } catch (err) {
      // Report a failing dump once, not every 2 s. No dump means no tunnel (the interface or wireguard-go is gone):
      // every node is offline until the data plane restores it, and the console must say so.
      const text = String(err);
      if (text !== lastErrorText) onError(err);
      lastErrorText = text;
      peers = [];
    }
    const nowMs = now();
    const next = new Map(peers.map((peer) => [peer.publicKey, toNodeStatus(peer, nowMs)]));
    const changed = [...new Set([...current.keys(), ...next.keys()])].filter(
      (key) => !isSameStatus(current.get(key), next.get(key)),
    );
    current = next;
    if (changed.length > 0) for (const listener of listeners) listener(changed);
  }

  // A slow `wg` must not stack polls up.
  const poll = createSingleFlight(pollOnce);

  return {
    get: (publicKey) => current.get(publicKey),
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    start() {
      if (cancel) return;
      void poll();
      cancel = every(intervalMs, () => {
        void poll();
      });
    },
    stop() {
      cancel?.();
      cancel = null;
    },
    poll,
  };
}
