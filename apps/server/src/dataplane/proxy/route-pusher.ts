import { ControlError, type ControlClient, type Refusal } from '../nginx/control-client.js';
import { entryBytes, pageBytes } from '../nginx/dict-sizes.js';
import type { DataPlaneLogger } from '../types.js';
import { isSame, type Held, type NginxHolds } from './held.js';

/**
 * Routes per push: larger deltas (a first push at scale) go in parts, after checking the whole fits. As few as the
 * control socket takes (64 MiB a request: render-main.ts): a route's JSON is escaped once more in the body (~1.3x),
 * so a part of 32 MiB is a body of ~42 MiB; 100,000 one-route hosts are one part.
 */
const ROUTE_BYTES_PER_PUSH = 32 * 1024 * 1024;

type Entry = [host: string, json: string];

/** Splits a delta's upserts into parts of at most ROUTE_BYTES_PER_PUSH (one part when it is smaller). */
function inParts(set: readonly Entry[]): Entry[][] {
  const parts: Entry[][] = [[]];
  let bytes = 0;
  for (const entry of set) {
    const size = entry[0].length + entry[1].length;
    const last = parts.at(-1) as Entry[];
    if (last.length > 0 && bytes + size > ROUTE_BYTES_PER_PUSH) {
      parts.push([entry]);
      bytes = size;
    } else {
      last.push(entry);
      bytes += size;
    }
  }
  return parts;
}

/** Room in whole pages, as the Lua module counts it. */
const pages = (host: string, json: string | undefined): number =>
  json === undefined ? 0 : pageBytes(2 + host.length, json.length);
const slots = (host: string, json: string | undefined): number =>
  json === undefined ? 0 : entryBytes(2 + host.length, json.length);

/** The services of `json` whose route is new or differs from `old`'s. */
function changedServices(old: string | undefined, json: string): number[] {
  const before = new Map((JSON.parse(old ?? '[]') as { s: number }[]).map((route) => [route.s, JSON.stringify(route)]));
  return (JSON.parse(json) as { s: number }[])
    .filter((route) => before.get(route.s) !== JSON.stringify(route))
    .map((route) => route.s);
}

/**
 * Route pushes over the control socket (POST /routes): a delta against what nginx holds (`NginxHolds.routes`), all or
 * nothing (lua/postern.lua `transact`), in parts once the whole was checked to fit; and, after a refusal, which
 * services to leave out so the rest fits.
 */
export class RoutePusher {
  constructor(
    private readonly control: ControlClient,
    private readonly holds: NginxHolds,
    private readonly logger: DataPlaneLogger,
  ) {}

  /** The routes dictionary's free bytes. */
  async space(): Promise<number> {
    return (await this.control.get<{ dicts: Record<string, { free: number }> }>('/space')).dicts.gw_routes?.free ?? 0;
  }

