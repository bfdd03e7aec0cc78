import type { ScopedPlan } from '../plan.js';
import type { WantedInstance } from '../nginx/stream-instances.js';
import type { DesiredPeer, Verdicts } from '../types.js';

/** What one scoped run pushed: routes by host (undefined: deleted), revisions by service (undefined: not served). */
interface Pushed<T> {
  ticket: number;
  value: T;
}

/** What scoped runs pushed after a full run read its state: the full run leaves it alone. */
export interface Newer {
  hosts: ReadonlyMap<string, string | undefined>;
  revisions: ReadonlyMap<number, string | undefined>;
  domains: readonly string[];
  access: ReadonlyMap<string, string>;
}

/** Work run one at a time, in the order it was asked for; one that fails does not stop the next. */
class Turns {
  private last: Promise<unknown> = Promise.resolve();

  take<T>(work: () => Promise<T>): Promise<T> {
    const run = this.last.then(work, work);
    this.last = run.catch(() => undefined);
    return run;
  }
}

/**
 * Lets scoped runs go while a full run is in flight (dataplane/README.md "Scoped applies"). Every run takes a ticket
 * before it reads the database, in the order of their reads: a higher ticket read newer rows. Pushes to nginx go one
 * at a time (`exclusive`), and so do WireGuard's (`exclusiveTunnel`). A scoped run records what it pushed with its
 * ticket; a full run, when it pushes, leaves alone what scoped runs with a higher ticket pushed (their rows are newer
 * than its own: it keeps their routes, their services' connections, their certificates and their nodes' peers). The
 * other way round cannot happen: a full run starts only while no scoped run is in flight (run-queue.ts), so a scoped
 * run that pushes during a full run read after it.
 */
export class ScopedLedger {
  private tickets = 0;
  private readonly hosts = new Map<string, Pushed<string | undefined>>();
  private readonly revisions = new Map<number, Pushed<string | undefined>>();
  private readonly domains = new Map<string, number>();
  private readonly access = new Map<string, Pushed<string>>();
  private readonly streams = new Map<string, Pushed<WantedInstance | undefined>>();
  private readonly peers = new Map<number, Pushed<DesiredPeer | undefined>>();
  private readonly pushes = new Turns();
  private readonly streamSyncs = new Turns();
  private readonly tunnelSyncs = new Turns();
  /** The rows each scoped run's verdict speaks for, by the ticket of the newest (`recordVerdicts`). */
  private readonly verdicts = {
    http: new Map<number, number>(),
    tcp: new Map<number, number>(),
    nodes: new Map<number, number>(),
  };
  /** The ticket of the last full run begun (`beginFull`). */
  private lastFull = 0;
  /** The peer sync the full run in flight has yet to make, by its ticket (`expectPeerSync`). */
  private peerSync: { ticket: number; synced: Promise<ReadonlyMap<number, string>> } | null = null;
  /**
   * Instances the last runs could not start (a port another program holds): every scoped run tries them again, as a
   * full run would, so a later change serves them once the port is free.
   */
  readonly unstarted = new Set<string>();

  /** A ticket, taken right before a run reads the database. */
  take(): number {
    return ++this.tickets;
  }

  /**
   * A full run of `ticket` begins. What scoped runs spoke for before the previous full run read is no run's concern
   * any more: that run and this one ask only for newer verdicts (full runs go one at a time, run-queue.ts).
   */
  beginFull(ticket: number): void {
    for (const rows of Object.values(this.verdicts))
      for (const [id, at] of rows) if (at <= this.lastFull) rows.delete(id);
    this.lastFull = ticket;
  }

  /** A scoped run of `ticket` (which read its rows then) speaks for these rows' verdicts. */
  recordVerdicts(ticket: number, rows: Verdicts): void {
    for (const kind of ['http', 'tcp', 'nodes'] as const)
      for (const id of rows[kind]) if ((this.verdicts[kind].get(id) ?? 0) < ticket) this.verdicts[kind].set(id, ticket);
  }

  /** The rows scoped runs that read after a full run of `ticket` spoke for: their verdict is newer than its. */
  verdictsAfter(ticket: number): Verdicts {
    const after = (rows: ReadonlyMap<number, number>): Set<number> =>
      new Set([...rows].filter(([, at]) => at > ticket).map(([id]) => id));
    return { http: after(this.verdicts.http), tcp: after(this.verdicts.tcp), nodes: after(this.verdicts.nodes) };
  }

