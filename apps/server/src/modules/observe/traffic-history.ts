import type { ServiceTraffic, ServiceType, SystemStatus, TrafficPoint } from '@postern/contract';
import { TRAFFIC_HISTORY_MINUTES, TRAFFIC_RECENT_MINUTES } from '@postern/contract';
import type { DataPlane, DataPlaneLogger, TrafficCounters } from '../../dataplane/types.js';
import type { Store } from '../../db/client.js';
import {
  addHttp,
  addStream,
  emptyHttp,
  emptyStream,
  latencyQuantile,
  trafficDelta,
  type HttpDelta,
  type StreamDelta,
  type TrafficDelta,
} from './traffic-math.js';
import { createTrafficStore, type MinuteRow, type TrafficStore } from './traffic-store.js';

// Traffic history: every minute (on the minute) the data plane's cumulative counters are read and what changed
// since the last reading is stored for the minute that ended. Answers add the current, unfinished minute, read
// live (at most once a second), so a request is visible in the console within a second, not a minute.

const MINUTE_MS = 60_000;
/** Live readings are shared by the answers of one second. */
const LIVE_CACHE_MS = 1000;
/** Rows of deleted services go every hour (a scan of the table); expired minutes every minute (an index range). */
const PRUNE_DELETED_EVERY = 60;
/** Home page points are sums over this many minutes. */
const TOTALS_STEP_MINUTES = 10;

export interface RowFigures {
  requests: number;
  errors: number;
  bytes: number;
  spark: number[];
  /** Errors per minute (HTTP 5xx, failed connections), aligned with `spark`. */
  errorSpark: number[];
}

export interface TrafficHistory {
  start(): Promise<void>;
  stop(): void;
  /** Reads the counters and stores what changed since the last reading (the per-minute timer calls it). */
  sample(): Promise<void>;
  serviceTraffic(type: ServiceType, serviceId: number, minutes: number): Promise<ServiceTraffic>;
  /** The last hour of every service with traffic, keyed `type:id`. */
  rowFigures(): Promise<Map<string, RowFigures>>;
  totals(): Promise<SystemStatus['traffic']>;
  /** The counters as last read (cumulative; for /metrics). */
  counters(): Promise<TrafficCounters>;
}

const minuteOf = (ms: number) => Math.floor(ms / MINUTE_MS);
const minuteIso = (minute: number) => new Date(minute * MINUTE_MS).toISOString();

function pointOf(
  minute: number,
  type: ServiceType,
  http: HttpDelta | undefined,
  tcp: StreamDelta | undefined,
): TrafficPoint {
  if (type === 'http') {
    const h = http ?? emptyHttp();
    return {
      minute: minuteIso(minute),
      requests: h.requests.reduce((a, b) => a + b, 0),
      errors: h.requests[4],
      bytesIn: h.bytesIn,
      bytesOut: h.bytesOut,
      p50Ms: latencyQuantile(h.latencyBuckets, 0.5),
      p95Ms: latencyQuantile(h.latencyBuckets, 0.95),
    };
  }
  const t = tcp ?? emptyStream();
  return {
    minute: minuteIso(minute),
    requests: t.sessions,
    errors: t.failed,
    bytesIn: t.bytesIn,
    bytesOut: t.bytesOut,
    p50Ms: null,
    p95Ms: null,
  };
}

/** What happened since the last stored reading: the current minute so far, and the counters read. */
interface LiveReading {
  minute: number;
  delta: TrafficDelta;
  counters: TrafficCounters;
}

