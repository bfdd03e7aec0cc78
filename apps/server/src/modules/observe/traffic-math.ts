import {
  LATENCY_BUCKETS_MS,
  type HttpTraffic,
  type StreamTraffic,
  type TrafficCounters,
} from '../../dataplane/types.js';

// Pure arithmetic over traffic counters: deltas between two readings and quantiles from nginx's latency buckets.

export type HttpDelta = Omit<HttpTraffic, 'open'>;
export type StreamDelta = Omit<StreamTraffic, 'open'>;

export interface TrafficDelta {
  http: Map<number, HttpDelta>;
  tcp: Map<number, StreamDelta>;
}

export const emptyHttp = (): HttpDelta => ({
  requests: [0, 0, 0, 0, 0],
  bytesIn: 0,
  bytesOut: 0,
  latencySumMs: 0,
  latencyBuckets: new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0),
});
export const emptyStream = (): StreamDelta => ({ sessions: 0, failed: 0, bytesIn: 0, bytesOut: 0, secondsSum: 0 });

function subtractHttp(now: HttpTraffic, before: HttpTraffic | undefined): HttpDelta {
  const delta: HttpDelta = {
    requests: now.requests.map((n, i) => n - (before?.requests[i] ?? 0)) as HttpDelta['requests'],
    bytesIn: now.bytesIn - (before?.bytesIn ?? 0),
    bytesOut: now.bytesOut - (before?.bytesOut ?? 0),
    latencySumMs: now.latencySumMs - (before?.latencySumMs ?? 0),
    latencyBuckets: now.latencyBuckets.map((n, i) => n - (before?.latencyBuckets[i] ?? 0)),
  };
  // A counter that went down started again (its dictionary entry was evicted or the service was re-created): what
  // it holds now is what happened since.
  const wentDown =
    delta.requests.some((n) => n < 0) ||
    delta.bytesIn < 0 ||
    delta.bytesOut < 0 ||
    delta.latencyBuckets.some((n) => n < 0);
  return wentDown && before ? subtractHttp(now, undefined) : delta;
}

function subtractStream(now: StreamTraffic, before: StreamTraffic | undefined): StreamDelta {
  const delta: StreamDelta = {
    sessions: now.sessions - (before?.sessions ?? 0),
    failed: now.failed - (before?.failed ?? 0),
    bytesIn: now.bytesIn - (before?.bytesIn ?? 0),
    bytesOut: now.bytesOut - (before?.bytesOut ?? 0),
    secondsSum: now.secondsSum - (before?.secondsSum ?? 0),
  };
  const wentDown = delta.sessions < 0 || delta.bytesIn < 0 || delta.bytesOut < 0;
  return wentDown && before ? subtractStream(now, undefined) : delta;
}

const isIdleHttp = (d: HttpDelta) => d.requests.every((n) => n === 0) && d.bytesIn === 0 && d.bytesOut === 0;
const isIdleStream = (d: StreamDelta) => d.sessions === 0 && d.bytesIn === 0 && d.bytesOut === 0;

/**
 * What happened between two readings. Within one epoch it is the difference; a new epoch (nginx's counters or the
 * control plane started again) means the new reading counts from zero. Idle services are left out.
 */
export function trafficDelta(before: TrafficCounters, now: TrafficCounters): TrafficDelta {
  const http = new Map<number, HttpDelta>();
  const sameHttp = before.httpEpoch === now.httpEpoch;
  for (const [id, counters] of now.http) {
    const delta = subtractHttp(counters, sameHttp ? before.http.get(id) : undefined);
    if (!isIdleHttp(delta)) http.set(id, delta);
  }
  const tcp = new Map<number, StreamDelta>();
  const sameStream = before.streamEpoch === now.streamEpoch;
  for (const [id, counters] of now.tcp) {
    const delta = subtractStream(counters, sameStream ? before.tcp.get(id) : undefined);
    if (!isIdleStream(delta)) tcp.set(id, delta);
  }
  return { http, tcp };
}

export function addHttp(into: HttpDelta, more: HttpDelta): void {
  for (let i = 0; i < 5; i++) into.requests[i] = (into.requests[i] ?? 0) + (more.requests[i] ?? 0);
  into.bytesIn += more.bytesIn;
  into.bytesOut += more.bytesOut;
  into.latencySumMs += more.latencySumMs;
  for (let i = 0; i < into.latencyBuckets.length; i++)
    into.latencyBuckets[i] = (into.latencyBuckets[i] ?? 0) + (more.latencyBuckets[i] ?? 0);
}

export function addStream(into: StreamDelta, more: StreamDelta): void {
  into.sessions += more.sessions;
  into.failed += more.failed;
  into.bytesIn += more.bytesIn;
  into.bytesOut += more.bytesOut;
  into.secondsSum += more.secondsSum;
}

/**
 * The `q` quantile (0..1) of requests counted in LATENCY_BUCKETS_MS buckets: the upper bound of the bucket it falls
 * in (the slowest bucket has none: the last bound is given). null without requests.
 */
export function latencyQuantile(buckets: readonly number[], q: number): number | null {
  const total = buckets.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += buckets[i] ?? 0;
    if (seen >= rank) return LATENCY_BUCKETS_MS[Math.min(i, LATENCY_BUCKETS_MS.length - 1)] ?? null;
  }
  return LATENCY_BUCKETS_MS[LATENCY_BUCKETS_MS.length - 1] ?? null;
}
