import { ControlError, mib } from '../nginx/control-client.js';
import { routesBytes, statsBytes } from '../nginx/dict-sizes.js';
import { routesWithout, withoutServices } from '../nginx/routes.js';
import { NO_ROOM } from '../reconcile/problems.js';
import type { DataPlaneLogger } from '../types.js';
import type { DictionaryGrowth } from './growth.js';
import { isSame, type NginxHolds } from './held.js';
import type { RoutePusher } from './route-pusher.js';
import type { Snapshots } from './snapshots.js';

/** Services left out of a push for lack of room, in the hosts they are in, and what is pushed for those instead. */
class LeftOut {
  /** Service → the reason it is left out. */
  readonly services = new Map<number, string>();
  /** Hosts with services left out: which ones, and what is pushed for the host instead (null: nothing). */
  readonly hosts = new Map<string, { ids: number[]; kept: string | null }>();
  /** What is pushed: the routes wanted, without what is left out. */
  wanted: Map<string, string>;

  constructor(private readonly all: ReadonlyMap<string, string>) {
    this.wanted = new Map(all);
  }

  add(host: string, ids: readonly number[], message: string, kept?: string | null): void {
    const out = [...(this.hosts.get(host)?.ids ?? []), ...ids];
    for (const id of ids) this.services.set(id, message);
    const json = this.all.get(host);
    const rest = kept !== undefined ? kept : json === undefined ? null : routesWithout(json, new Set(out));
    this.hosts.set(host, { ids: out, kept: rest });
    if (rest === null) this.wanted.delete(host);
    else this.wanted.set(host, rest);
  }

  /** Everything wanted again. */
  clear(): void {
    this.services.clear();
    this.hosts.clear();
    this.wanted = new Map(this.all);
  }
}

/** Services set aside at the last full sync, in their hosts, and the routes dictionary's free bytes after it. */
interface SetAside {
  hosts: Map<string, { json: string; ids: number[]; kept: string | null }>;
  message: string;
  free: number;
}

/**
 * The route table nginx serves: the full sync (everything; what does not fit is set aside, the rest pushed) and the
 * scoped patch (a few hosts), and the whole table as last synced and patched since, which the snapshot is written
 * from.
 */
export class RouteTable {
  /** Services whose routes were left out at the last push for lack of room, with the reason. */
  private crowded = new Map<number, string>();
  /**
   * The hosts they are in (with the routes the database wanted for them then), and the routes dictionary's free
   * pages after that push: while neither changes, they are left out without trying.
   */
  private setAside: SetAside | null = null;
  /**
   * The whole route table as last synced, patched by scoped runs since, and the certificates a fresh master loads:
   * what the snapshot holds. null before the first full sync.
   */
  private table: Map<string, string> | null = null;
  private tableCerts: Set<string> | null = null;

  constructor(
    private readonly holds: NginxHolds,
    private readonly pusher: RoutePusher,
    private readonly growth: DictionaryGrowth,
    private readonly snapshots: Snapshots,
    private readonly logger: DataPlaneLogger,
  ) {}

  crowdedServices(): number[] {
    return [...this.crowded.keys()];
  }

  /** `routes` without what was set aside: what nginx should serve (the drift check's reference). */
  served(routes: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
    return withoutServices(routes, this.crowded, this.setAside?.hosts.keys());
  }

  /** ProxyAdapter.reserveRoutes: the room a full sync will need, grown with the next growth (the certificates'). */
  reserve(hosts: ReadonlyMap<string, string>, serviceCount: number): void {
    this.growth.needs.gw_routes = routesBytes(hosts);
    this.growth.needs.gw_stats = statsBytes(serviceCount);
  }