/** One service's points over the last `minutes` (the live minute added) and their sum. */
async function serviceTrafficOf(
  store: TrafficStore,
  { minute: liveMinute, delta, counters }: LiveReading,
  to: number,
  type: ServiceType,
  serviceId: number,
  minutes: number,
): Promise<ServiceTraffic> {
  const from = to - minutes + 1;
  const byMinute = new Map<number, MinuteRow>();
  for (const row of await store.series(type, serviceId, from)) byMinute.set(row.minute, row);
  const liveHttp = delta.http.get(serviceId);
  const liveTcp = delta.tcp.get(serviceId);
  const points: TrafficPoint[] = [];
  const httpSum = emptyHttp();
  const tcpSum = emptyStream();
  for (let m = from; m <= to; m++) {
    const row = byMinute.get(m);
    const http = row?.http
      ? {
          ...row.http,
          requests: [...row.http.requests] as HttpDelta['requests'],
          latencyBuckets: [...row.http.latencyBuckets],
        }
      : emptyHttp();
    const tcp = row?.tcp ? { ...row.tcp } : emptyStream();
    if (m === liveMinute && liveHttp) addHttp(http, liveHttp);
    if (m === liveMinute && liveTcp) addStream(tcp, liveTcp);
    addHttp(httpSum, http);
    addStream(tcpSum, tcp);
    points.push(pointOf(m, type, http, tcp));
  }
  if (type === 'http') {
    const [s1, s2, s3, s4, s5] = httpSum.requests;
    return {
      points,
      summary: {
        type,
        minutes,
        requests: s1 + s2 + s3 + s4 + s5,
        status: { '1xx': s1, '2xx': s2, '3xx': s3, '4xx': s4, '5xx': s5 },
        bytesIn: httpSum.bytesIn,
        bytesOut: httpSum.bytesOut,
        p50Ms: latencyQuantile(httpSum.latencyBuckets, 0.5),
        p95Ms: latencyQuantile(httpSum.latencyBuckets, 0.95),
        open: counters.http.get(serviceId)?.open ?? 0,
      },
    };
  }
  return {
    points,
    summary: {
      type,
      minutes,
      connections: tcpSum.sessions,
      failed: tcpSum.failed,
      bytesIn: tcpSum.bytesIn,
      bytesOut: tcpSum.bytesOut,
      avgDurationSeconds: tcpSum.sessions > 0 ? Math.round((tcpSum.secondsSum / tcpSum.sessions) * 10) / 10 : null,
      open: counters.tcp.get(serviceId)?.open ?? 0,
    },
  };
}

/** The last hour of every service with traffic (see TrafficHistory.rowFigures). */
async function rowFiguresOf(
  store: TrafficStore,
  { minute: liveMinute, delta }: LiveReading,
  to: number,
): Promise<Map<string, RowFigures>> {
  const from = to - TRAFFIC_RECENT_MINUTES + 1;
  const figures = new Map<string, RowFigures>();
  const add = (key: string, minute: number, requests: number, errors: number, bytes: number) => {
    if (minute < from || minute > to) return;
    let row = figures.get(key);
    if (!row) {
      row = {
        requests: 0,
        errors: 0,
        bytes: 0,
        spark: new Array<number>(TRAFFIC_RECENT_MINUTES).fill(0),
        errorSpark: new Array<number>(TRAFFIC_RECENT_MINUTES).fill(0),
      };
      figures.set(key, row);
    }
    row.requests += requests;
    row.errors += errors;
    row.bytes += bytes;
    row.spark[minute - from] = (row.spark[minute - from] ?? 0) + requests;
    row.errorSpark[minute - from] = (row.errorSpark[minute - from] ?? 0) + errors;
  };
  for (const row of await store.recent(from)) {
    const key = `${row.type}:${row.serviceId}`;
    if (row.type === 'http' && row.http)
      add(
        key,
        row.minute,
        row.http.requests.reduce((a, b) => a + b, 0),
        row.http.requests[4],
        row.http.bytesIn + row.http.bytesOut,
      );
    if (row.type === 'tcp' && row.tcp)
      add(key, row.minute, row.tcp.sessions, row.tcp.failed, row.tcp.bytesIn + row.tcp.bytesOut);
  }
  for (const [id, h] of delta.http)
    add(
      `http:${id}`,
      liveMinute,
      h.requests.reduce((a, b) => a + b, 0),
      h.requests[4],
      h.bytesIn + h.bytesOut,
    );
  for (const [id, t] of delta.tcp) add(`tcp:${id}`, liveMinute, t.sessions, t.failed, t.bytesIn + t.bytesOut);
  return figures;
}

