import { runCommand } from './exec.js';
import type { HttpTraffic, LogLine, StreamTraffic, TrafficCounters } from './types.js';

// Traffic accounting for TCP/UDP services (HTTP services are counted inside nginx, lua/postern.lua): every stream
// session writes one access-log line when it ends, which the log tailer already parses; the open sessions are
// counted from the kernel's socket table.

export interface StreamTrafficCounter {
  record(lines: readonly LogLine[]): void;
  /** Counters since this process started (its epoch), without `open`. */
  snapshot(): Map<number, StreamTraffic>;
  readonly epoch: string;
}

export function createStreamTrafficCounter(now = Date.now): StreamTrafficCounter {
  const counters = new Map<number, StreamTraffic>();
  return {
    epoch: `cp-${now()}`,
    record(lines) {
      for (const line of lines) {
        if (line.type !== 'tcp' || line.serviceId === null || !line.session) continue;
        const row = counters.get(line.serviceId) ?? {
          sessions: 0,
          failed: 0,
          bytesIn: 0,
          bytesOut: 0,
          secondsSum: 0,
          open: 0,
        };
        row.sessions++;
        if (!line.session.ok) row.failed++;
        row.bytesIn += line.session.bytesIn;
        row.bytesOut += line.session.bytesOut;
        row.secondsSum += line.session.seconds;
        counters.set(line.serviceId, row);
      }
    },
    snapshot: () => new Map([...counters].map(([id, row]) => [id, { ...row }])),
  };
}

/** Established TCP sessions per local port, for the given public ports (one `ss` call). */
export async function countOpenSessions(ports: readonly number[]): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  if (ports.length === 0) return counts;
  const wanted = new Set(ports);
  const { stdout } = await runCommand('ss', ['-Htn', 'state', 'established']);
  for (const line of stdout.split('\n')) {
    // "0 0 203.0.113.5:30000 198.51.100.7:41234": the local address is the third column.
    const local = line.trim().split(/\s+/)[2] ?? '';
    const port = Number(local.slice(local.lastIndexOf(':') + 1));
    if (wanted.has(port)) counts.set(port, (counts.get(port) ?? 0) + 1);
  }
  return counts;
}

/**
 * Every service's counters: HTTP from nginx's dictionary, TCP/UDP from the stream log lines, with the open TCP
 * sessions read from the kernel for the ports the plan serves.
 */
export async function readTraffic(deps: {
  streams: StreamPlanView;
  httpTraffic: () => Promise<{ epoch: string; services: Map<number, HttpTraffic> }>;
  streamTraffic: StreamTrafficCounter;
}): Promise<TrafficCounters> {
  const { streams } = deps;
  const tcpPorts = [...streams.wanted.values()].filter((w) => w.proto === 'tcp').map((w) => w.port);
  const [http, open] = await Promise.all([deps.httpTraffic(), countOpenSessions(tcpPorts)]);
  const tcp = deps.streamTraffic.snapshot();
  for (const [key, want] of streams.wanted) {
    const serviceId = streams.serviceOf.get(key);
    if (serviceId === undefined) continue;
    const row = tcp.get(serviceId) ?? { sessions: 0, failed: 0, bytesIn: 0, bytesOut: 0, secondsSum: 0, open: 0 };
    row.open = want.proto === 'tcp' ? (open.get(want.port) ?? 0) : 0;
    tcp.set(serviceId, row);
  }
  return { httpEpoch: http.epoch, streamEpoch: deps.streamTraffic.epoch, http: http.services, tcp };
}

/** The part of the stream plan traffic needs: instances by key and the service each serves. */
export interface StreamPlanView {
  wanted: ReadonlyMap<string, { proto: 'tcp' | 'udp'; port: number }>;
  serviceOf: ReadonlyMap<string, number>;
}
