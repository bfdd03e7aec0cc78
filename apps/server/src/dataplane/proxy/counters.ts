import type { ControlClient } from '../nginx/control-client.js';
import { DICT_NAMES, type DictName } from '../nginx/dict-sizes.js';
import { LATENCY_BUCKETS_MS, type DictionaryUsage, type HttpTraffic } from '../types.js';

/** Counters of a service that is no longer served are forgotten once the traffic history has read them. */
const FORGET_COUNTERS_AFTER_MS = 5 * 60_000;

/** Every HTTP service's counters as nginx's gw_stats holds them. */
export async function readHttpTraffic(
  control: ControlClient,
): Promise<{ epoch: string; services: Map<number, HttpTraffic> }> {
  const answer = await control.get<{
    epoch: string | null;
    services: Record<string, Record<string, unknown>>;
  }>('/stats');
  const services = new Map<number, HttpTraffic>();
  for (const [id, row] of Object.entries(answer.services)) {
    const n = (field: string): number => Number(row[field] ?? 0);
    services.set(Number(id), {
      requests: [n('c1'), n('c2'), n('c3'), n('c4'), n('c5')],
      bytesIn: n('bi'),
      bytesOut: n('bo'),
      latencySumMs: n('ls'),
      latencyBuckets: Array.from({ length: LATENCY_BUCKETS_MS.length + 1 }, (_, i) => n(`b${i}`)),
      open: n('open'),
    });
  }
  return { epoch: answer.epoch ?? 'none', services };
}

/** How full each shared dictionary is, and how many writes it refused. */
export async function readDictionaries(
  control: ControlClient,
  refusedPushes: ReadonlyMap<string, number>,
): Promise<DictionaryUsage[]> {
  const space = await control.get<{
    dicts: Record<string, { capacity: number; free: number }>;
    dropped: number;
    live_refused: number;
  }>('/space');
  const refused = (name: DictName): number =>
    name === 'gw_live' ? space.live_refused : name === 'gw_stats' ? space.dropped : (refusedPushes.get(name) ?? 0);
  return DICT_NAMES.map((name) => ({
    name,
    capacityBytes: space.dicts[name]?.capacity ?? 0,
    freeBytes: space.dicts[name]?.free ?? 0,
    refusedWrites: refused(name),
  }));
}

/** The counters of services no longer served, forgotten a while after they went (their last figures read by then). */
export class GoneServices {
  /** Services served at the last cut-off, and since when services no longer served have been gone. */
  private lastRevisions: ReadonlyMap<number, string> | null = null;
  private readonly goneSince = new Map<number, number>();

  constructor(private readonly control: ControlClient) {}

  async forgetCounters(revisions: ReadonlyMap<number, string>): Promise<void> {
    const now = Date.now();
    for (const id of this.lastRevisions?.keys() ?? [])
      if (!revisions.has(id) && !this.goneSince.has(id)) this.goneSince.set(id, now);
    for (const id of revisions.keys()) this.goneSince.delete(id);
    this.lastRevisions = revisions;
    const due = [...this.goneSince].filter(([, since]) => now - since >= FORGET_COUNTERS_AFTER_MS).map(([id]) => id);
    if (due.length === 0) return;
    await this.control.post('/stats', { del: due.map(String) });
    for (const id of due) this.goneSince.delete(id);
  }
}