  /** Makes nginx hold exactly `hosts`: only what differs is sent; one read-back and retry on a 409. */
  async push(hosts: ReadonlyMap<string, string>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const known = await this.holds.knownRoutes();
      const set: Entry[] = [];
      const del: string[] = [];
      for (const [host, json] of hosts) {
        const entry = known.get(host);
        if (!isSame(entry, json)) set.push([host, json]);
        else if (entry?.text === undefined) known.set(host, { text: json });
      }
      for (const host of known.keys()) if (!hosts.has(host)) del.push(host);
      if (set.length === 0 && del.length === 0) return;
      try {
        await this.send(known, set, del);
        return;
      } catch (err) {
        const isConflict = err instanceof ControlError && err.status === 409;
        // A refusal leaves nginx as it was: what is known stays true. Anything else: read it back next time.
        if (!(err instanceof ControlError && err.refusal?.intact === true)) this.holds.routes = null;
        if (isConflict && attempt === 0) {
          this.logger.warn({}, 'nginx: its routes changed behind the control plane; reading back what it holds');
          continue;
        }
        throw err;
      }
    }
  }

  /** Sends a delta: one push, or parts of at most ROUTE_BYTES_PER_PUSH once the whole was checked to fit. */
  async send(known: Map<string, Held>, set: Entry[], del: string[]): Promise<void> {
    const parts = inParts(set);
    if (parts.length > 1) await this.checkRoom(set, del, known);
    for (const [i, part] of parts.entries()) {
      const next = this.holds.nextVersion();
      await this.control.post('/routes', {
        base: this.holds.version,
        version: next,
        set: Object.fromEntries(part),
        ...(i === 0 && del.length > 0 ? { del } : {}),
      });
      this.holds.version = next;
      if (i === 0) for (const host of del) known.delete(host);
      for (const [host, json] of part) known.set(host, { text: json });
    }
  }

  /** The whole change against GET /space before it is sent in parts: refused whole, like one push would be. */
  private async checkRoom(set: Entry[], del: string[], known: ReadonlyMap<string, Held>): Promise<void> {
    const space = await this.control.get<{ dicts: Record<string, { capacity: number; free: number }> }>('/space');
    const dict = space.dicts.gw_routes ?? { capacity: 0, free: 0 };
    let need = 0;
    let freed = 0;
    for (const [host, json] of set) need += pageBytes(2 + host.length, json.length);
    for (const host of [...del, ...set.map(([h]) => h)]) {
      const text = known.get(host)?.text;
      if (text !== undefined) freed += pageBytes(2 + host.length, text.length);
    }
    if (need <= dict.free + freed) return;
    const refusal: Refusal = {
      dict: 'gw_routes',
      need,
      free: dict.free + freed,
      freeSpace: dict.free,
      capacity: dict.capacity,
      intact: true,
    };
    throw new ControlError('nginx did not take POST /routes: its routes dictionary has no room for it.', 507, refusal);
  }

  /** The routes nginx holds as text, those of `changed` read back (POST /held) where only their MD5 is known. */
  private async oldTexts(known: ReadonlyMap<string, Held>, changed: readonly Entry[]): Promise<Map<string, string>> {
    const unknownText = changed.map(([host]) => host).filter((host) => known.get(host)?.md5 !== undefined);
    const old = new Map<string, string>();
    for (const [host, json] of known) if (json.text !== undefined) old.set(host, json.text);
    if (unknownText.length > 0) {
      const answer = await this.control.post<{ hosts: Record<string, string> }>('/held', { hosts: unknownText });
      for (const [host, json] of Object.entries(answer.hosts)) old.set(host, json);
    }
    return old;
  }

  /**
   * After a refusal: which services to leave out so the rest fits. Hosts whose routes shrink or stay the same size
   * always go in (removals and disabled services are always applied); of the hosts that grow, the smallest growth
   * first while the free room lasts (`everything`: none of them). In a host left out, the services whose route is new
   * or changed are left out; its other services are served as before.
   */
  async crowdOut(
    hosts: ReadonlyMap<string, string>,
    refusal: Refusal,
    everything: boolean,
  ): Promise<Map<string, number[]>> {
    const known = await this.holds.knownRoutes();
    const changed = [...hosts].filter(([host, json]) => !isSame(known.get(host), json));
    const old = await this.oldTexts(known, changed);
    // A host whose entry takes no more than it took (same or smaller slab slot, same or fewer pages) always fits;
    // small entries that grow are tried (the second round, `everything`, leaves them out too); of those that need
    // more pages, the smallest growth first while the free pages last.
    let room = refusal.freeSpace;
    for (const host of known.keys()) if (!hosts.has(host)) room += pages(host, old.get(host));
    const growing: { host: string; json: string; growth: number }[] = [];
    for (const [host, json] of changed) {
      const growth = pages(host, json) - pages(host, old.get(host));
      if (slots(host, json) <= slots(host, old.get(host)) || (growth === 0 && !everything)) room -= growth;
      else growing.push({ host, json, growth });
    }
    growing.sort((a, b) => a.growth - b.growth || a.host.localeCompare(b.host));
    const out = new Map<string, number[]>();
    for (const { host, json, growth } of growing) {
      if (!everything && growth <= room) {
        room -= growth;
        continue;
      }
      const ids = changedServices(old.get(host), json);
      if (ids.length > 0) out.set(host, ids);
    }
    return out;
  }
}
