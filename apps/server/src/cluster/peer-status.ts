import { and, eq, inArray, ne } from 'drizzle-orm';
import type { Store } from '../db/client.js';
import { gatewayPeers } from '../db/schema.js';
import { statusFromHandshake } from '../dataplane/wireguard/status.js';
import type { DataPlane, NodeStatus, NodeStatusSource } from '../dataplane/types.js';
import { listLiveGateways } from '../modules/gateways/registry.js';
import { createSingleFlight } from '../lib/serial.js';

// Node status combined over every gateway (docs/SCALE-OUT.md). Each gateway's own WireGuard poll (dataPlane.status)
// stays the live source for what it sees itself; what it sees is also written behind to `gateway_peers` (only the rows
// that changed, one write at most every SYNC_INTERVAL_MS), and what the other live gateways wrote is read back on the
// same beat. A node's status is then the best over every live gateway:
//   - the newest handshake wins, and with it the client address that gateway saw (the node's current path);
//   - status (online/idle/offline) follows from that newest handshake;
//   - transfer is the sum over the gateways (the bytes the node exchanged with all of them).
// With one gateway nothing is read back (no other rows), so `get` is the local poll's answer, as before.

export const SYNC_INTERVAL_MS = 10_000;

interface RemotePeer {
  latestHandshake: number;
  clientIp: string | null;
  transferRx: number;
  transferTx: number;
}

type Row = { publicKey: string } & RemotePeer;

const toRow = (publicKey: string, status: NodeStatus): Row => ({
  publicKey,
  latestHandshake:
    status.latestHandshakeTimestamp === null ? 0 : Math.floor(Date.parse(status.latestHandshakeTimestamp) / 1000),
  clientIp: status.clientIp,
  transferRx: status.transferRx,
  transferTx: status.transferTx,
});

/** The best of what every gateway sees of one peer (see above); undefined when none sees it. */
export function combineStatuses(
  local: NodeStatus | undefined,
  remote: readonly RemotePeer[],
  nowMs: number,
): NodeStatus | undefined {
  if (remote.length === 0) return local;
  const all = local ? [toRow('', local), ...remote] : [...remote];
  const newest = all.reduce((best, peer) => (peer.latestHandshake > best.latestHandshake ? peer : best));
  return {
    status: statusFromHandshake(newest.latestHandshake, nowMs),
    clientIp: newest.latestHandshake > 0 ? newest.clientIp : (local?.clientIp ?? null),
    latestHandshakeTimestamp: newest.latestHandshake > 0 ? new Date(newest.latestHandshake * 1000).toISOString() : null,
    transferRx: all.reduce((sum, peer) => sum + peer.transferRx, 0),
    transferTx: all.reduce((sum, peer) => sum + peer.transferTx, 0),
  };
}

const sameRow = (a: Row | undefined, b: Row | undefined): boolean =>
  a?.latestHandshake === b?.latestHandshake &&
  a?.clientIp === b?.clientIp &&
  a?.transferRx === b?.transferRx &&
  a?.transferTx === b?.transferTx;

/** This gateway's changed rows, written in one transaction. */
async function writePeerRows(db: Store, gatewayId: number, upserts: Row[], deletes: string[]): Promise<void> {
  await db.write(async (tx) => {
    for (const row of upserts) {
      await tx
        .insert(gatewayPeers)
        .values({ gatewayId, ...row })
        .onConflictDoUpdate({
          target: [gatewayPeers.gatewayId, gatewayPeers.publicKey],
          set: {
            latestHandshake: row.latestHandshake,
            clientIp: row.clientIp,
            transferRx: row.transferRx,
            transferTx: row.transferTx,
          },
        })
        .run();
    }
    if (deletes.length > 0)
      await tx
        .delete(gatewayPeers)
        .where(and(eq(gatewayPeers.gatewayId, gatewayId), inArray(gatewayPeers.publicKey, deletes)))
        .run();
  });
}

