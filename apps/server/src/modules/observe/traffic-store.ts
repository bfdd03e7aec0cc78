import { LATENCY_BUCKETS_MS, type HttpTraffic, type StreamTraffic } from '../../dataplane/types.js';
import type { Db } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import type { ServiceType } from '@postern/contract';

// Traffic per service and minute, kept 24 h in SQLite (`traffic_minutes`). Only minutes in which a service had
// traffic get a row, so the table's size follows use, not the number of services: 1,000 services busy every minute
// of a day are 1.44 million rows of about 60-90 bytes (SQLite stores zeros in no bytes), ~120 MB; docs/api.md.

/** One service's traffic in one minute (deltas, never cumulative). */
export interface MinuteRow {
  type: ServiceType;
  serviceId: number;
  minute: number;
  http?: Omit<HttpTraffic, 'open'>;
  tcp?: Omit<StreamTraffic, 'open'>;
}

interface DbRow {
  service_type: ServiceType;
  service_id: number;
  minute: number;
  s1: number;
  s2: number;
  s3: number;
  s4: number;
  s5: number;
  bytes_in: number;
  bytes_out: number;
  latency: string | null;
  sessions: number;
  failed: number;
  seconds_sum: number;
}

const statements = preparedPerDb((db: Db) => {
  const sqlite = db.$client;
  return {
    insert: sqlite.prepare(
      `insert into traffic_minutes (service_type, service_id, minute, s1, s2, s3, s4, s5, bytes_in, bytes_out, latency, sessions, failed, seconds_sum)
       values (@type, @id, @minute, @s1, @s2, @s3, @s4, @s5, @bytesIn, @bytesOut, @latency, @sessions, @failed, @secondsSum)
       on conflict (service_type, service_id, minute) do update set
         s1 = s1 + excluded.s1, s2 = s2 + excluded.s2, s3 = s3 + excluded.s3, s4 = s4 + excluded.s4, s5 = s5 + excluded.s5,
         bytes_in = bytes_in + excluded.bytes_in, bytes_out = bytes_out + excluded.bytes_out, latency = excluded.latency,
         sessions = sessions + excluded.sessions, failed = failed + excluded.failed, seconds_sum = seconds_sum + excluded.seconds_sum`,
    ),
    series: sqlite.prepare<[ServiceType, number, number], DbRow>(
      'select * from traffic_minutes where service_type = ? and service_id = ? and minute >= ? order by minute',
    ),
    recent: sqlite.prepare<[number], DbRow>('select * from traffic_minutes where minute >= ?'),
    totals: sqlite.prepare<[number], DbRow & { requests: number }>(
      `select minute, sum(s1) as s1, sum(s2) as s2, sum(s3) as s3, sum(s4) as s4, sum(s5) as s5, sum(bytes_in) as bytes_in,
         sum(bytes_out) as bytes_out, sum(sessions) as sessions, sum(failed) as failed, 0 as seconds_sum, null as latency
       from traffic_minutes where minute >= ? group by minute order by minute`,
    ),
    prune: sqlite.prepare<[number]>('delete from traffic_minutes where minute < ?'),
    pruneDeleted: sqlite.prepare(
      `delete from traffic_minutes where (service_type = 'http' and service_id not in (select id from http_services))
         or (service_type = 'tcp' and service_id not in (select id from tcp_services))`,
    ),
  };
});

export interface TrafficStore {
  /** Adds one sample's deltas (one transaction). */
  record(rows: readonly MinuteRow[]): void;
  /** A service's stored minutes from `fromMinute` on. */
  series(type: ServiceType, serviceId: number, fromMinute: number): MinuteRow[];
  /** Every service's stored minutes from `fromMinute` on. */
  recent(fromMinute: number): MinuteRow[];
  /** All services summed, per minute, from `fromMinute` on (no latency). */
  totals(fromMinute: number): MinuteRow[];
  /** Drops minutes before `beforeMinute`, and, with `deletedServices`, rows of services that no longer exist. */
  prune(beforeMinute: number, deletedServices: boolean): void;
}

function toMinuteRow(row: DbRow): MinuteRow {
  const base = { type: row.service_type, serviceId: row.service_id, minute: row.minute };
  const latencyBuckets = row.latency
    ? (JSON.parse(row.latency) as number[])
    : new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0);
  return {
    ...base,
    http: {
      requests: [row.s1, row.s2, row.s3, row.s4, row.s5],
      bytesIn: row.bytes_in,
      bytesOut: row.bytes_out,
      latencySumMs: 0,
      latencyBuckets,
    },
    tcp: {
      sessions: row.sessions,
      failed: row.failed,
      bytesIn: row.bytes_in,
      bytesOut: row.bytes_out,
      secondsSum: row.seconds_sum,
    },
  };
}

export function createTrafficStore(db: Db): TrafficStore {
  const sql = statements(db);
  const insertAll = db.$client.transaction((rows: readonly MinuteRow[]) => {
    for (const row of rows) {
      const http = row.http;
      const tcp = row.tcp;
      sql.insert.run({
        type: row.type,
        id: row.serviceId,
        minute: row.minute,
        s1: http?.requests[0] ?? 0,
        s2: http?.requests[1] ?? 0,
        s3: http?.requests[2] ?? 0,
        s4: http?.requests[3] ?? 0,
        s5: http?.requests[4] ?? 0,
        bytesIn: Math.round(http?.bytesIn ?? tcp?.bytesIn ?? 0),
        bytesOut: Math.round(http?.bytesOut ?? tcp?.bytesOut ?? 0),
        latency: http && http.latencyBuckets.some((n) => n > 0) ? JSON.stringify(http.latencyBuckets) : null,
        sessions: tcp?.sessions ?? 0,
        failed: tcp?.failed ?? 0,
        secondsSum: Math.round(tcp?.secondsSum ?? 0),
      });
    }
  });
  return {
    record: (rows) => {
      if (rows.length > 0) insertAll(rows);
    },
    series: (type, serviceId, fromMinute) => sql.series.all(type, serviceId, fromMinute).map(toMinuteRow),
    recent: (fromMinute) => sql.recent.all(fromMinute).map(toMinuteRow),
    totals: (fromMinute) => sql.totals.all(fromMinute).map(toMinuteRow),
    prune(beforeMinute, deletedServices) {
      sql.prune.run(beforeMinute);
      if (deletedServices) sql.pruneDeleted.run();
    },
  };
}
