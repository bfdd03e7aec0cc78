import { createHash, timingSafeEqual } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LATENCY_BUCKETS_MS, type DataPlane, type DriftReport } from '../../dataplane/types.js';
import { sql } from 'drizzle-orm';
import type { Store } from '../../db/client.js';
import type { HealthChecker } from './health-checker.js';
import type { TrafficHistory } from './traffic-history.js';

// Prometheus metrics (docs/api.md "Observability"). Figures the data plane already counts (traffic, tunnel,
// certificates, drift, health) are read when scraped, so /metrics costs nothing between scrapes; events of the control
// plane itself (apply, sign-in failures) are counted as they happen. Names follow Prometheus conventions: base units
// (seconds, bytes), `_total` for counters.

type Labels = Record<string, string | number>;
interface Value {
  labels: Labels;
  value: number;
  metricName?: string;
}
type MetricType = 'counter' | 'gauge' | 'histogram';

/** A metric whose values are computed at scrape time (prom-client's registry calls `get()`). */
class ScrapedMetric {
  values: Value[] = [];
  readonly aggregator = 'sum';
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
  ) {}
  get() {
    return { name: this.name, help: this.help, type: this.type, values: this.values, aggregator: this.aggregator };
  }
  reset() {
    this.values = [];
  }
}

type NameRow = [type: 'http' | 'tcp', id: number, name: string, node: string, proto: string];
const namesQuery = sql.raw(
  `select 'http', s.id, s.name, n.name, 'http' from http_services s join nodes n on n.id = s.node_id
   union all select 'tcp', s.id, s.name, n.name, s.proto from tcp_services s join nodes n on n.id = s.node_id`,
);
type NodeRow = [name: string, publicKey: string];
const nodesQuery = sql.raw('select name, public_key from nodes where not is_local');
type DomainRow = [domain: string];
const domainsQuery = sql.raw('select domain from domains');

export interface Metrics {
  registry: Registry;
  applyDuration: Histogram<'result'>;
  signInFailures: Counter<'reason'>;
  sseSubscribers: Gauge;
  /** Set by the app: how many event streams are open now. */
  countSubscribers: () => number;
  /** The exposition text, figures read now. */
  render(): Promise<string>;
}

/** The metrics read at scrape time, by what they are called here. */
function createScrapedMetrics() {
  return {
    httpRequests: new ScrapedMetric(
      'postern_http_requests_total',
      'HTTP requests served per service, by status class',
      'counter',
    ),
    httpReceived: new ScrapedMetric(
      'postern_http_received_bytes_total',
      'Bytes received from clients per HTTP service',
      'counter',
    ),
    httpSent: new ScrapedMetric('postern_http_sent_bytes_total', 'Bytes sent to clients per HTTP service', 'counter'),
    httpDuration: new ScrapedMetric(
      'postern_http_request_duration_seconds',
      'Time to answer HTTP requests per service',
      'histogram',
    ),
    httpOpen: new ScrapedMetric('postern_http_open_requests', 'HTTP requests in flight per service', 'gauge'),
    streamConnections: new ScrapedMetric(
      'postern_stream_connections_total',
      'TCP connections and UDP sessions that ended per service',
      'counter',
    ),
    streamFailed: new ScrapedMetric(
      'postern_stream_failed_connections_total',
      'TCP/UDP sessions that failed (backend unreachable, refused)',
      'counter',
    ),
    streamReceived: new ScrapedMetric(
      'postern_stream_received_bytes_total',
      'Bytes received from clients per TCP/UDP service',
      'counter',
    ),
    streamSent: new ScrapedMetric(
      'postern_stream_sent_bytes_total',
      'Bytes sent to clients per TCP/UDP service',
      'counter',
    ),
    streamSeconds: new ScrapedMetric(
      'postern_stream_connection_seconds_total',
      'Summed duration of ended TCP/UDP sessions',
      'counter',
    ),
    streamOpen: new ScrapedMetric('postern_stream_open_connections', 'TCP connections open per service', 'gauge'),
    backendUp: new ScrapedMetric(
      'postern_backend_up',
      'Whether the last health check of the service backend succeeded (absent: not checked)',
      'gauge',
    ),
    backendLatency: new ScrapedMetric(
      'postern_backend_check_duration_seconds',
      'Duration of the last successful health check',
      'gauge',
    ),
    handshakeAge: new ScrapedMetric(
      'postern_tunnel_handshake_age_seconds',
      'Seconds since the node last completed a WireGuard handshake (absent: never)',
      'gauge',
    ),
    tunnelReceived: new ScrapedMetric(
      'postern_tunnel_received_bytes_total',
      'Bytes the gateway received from the node through the tunnel',
      'counter',
    ),
    tunnelSent: new ScrapedMetric(
      'postern_tunnel_sent_bytes_total',
      'Bytes the gateway sent to the node through the tunnel',
      'counter',
    ),
    certExpiry: new ScrapedMetric(
      'postern_certificate_expiry_timestamp_seconds',
      'When the certificate served for the domain expires (unix time)',
      'gauge',
    ),
    driftDifferences: new ScrapedMetric(
      'postern_drift_differences',
      'Differences between what nginx/WireGuard serve and the database at the last drift check',
      'gauge',
    ),
    driftChecked: new ScrapedMetric(
      'postern_drift_last_check_timestamp_seconds',
      'When the last drift check ran (unix time)',
      'gauge',
    ),
    dictCapacity: new ScrapedMetric(
      'postern_nginx_dict_capacity_bytes',
      'Size of an nginx shared dictionary (grows with the routes, certificates and services it holds)',
      'gauge',
    ),
    dictFree: new ScrapedMetric(
      'postern_nginx_dict_free_bytes',
      'Free pages of an nginx shared dictionary, in bytes',
      'gauge',
    ),
    dictRefused: new ScrapedMetric(
      'postern_nginx_dict_refused_writes_total',
      'Writes an nginx shared dictionary had no room for: pushes (gw_routes, gw_certs, gw_acme), untrackable requests refused with 503 (gw_live), dropped counter updates (gw_stats)',
      'counter',
    ),
  };
}