/** What the live gateways `live` (other than this one) wrote, by public key. */
async function readPeerRows(db: Store, gatewayId: number, live: number[]): Promise<Map<string, RemotePeer[]>> {
  const rows =
    live.length === 0
      ? []
      : await db
          .select()
          .from(gatewayPeers)
          .where(and(ne(gatewayPeers.gatewayId, gatewayId), inArray(gatewayPeers.gatewayId, live)))
          .all();
  const next = new Map<string, RemotePeer[]>();
  for (const { publicKey, latestHandshake, clientIp, transferRx, transferTx } of rows) {
    const list = next.get(publicKey) ?? [];
    list.push({ latestHandshake, clientIp, transferRx, transferTx });
    next.set(publicKey, list);
  }
  return next;
}

export interface GatewayPeerStatus {
  /** This gateway's poll combined with what the other live gateways see. */
  status: NodeStatusSource;
  /** One sync now: write what changed here, read what the others wrote (tests; the timer calls it). */
  sync(): Promise<void>;
  start(): void;
  stop(): void;
}

export function createGatewayPeerStatus(
  deps: { db: Store; now: () => Date; gatewayId: number; local: NodeStatusSource },
  onError: (err: unknown) => void,
  intervalMs = SYNC_INTERVAL_MS,
): GatewayPeerStatus {
  const { db, gatewayId, local } = deps;
  /** Keys whose local status changed since the last write. */
  const dirty = new Set<string>();
  /** What this gateway last wrote, by public key: a change back and forth between syncs writes nothing. */
  const written = new Map<string, Row>();
  /** What the other live gateways wrote, by public key. */
  let remote = new Map<string, RemotePeer[]>();
  const listeners = new Set<(keys: string[]) => void>();
  let timer: NodeJS.Timeout | null = null;
  let unsubscribe: (() => void) | null = null;
  let failing = false;

  const notify = (keys: string[]): void => {
    if (keys.length > 0) for (const listener of listeners) listener(keys);
  };

  async function writeChanges(): Promise<void> {
    const upserts: Row[] = [];
    const deletes: string[] = [];
    const keys = [...dirty];
    dirty.clear();
    for (const key of keys) {
      const status = local.get(key);
      const row = status ? toRow(key, status) : undefined;
      if (sameRow(row, written.get(key))) continue;
      if (row) upserts.push(row);
      else if (written.has(key)) deletes.push(key);
    }
    if (upserts.length === 0 && deletes.length === 0) return;
    try {
      await writePeerRows(db, gatewayId, upserts, deletes);
    } catch (err) {
      for (const key of keys) dirty.add(key);
      throw err;
    }
    for (const row of upserts) written.set(row.publicKey, row);
    for (const key of deletes) written.delete(key);
  }

  async function readOthers(live: number[]): Promise<void> {
    const next = await readPeerRows(db, gatewayId, live);
    const changed = [...new Set([...remote.keys(), ...next.keys()])].filter(
      (key) => JSON.stringify(remote.get(key)) !== JSON.stringify(next.get(key)),
    );
    remote = next;
    notify(changed);
  }

  const sync = createSingleFlight(async () => {
    try {
      const others = (await listLiveGateways(db, gatewayId)).filter((g) => g.id !== gatewayId).map((g) => g.id);
      // Alone on the database: nobody reads the rows, so nothing is written (the changed keys wait for a second
      // gateway), and the one read per beat is of the tiny gateways table.
      if (others.length > 0) await writeChanges();
      await readOthers(others);
      failing = false;
    } catch (err) {
      // The database away: the local poll still answers; the changed keys are written on a later beat.
      if (!failing) onError(err);
      failing = true;
    }
  });

  return {
    status: {
      get: (publicKey) => combineStatuses(local.get(publicKey), remote.get(publicKey) ?? [], deps.now().getTime()),
      onChange(listener) {
        listeners.add(listener);
        return () => {
          listeners.delete(listener);
        };
      },
    },
    sync,
    start() {
      if (timer) return;
      unsubscribe = local.onChange((keys) => {
        for (const key of keys) dirty.add(key);
        notify(keys);
      });
      timer = setInterval(() => void sync(), intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
      unsubscribe?.();
      unsubscribe = null;
    },
  };
}

/** `dataPlane` answering `status` from `status` (everything else, `apply` included, is the data plane's own). */
export function withStatus(dataPlane: DataPlane, status: NodeStatusSource): DataPlane {
  return new Proxy(dataPlane, {
    get(target, property, receiver) {
      return property === 'status' ? status : (Reflect.get(target, property, receiver) as unknown);
    },
  });
}