  /** Runs `work` after every push before it (route pushes and cut-offs never interleave). */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.pushes.take(work);
  }

  /**
   * Runs `work` after every TCP/UDP instance sync before it. A queue of its own: starting instances (seconds at a boot
   * with many) never holds up an HTTP push.
   */
  exclusiveStreams<T>(work: () => Promise<T>): Promise<T> {
    return this.streamSyncs.take(work);
  }

  /**
   * Runs `work` after every WireGuard change before it: a full run's interface and peer sync, a scoped run's peer
   * patch (both diff against what the driver last made, so they must not interleave). A queue of its own: a peer patch
   * never waits for nginx's pushes, nor they for it.
   */
  exclusiveTunnel<T>(work: () => Promise<T>): Promise<T> {
    return this.tunnelSyncs.take(work);
  }

  /**
   * A full run of `ticket` is to sync the peers: it settles what it returns with the sync's answer (why some nodes are
   * not routed), or with why it made none. Until then a scoped run that read after it and cannot patch alone (nothing
   * synced since the interface was made: the boot, a drift repair) hands its peers to that sync (`pendingPeerSync`).
   */
  expectPeerSync(ticket: number): (outcome: ReadonlyMap<number, string> | Error) => void {
    let settle: (outcome: ReadonlyMap<number, string> | Error) => void = () => undefined;
    const synced = new Promise<ReadonlyMap<number, string>>((resolve, reject) => {
      settle = (outcome) => {
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
    });
    // No scoped run may be waiting for it.
    synced.catch(() => undefined);
    const pending = { ticket, synced };
    this.peerSync = pending;
    return (outcome) => {
      if (this.peerSync === pending) this.peerSync = null;
      settle(outcome);
    };
  }

  /** The peer sync a full run that read before `ticket` has yet to make (inside `exclusiveTunnel`), or null. */
  pendingPeerSync(ticket: number): Promise<ReadonlyMap<number, string>> | null {
    return this.peerSync !== null && this.peerSync.ticket < ticket ? this.peerSync.synced : null;
  }

  /** What a scoped run of `ticket` made of the peers of `nodeIds` (inside `exclusiveTunnel`; none: removed). */
  recordPeers(ticket: number, peers: readonly DesiredPeer[], nodeIds: readonly number[]): void {
    for (const nodeId of nodeIds)
      this.peers.set(nodeId, { ticket, value: peers.find((peer) => peer.nodeId === nodeId) });
  }

  /**
   * A full run of `ticket` syncs its peers now (inside `exclusiveTunnel`): the peers scoped runs that read after it
   * made, by node (undefined: removed), kept for the next full run too.
   */
  newerPeers(ticket: number): ReadonlyMap<number, DesiredPeer | undefined> {
    for (const [nodeId, pushed] of this.peers) if (pushed.ticket <= ticket) this.peers.delete(nodeId);
    return new Map([...this.peers].map(([nodeId, pushed]) => [nodeId, pushed.value]));
  }

  /** What a scoped run of `ticket` made of the instances of `keys` (inside `exclusiveStreams`). */
  recordStreams(
    ticket: number,
    wanted: ReadonlyMap<string, WantedInstance>,
    keys: readonly string[],
    failures: ReadonlyMap<string, string>,
  ): void {
    for (const key of keys) {
      this.streams.set(key, { ticket, value: wanted.get(key) });
      if (failures.has(key)) this.unstarted.add(key);
      else this.unstarted.delete(key);
    }
  }

  /**
   * A full run of `ticket` syncs its instances now (inside `exclusiveStreams`): what scoped runs that read after it
   * made of theirs (undefined: stopped), kept for the next full run too.
   */
  newerStreams(ticket: number): ReadonlyMap<string, WantedInstance | undefined> {
    for (const [key, pushed] of this.streams) if (pushed.ticket <= ticket) this.streams.delete(key);
    return new Map([...this.streams].map(([key, pushed]) => [key, pushed.value]));
  }

  /** What a scoped run of `ticket` pushed: its hosts' routes, its services' revisions, its domains, its policies. */
  record(ticket: number, plan: ScopedPlan, hosts: readonly string[], services: Iterable<number>, domains: string[]) {
    for (const host of hosts) this.hosts.set(host, { ticket, value: plan.routes.hosts.get(host) });
    for (const id of services) this.revisions.set(id, { ticket, value: plan.routes.revisions.get(id) });
    for (const name of domains) this.domains.set(name, ticket);
    for (const [ref, json] of plan.access.entries) this.access.set(ref, { ticket, value: json });
  }

  /**
   * A full run of `ticket` pushes now (inside `exclusive`): what scoped runs pushed after its read (kept for the next
   * full run too); what they pushed before it is in its rows and forgotten.
   */
  newerThan(ticket: number): Newer {
    const newer = <K, T>(entries: Map<K, Pushed<T>>): Map<K, T> => {
      for (const [key, pushed] of entries) if (pushed.ticket <= ticket) entries.delete(key);
      return new Map([...entries].map(([key, pushed]) => [key, pushed.value]));
    };
    for (const [name, at] of this.domains) if (at <= ticket) this.domains.delete(name);
    return {
      hosts: newer(this.hosts),
      revisions: newer(this.revisions),
      domains: [...this.domains.keys()],
      access: newer(this.access),
    };
  }
}

/** `base` with `newer`'s entries replacing its own (undefined: removed). */
export function overlay<K, T>(base: ReadonlyMap<K, T>, newer: ReadonlyMap<K, T | undefined>): ReadonlyMap<K, T> {
  if (newer.size === 0) return base;
  const merged = new Map(base);
  for (const [key, value] of newer)
    if (value === undefined) merged.delete(key);
    else merged.set(key, value);
  return merged;
}

/** `peers` (in node order) with the peers of `newer`'s nodes replaced by theirs (undefined: removed). */
export function withNewerPeers(
  peers: DesiredPeer[],
  newer: ReadonlyMap<number, DesiredPeer | undefined>,
): DesiredPeer[] {
  if (newer.size === 0) return peers;
  const merged = overlay(new Map(peers.map((peer) => [peer.nodeId, peer])), newer);
  return [...merged.values()].sort((a, b) => a.nodeId - b.nodeId);
}