  /** ProxyAdapter.syncRoutes: the whole table; returns the services left out for lack of room. */
  async sync(
    hosts: ReadonlyMap<string, string>,
    certNames: readonly string[],
    serviceCount?: number,
  ): Promise<ReadonlyMap<number, string>> {
    this.growth.needs.gw_routes = routesBytes(hosts);
    if (serviceCount !== undefined) this.growth.needs.gw_stats = statsBytes(serviceCount);
    await this.growth.grow();
    const left = new LeftOut(hosts);
    // What was set aside last time, unchanged, is not tried again while nginx has no more room than then (a refused
    // push of them on every change would cost every change seconds at scale); once this push made room, it is.
    const before = this.setAside;
    if (before !== null && (await this.pusher.space()) <= before.free) {
      for (const [host, memo] of before.hosts)
        if (hosts.get(host) === memo.json) left.add(host, memo.ids, before.message, memo.kept);
    }
    const isHeldBack = left.services.size > 0;
    await this.pushLeavingOut(left);
    if (isHeldBack && before !== null && (await this.pusher.space()) > before.free) {
      left.clear();
      await this.pushLeavingOut(left);
    }
    this.crowded = left.services;
    this.setAside =
      left.services.size === 0
        ? null
        : {
            hosts: new Map([...left.hosts].map(([host, out]) => [host, { json: hosts.get(host) ?? '', ...out }])),
            message: [...left.services.values()][0] ?? '',
            free: await this.pusher.space(),
          };
    this.table = left.wanted;
    this.tableCerts = new Set(certNames);
    this.offerSnapshot();
    this.growth.booted();
    return left.services;
  }

  /** Pushes `left.wanted`; what does not fit is left out (two rounds at most), the rest pushed. */
  private async pushLeavingOut(left: LeftOut): Promise<void> {
    for (let round = 0; ; round++) {
      try {
        await this.pusher.push(left.wanted);
        return;
      } catch (err) {
        const refusal = this.holds.countRefusal(err);
        if (refusal === null || round === 2) throw err;
        let out = await this.pusher.crowdOut(left.wanted, refusal, round === 1);
        // Nothing needed more pages: a small entry found no slot, so everything that grows is left out.
        if (out.size === 0 && round === 0) out = await this.pusher.crowdOut(left.wanted, refusal, true);
        if (out.size === 0) throw err;
        const message =
          `${NO_ROOM}this service's routes: its routes dictionary is full at ${mib(refusal.capacity)} MiB and ` +
          'cannot grow further. It is served once there is room again.';
        for (const [host, ids] of out) left.add(host, ids, message);
        this.logger.error(
          { services: [...out.values()].flat(), capacity: refusal.capacity, free: refusal.freeSpace },
          'nginx: no room in the routes dictionary for a change; its services are set aside',
        );
      }
    }
  }

  /** ProxyAdapter.patchRoutes: a scoped run's hosts; false when it cannot go alone (nothing changed then). */
  async patch(
    entries: ReadonlyMap<string, string>,
    hosts: readonly string[],
    certNames: readonly string[],
  ): Promise<boolean> {
    const known = this.holds.routes;
    // Services set aside for lack of room are the full sync's to bring back; unknown contents are read back by it.
    // Before the first full sync (boot: nginx serves its snapshot, read back at start) the patch goes to nginx alone:
    // the full sync in flight keeps it (reconcile/ledger.ts) and writes the table.
    if (this.setAside !== null || known === null) return false;
    const set: [string, string][] = [];
    const del: string[] = [];
    for (const host of hosts) {
      const json = entries.get(host);
      const entry = known.get(host);
      if (json === undefined) {
        if (entry !== undefined) del.push(host);
      } else if (!isSame(entry, json)) set.push([host, json]);
    }
    if (set.length > 0 || del.length > 0) {
      try {
        await this.pusher.send(known, set, del);
      } catch (err) {
        // Refused for lack of room (nginx as it was): the full sync grows the dictionary or sets services aside.
        // Anything else (409 included): what nginx holds is read back by the full sync.
        const refusal = this.holds.countRefusal(err);
        if (refusal === null || !refusal.intact) this.holds.routes = null;
        if (refusal !== null || (err instanceof ControlError && err.status === 409)) return false;
        throw err;
      }
    }
    const { table, tableCerts } = this;
    if (table === null || tableCerts === null) return true;
    for (const host of hosts) {
      const json = entries.get(host);
      if (json === undefined) table.delete(host);
      else table.set(host, json);
    }
    for (const name of certNames) tableCerts.add(name);
    this.offerSnapshot();
    return true;
  }

  private offerSnapshot(): void {
    const { version } = this.holds;
    if (version !== null && this.table !== null && this.tableCerts !== null)
      this.snapshots.offerRoutes(this.table, this.tableCerts, version);
  }
}