/** The whole gateway's traffic over the history, in steps of TOTALS_STEP_MINUTES. */
async function totalsOf(
  store: TrafficStore,
  { minute: liveMinute, delta }: LiveReading,
  to: number,
): Promise<SystemStatus['traffic']> {
  const from = to - TRAFFIC_HISTORY_MINUTES + 1;
  const steps = TRAFFIC_HISTORY_MINUTES / TOTALS_STEP_MINUTES;
  const points: TrafficPoint[] = Array.from({ length: steps }, (_, i) => ({
    minute: minuteIso(from + i * TOTALS_STEP_MINUTES),
    requests: 0,
    errors: 0,
    bytesIn: 0,
    bytesOut: 0,
    p50Ms: null,
    p95Ms: null,
  }));
  const totals = {
    minutes: TRAFFIC_HISTORY_MINUTES,
    requests: 0,
    errors: 0,
    connections: 0,
    bytesIn: 0,
    bytesOut: 0,
    points,
  };
  const add = (minute: number, http: HttpDelta, tcp: StreamDelta) => {
    if (minute < from || minute > to) return;
    const point = points[Math.floor((minute - from) / TOTALS_STEP_MINUTES)];
    const requests = http.requests.reduce((a, b) => a + b, 0);
    totals.requests += requests;
    totals.errors += http.requests[4] + tcp.failed;
    totals.connections += tcp.sessions;
    totals.bytesIn += http.bytesIn + tcp.bytesIn;
    totals.bytesOut += http.bytesOut + tcp.bytesOut;
    if (!point) return;
    point.requests += requests + tcp.sessions;
    point.errors += http.requests[4] + tcp.failed;
    point.bytesIn += http.bytesIn + tcp.bytesIn;
    point.bytesOut += http.bytesOut + tcp.bytesOut;
  };
  for (const row of await store.totals(from)) {
    // The summed row carries both kinds' columns; the bytes belong to the HTTP half only once.
    add(row.minute, row.http ?? emptyHttp(), { ...(row.tcp ?? emptyStream()), bytesIn: 0, bytesOut: 0 });
  }
  const liveHttp = emptyHttp();
  const liveTcp = emptyStream();
  for (const h of delta.http.values()) addHttp(liveHttp, h);
  for (const t of delta.tcp.values()) addStream(liveTcp, t);
  add(liveMinute, liveHttp, liveTcp);
  return totals;
}

export function createTrafficHistory(deps: {
  db: Store;
  dataPlane: DataPlane;
  logger: DataPlaneLogger;
  now?: () => number;
}): TrafficHistory {
  const now = deps.now ?? Date.now;
  const store = createTrafficStore(deps.db);
  let last: { counters: TrafficCounters; at: number } | null = null;
  let live: { at: number; reading: Promise<TrafficCounters> } | null = null;
  let timer: NodeJS.Timeout | null = null;
  let samples = 0;

  function readLive(): Promise<TrafficCounters> {
    const at = now();
    if (live && at - live.at < LIVE_CACHE_MS) return live.reading;
    const reading = deps.dataPlane.traffic();
    live = { at, reading };
    reading.catch(() => {
      live = null;
    });
    return reading;
  }

  /** What happened since the last stored reading: the current minute so far. */
  async function current(): Promise<LiveReading> {
    const counters = await readLive();
    const base = last ?? { counters, at: now() };
    return { minute: minuteOf(base.at), delta: trafficDelta(base.counters, counters), counters };
  }

  async function sample(): Promise<void> {
    const counters = await deps.dataPlane.traffic();
    const at = now();
    if (last) {
      const minute = minuteOf(last.at);
      const delta = trafficDelta(last.counters, counters);
      const rows: MinuteRow[] = [
        ...[...delta.http].map(([serviceId, http]) => ({ type: 'http' as const, serviceId, minute, http })),
        ...[...delta.tcp].map(([serviceId, tcp]) => ({ type: 'tcp' as const, serviceId, minute, tcp })),
      ];
      await store.record(rows);
    }
    last = { counters, at };
    live = null;
    samples++;
    await store.prune(minuteOf(at) - TRAFFIC_HISTORY_MINUTES, samples % PRUNE_DELETED_EVERY === 0);
  }

  function scheduleNext(): void {
    // On the minute (plus a little, so the reading falls in the new minute), whatever the last one cost.
    const delay = MINUTE_MS - (now() % MINUTE_MS) + 200;
    timer = setTimeout(() => {
      sample()
        .catch((err: unknown) =>
          deps.logger.warn({ err }, 'traffic: could not read the counters; this minute is kept with the next'),
        )
        .finally(() => {
          if (timer) scheduleNext();
        });
    }, delay);
    timer.unref();
  }

  return {
    async start() {
      // The first reading is the baseline: what nginx counted before this process started is no one minute's.
      await sample().catch((err: unknown) =>
        deps.logger.warn({ err }, 'traffic: could not read the counters at start'),
      );
      scheduleNext();
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
    sample,
    async counters() {
      return readLive();
    },
    async serviceTraffic(type, serviceId, minutes) {
      const live = await current();
      return serviceTrafficOf(store, live, minuteOf(now()), type, serviceId, minutes);
    },
    async rowFigures() {
      const live = await current();
      return rowFiguresOf(store, live, minuteOf(now()));
    },
    async totals() {
      const live = await current();
      return totalsOf(store, live, minuteOf(now()));
    },
  };
}
