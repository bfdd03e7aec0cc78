import { LATENCY_BUCKETS_MS, type HttpTraffic, type StreamTraffic } from '../../dataplane/types.js';
import { sql, type SQL } from 'drizzle-orm';
import type { ReadDb, Store } from '../../db/client.js';
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

/** A stored minute, in the order of COLUMNS. */
type DbRow = [
  type: ServiceType,
  serviceId: number,
  minute: number,
  s1: number,
  s2: number,
  s3: number,
  s4: number,
  s5: number,
  bytesIn: number,
  bytesOut: number,
  latency: string | null,
  sessions: number,
  failed: number,
  secondsSum: number,
];

const COLUMNS = sql.raw(
  'service_type, service_id, minute, s1, s2, s3, s4, s5, bytes_in, bytes_out, latency, sessions, failed, seconds_sum',
);

function selectRows(db: ReadDb, where: SQL, grouped = false): Promise<DbRow[]> {
  const query = grouped
    ? sql`select 'http', 0, minute, sum(s1), sum(s2), sum(s3), sum(s4), sum(s5), sum(bytes_in), sum(bytes_out), null,
        sum(sessions), sum(failed), 0 from traffic_minutes where ${where} group by minute order by minute`
    : sql`select ${COLUMNS} from traffic_minutes where ${where} order by minute`;
  return db.values<DbRow>(query);
}

export interface TrafficStore {
  /** Adds one sample's deltas (one transaction). */
  record(rows: readonly MinuteRow[]): Promise<void>;
  /** A service's stored minutes from `fromMinute` on. */
  series(type: ServiceType, serviceId: number, fromMinute: number): Promise<MinuteRow[]>;
  /** Every service's stored minutes from `fromMinute` on. */
  recent(fromMinute: number): Promise<MinuteRow[]>;
  /** All services summed, per minute, from `fromMinute` on (no latency). */
  totals(fromMinute: number): Promise<MinuteRow[]>;
  /** Drops minutes before `beforeMinute`, and, with `deletedServices`, rows of services that no longer exist. */
  prune(beforeMinute: number, deletedServices: boolean): Promise<void>;
}

function toMinuteRow([
  type,
  serviceId,
  minute,
  s1,
  s2,
  s3,
  s4,
  s5,
  bytesIn,
  bytesOut,
  latency,
  sessions,
  failed,
  secondsSum,
]: DbRow): MinuteRow {
  const latencyBuckets = latency
    ? (JSON.parse(latency) as number[])
    : new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0);
  return {
    type,
    serviceId,
    minute,
    http: { requests: [s1, s2, s3, s4, s5], bytesIn, bytesOut, latencySumMs: 0, latencyBuckets },
    tcp: { sessions, failed, bytesIn, bytesOut, secondsSum },
  };
}

export function createTrafficStore(db: Store): TrafficStore {
  return {
    async record(rows) {
      if (rows.length === 0) return;
      await db.write(async (tx) => {
        for (const row of rows) {
          const http = row.http;
          const tcp = row.tcp;
          const latency = http && http.latencyBuckets.some((n) => n > 0) ? JSON.stringify(http.latencyBuckets) : null;
          await tx.run(sql`insert into traffic_minutes (${COLUMNS})
            values (${row.type}, ${row.serviceId}, ${row.minute}, ${http?.requests[0] ?? 0}, ${http?.requests[1] ?? 0},
              ${http?.requests[2] ?? 0}, ${http?.requests[3] ?? 0}, ${http?.requests[4] ?? 0},
              ${Math.round(http?.bytesIn ?? tcp?.bytesIn ?? 0)}, ${Math.round(http?.bytesOut ?? tcp?.bytesOut ?? 0)},
              ${latency}, ${tcp?.sessions ?? 0}, ${tcp?.failed ?? 0}, ${Math.round(tcp?.secondsSum ?? 0)})
            on conflict (service_type, service_id, minute) do update set
              s1 = traffic_minutes.s1 + excluded.s1, s2 = traffic_minutes.s2 + excluded.s2,
              s3 = traffic_minutes.s3 + excluded.s3, s4 = traffic_minutes.s4 + excluded.s4,
              s5 = traffic_minutes.s5 + excluded.s5, bytes_in = traffic_minutes.bytes_in + excluded.bytes_in,
              bytes_out = traffic_minutes.bytes_out + excluded.bytes_out, latency = excluded.latency,
              sessions = traffic_minutes.sessions + excluded.sessions, failed = traffic_minutes.failed + excluded.failed,
              seconds_sum = traffic_minutes.seconds_sum + excluded.seconds_sum`);
        }
      });
    },
    series: async (type, serviceId, fromMinute) =>
      (await selectRows(db, sql`service_type = ${type} and service_id = ${serviceId} and minute >= ${fromMinute}`)).map(
        toMinuteRow,
      ),
    recent: async (fromMinute) => (await selectRows(db, sql`minute >= ${fromMinute}`)).map(toMinuteRow),
    totals: async (fromMinute) => (await selectRows(db, sql`minute >= ${fromMinute}`, true)).map(toMinuteRow),
    async prune(beforeMinute, deletedServices) {
      await db.write(async (tx) => {
        await tx.run(sql`delete from traffic_minutes where minute < ${beforeMinute}`);
        if (deletedServices) {
          await tx.run(sql`delete from traffic_minutes
            where (service_type = 'http' and service_id not in (select id from http_services))
              or (service_type = 'tcp' and service_id not in (select id from tcp_services))`);
        }
      });
    },
  };
}