type ScrapedMetrics = ReturnType<typeof createScrapedMetrics>;

export function createMetrics(deps: {
  db: Store;
  dataPlane: DataPlane;
  history: TrafficHistory;
  health: HealthChecker;
  now: () => Date;
}): Metrics {
  const registry = new Registry();
  const scraped = createScrapedMetrics();
  for (const metric of Object.values(scraped)) registry.registerMetric(metric as never);
  const applyDuration = new Histogram({
    name: 'postern_apply_duration_seconds',
    help: 'Time from a change to it being served (data plane apply)',
    labelNames: ['result'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const signInFailures = new Counter({
    name: 'postern_sign_in_failures_total',
    help: 'Refused sign-ins',
    labelNames: ['reason'],
    registers: [registry],
  });
  const driftRepairs = new Counter({
    name: 'postern_drift_repairs_total',
    help: 'Drift checks that found differences and applied the database again',
    registers: [registry],
  });
  deps.dataPlane.onDrift((report: DriftReport) => {
    if (report.differences.length > 0) driftRepairs.inc();
  });
  let countSubscribers = () => 0;
  const sseSubscribers = new Gauge({
    name: 'postern_sse_subscribers',
    help: 'Open event streams (console pages, log views)',
    registers: [registry],
    collect() {
      this.set(countSubscribers());
    },
  });
  for (const reason of ['wrong_credentials', 'rate_limited']) signInFailures.inc({ reason }, 0);

  return {
    registry,
    applyDuration,
    signInFailures,
    sseSubscribers,
    set countSubscribers(count: () => number) {
      countSubscribers = count;
    },
    get countSubscribers() {
      return countSubscribers;
    },
    async render() {
      await collect(deps, scraped);
      return registry.metrics();
    },
  };
}

type CollectDeps = Parameters<typeof createMetrics>[0];
type ServiceNames = Map<string, { service: string; node: string; proto: string }>;
type Counters = Awaited<ReturnType<TrafficHistory['counters']>>;

/** Every scraped figure, read now. */
async function collect(deps: CollectDeps, scraped: ScrapedMetrics): Promise<void> {
  for (const metric of Object.values(scraped)) metric.reset();
  const names = await readServiceNames(deps.db);
  const counters = await deps.history.counters();
  collectHttp(scraped, names, counters.http);
  collectStreams(scraped, names, counters.tcp);
  for (const health of await deps.health.list()) {
    const who = names.get(`${health.type}:${health.id}`);
    if (!who || health.state === 'unknown') continue;
    const labels = { type: health.type, service_id: health.id, service: who.service, node: who.node };
    scraped.backendUp.values.push({ labels, value: health.state === 'up' ? 1 : 0 });
    if (health.latencyMs !== null) scraped.backendLatency.values.push({ labels, value: health.latencyMs / 1000 });
  }
  await collectTunnels(deps, scraped);
  await collectDataPlane(deps, scraped);
}

/** Service and node names by `type:id`, for the labels. */
async function readServiceNames(db: Store): Promise<ServiceNames> {
  const names: ServiceNames = new Map();
  for (const [type, id, name, node, proto] of await db.values<NameRow>(namesQuery))
    names.set(`${type}:${id}`, { service: name, node, proto });
  return names;
}

function collectHttp(scraped: ScrapedMetrics, names: ServiceNames, counters: Counters['http']): void {
  for (const [id, c] of counters) {
    const who = names.get(`http:${id}`);
    if (!who) continue;
    const labels = { service_id: id, service: who.service, node: who.node };
    ['1xx', '2xx', '3xx', '4xx', '5xx'].forEach((code, i) =>
      scraped.httpRequests.values.push({ labels: { ...labels, code }, value: c.requests[i] ?? 0 }),
    );
    scraped.httpReceived.values.push({ labels, value: c.bytesIn });
    scraped.httpSent.values.push({ labels, value: c.bytesOut });
    scraped.httpOpen.values.push({ labels, value: c.open });
    let cumulative = 0;
    LATENCY_BUCKETS_MS.forEach((bound, i) => {
      cumulative += c.latencyBuckets[i] ?? 0;
      scraped.httpDuration.values.push({
        metricName: 'postern_http_request_duration_seconds_bucket',
        labels: { ...labels, le: bound / 1000 },
        value: cumulative,
      });
    });
    const count = c.latencyBuckets.reduce((a, b) => a + b, 0);
    scraped.httpDuration.values.push({
      metricName: 'postern_http_request_duration_seconds_bucket',
      labels: { ...labels, le: '+Inf' },
      value: count,
    });
    scraped.httpDuration.values.push({
      metricName: 'postern_http_request_duration_seconds_sum',
      labels,
      value: c.latencySumMs / 1000,
    });
    scraped.httpDuration.values.push({
      metricName: 'postern_http_request_duration_seconds_count',
      labels,
      value: count,
    });
  }
}

function collectStreams(scraped: ScrapedMetrics, names: ServiceNames, counters: Counters['tcp']): void {
  for (const [id, c] of counters) {
    const who = names.get(`tcp:${id}`);
    if (!who) continue;
    const labels = { service_id: id, service: who.service, node: who.node, proto: who.proto };
    scraped.streamConnections.values.push({ labels, value: c.sessions });
    scraped.streamFailed.values.push({ labels, value: c.failed });
    scraped.streamReceived.values.push({ labels, value: c.bytesIn });
    scraped.streamSent.values.push({ labels, value: c.bytesOut });
    scraped.streamSeconds.values.push({ labels, value: c.secondsSum });
    scraped.streamOpen.values.push({ labels, value: c.open });
  }
}

/** Per node: the last handshake's age and the tunnel's transfer, as the data plane sees them. */
async function collectTunnels(deps: CollectDeps, scraped: ScrapedMetrics): Promise<void> {
  const nowMs = deps.now().getTime();
  for (const [node, publicKey] of await deps.db.values<NodeRow>(nodesQuery)) {
    const status = deps.dataPlane.status.get(publicKey);
    if (!status) continue;
    if (status.latestHandshakeTimestamp) {
      scraped.handshakeAge.values.push({
        labels: { node },
        value: Math.max(0, (nowMs - Date.parse(status.latestHandshakeTimestamp)) / 1000),
      });
    }
    scraped.tunnelReceived.values.push({ labels: { node }, value: status.transferRx });
    scraped.tunnelSent.values.push({ labels: { node }, value: status.transferTx });
  }
}

/** Certificates, nginx's shared dictionaries and the last drift check. */
async function collectDataPlane(deps: CollectDeps, scraped: ScrapedMetrics): Promise<void> {
  for (const [domain] of await deps.db.values<DomainRow>(domainsQuery)) {
    const notAfter = deps.dataPlane.certificates.info(domain)?.notAfter;
    if (notAfter)
      scraped.certExpiry.values.push({ labels: { domain }, value: Math.floor(Date.parse(notAfter) / 1000) });
  }
  for (const dict of (await deps.dataPlane.dictionaries()) ?? []) {
    const labels = { dict: dict.name };
    scraped.dictCapacity.values.push({ labels, value: dict.capacityBytes });
    scraped.dictFree.values.push({ labels, value: dict.freeBytes });
    scraped.dictRefused.values.push({ labels, value: dict.refusedWrites });
  }
  const drift = deps.dataPlane.lastDrift();
  if (drift) {
    scraped.driftDifferences.values.push({ labels: {}, value: drift.differences.length });
    scraped.driftChecked.values.push({ labels: {}, value: Math.floor(Date.parse(drift.checkedAt) / 1000) });
  }
}

/** Whether `given` is the metrics token, in time that does not depend on where they differ (or on their lengths). */
export function isMetricsToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
