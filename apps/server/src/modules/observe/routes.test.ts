import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceFigures, ServiceHealth, ServiceTraffic, SystemStatus } from '@postern/contract';
import {
  LATENCY_BUCKETS_MS,
  type HttpTraffic,
  type StreamTraffic,
  type TrafficCounters,
} from '../../dataplane/types.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../../test/build-test-app.js';
import { createApiClient, fieldMessage, insertNode } from '../services/test-support.js';
import type { HealthTarget, ProbeResult } from './health-checker.js';

let t: TestApp;
// eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
afterEach(async () => t?.cleanup());

const METRICS_TOKEN = 'metrics-token-0123456789';

function http(
  requests: HttpTraffic['requests'],
  fastest: number,
  slow: number,
  extra: Partial<HttpTraffic> = {},
): HttpTraffic {
  const latencyBuckets = new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0);
  latencyBuckets[0] = fastest; // ≤ 5 ms
  latencyBuckets[5] = slow; // ≤ 250 ms
  return {
    requests,
    bytesIn: 1000,
    bytesOut: 50_000,
    latencySumMs: fastest * 2 + slow * 200,
    latencyBuckets,
    open: 2,
    ...extra,
  };
}
const stream = (sessions: number, failed: number): StreamTraffic => ({
  sessions,
  failed,
  bytesIn: 300,
  bytesOut: 700,
  secondsSum: sessions * 4,
  open: 1,
});
const counters = (
  h: [number, HttpTraffic][],
  s: [number, StreamTraffic][] = [],
  epoch = 'offline',
): TrafficCounters => ({ httpEpoch: epoch, streamEpoch: epoch, http: new Map(h), tcp: new Map(s) });

async function setUp(options: Parameters<typeof buildTestApp>[0] = {}) {
  t = await buildTestApp(options);
  const api = createApiClient(t, await t.login());
  const node = await insertNode(t.deps);
  const web = await api<{ id: number }>('POST', `/api/services/${node.id}/http`, {
    name: 'web',
    pathLocation: '/web',
    backendPort: 8080,
  });
  const db = await api<{ id: number }>('POST', `/api/services/${node.id}/tcp`, { name: 'db', backendPort: 5432 });
  expect(web.status).toBe(201);
  expect(db.status).toBe(201);
  return { api, node, webId: web.body.id, dbId: db.body.id };
}

describe('traffic per service', () => {
  it('answers the exact requests by status class, quantiles, bytes and open requests of the current minute', async () => {
    const { api, node, webId, dbId } = await setUp();
    t.fakeDataPlane.setTraffic(counters([[webId, http([0, 90, 5, 3, 2], 95, 5)]], [[dbId, stream(4, 1)]]));

    const web = await api<ServiceTraffic>('GET', `/api/services/${node.id}/http/${webId}/traffic?minutes=60`);
    expect(web.status).toBe(200);
    expect(web.body.summary).toEqual({
      type: 'http',
      minutes: 60,
      requests: 100,
      status: { '1xx': 0, '2xx': 90, '3xx': 5, '4xx': 3, '5xx': 2 },
      bytesIn: 1000,
      bytesOut: 50_000,
      p50Ms: 5,
      p95Ms: 5,
      open: 2,
    });
    expect(web.body.points).toHaveLength(60);
    expect(web.body.points.at(-1)).toMatchObject({ requests: 100, errors: 2 });

    const db = await api<ServiceTraffic>('GET', `/api/services/${node.id}/tcp/${dbId}/traffic`);
    expect(db.body.summary).toEqual({
      type: 'tcp',
      minutes: 60,
      connections: 4,
      failed: 1,
      bytesIn: 300,
      bytesOut: 700,
      avgDurationSeconds: 4,
      open: 1,
    });
  });

  it('stores each minute and adds only what changed since (the p95 moves with the slow requests)', async () => {
    // The app took its baseline reading at start; readings follow on the minute, as the timer takes them.
    let clock = Date.parse('2030-01-01T10:00:00.200Z');
    const { api, node, webId } = await setUp({ now: () => new Date(clock) });
    t.fakeDataPlane.setTraffic(counters([[webId, http([0, 10, 0, 0, 0], 10, 0)]]));
    clock += 60_000;
    await t.app.observer.history.sample();
    t.fakeDataPlane.setTraffic(counters([[webId, http([0, 27, 0, 0, 3], 20, 10)]]));
    clock += 60_000;
    await t.app.observer.history.sample();

    const answer = await api<ServiceTraffic>('GET', `/api/services/${node.id}/http/${webId}/traffic?minutes=3`);
    expect(answer.body.points.map((p) => [p.minute, p.requests, p.p95Ms])).toEqual([
      ['2030-01-01T10:00:00.000Z', 10, 5],
      ['2030-01-01T10:01:00.000Z', 20, 250],
      ['2030-01-01T10:02:00.000Z', 0, null],
    ]);
    expect(answer.body.summary).toMatchObject({ requests: 30, p50Ms: 5, p95Ms: 250 });

    // A new epoch (nginx started again) counts from zero: nothing goes negative, nothing is counted twice.
    t.fakeDataPlane.setTraffic(counters([[webId, http([0, 4, 0, 0, 0], 4, 0)]], [], 'restarted'));
    clock += 2000; // past the one-second cache of live readings
    const after = await api<ServiceTraffic>('GET', `/api/services/${node.id}/http/${webId}/traffic?minutes=3`);
    expect(after.body.summary).toMatchObject({ requests: 34 });

    const figures = await api<{ data: ServiceFigures[] }>('GET', `/api/observe/services?nodeId=${node.id}&type=http`);
    expect(figures.body.data).toHaveLength(1);
    expect(figures.body.data[0]).toMatchObject({ type: 'http', id: webId, requests: 34 });
    expect(figures.body.data[0]?.spark.slice(-3)).toEqual([10, 20, 4]);
    // The 5xx of each minute, aligned with the requests (the console draws them in red).
    expect(figures.body.data[0]?.errorSpark?.slice(-3)).toEqual([0, 3, 0]);

    // A page's rows ask for their own figures only (the services overview), not every service's.
    const named = await api<{ data: ServiceFigures[] }>('GET', `/api/observe/services?services=http:${webId},tcp:999`);
    expect(named.body.data.map((f) => `${f.type}:${f.id}`)).toEqual([`http:${webId}`]);
    expect((await api('GET', '/api/observe/services?services=http:1;drop')).status).toBe(422);

    const status = await api<SystemStatus>('GET', '/api/system/status');
    expect(status.body.traffic).toMatchObject({ requests: 34, minutes: 1440 });
  });

  it('refuses an unknown service and a window beyond 24 hours', async () => {
    const { api, node, webId } = await setUp();
    expect((await api('GET', `/api/services/${node.id}/http/${webId + 99}/traffic`)).status).toBe(404);
    expect((await api('GET', `/api/services/${node.id}/http/${webId}/traffic?minutes=1441`)).status).toBe(422);
  });
});

describe('backend health', () => {
  it('checks each served backend, reports down with the error and up again, streams changes and takes interval settings', async () => {
    let failing = new Set<number>();
    const probes: HealthTarget[] = [];
    const probe = (target: HealthTarget): Promise<ProbeResult> => {
      probes.push(target);
      return Promise.resolve({
        error: failing.has(target.id) && target.type === 'http' ? 'connection refused' : null,
        latencyMs: 3,
      });
    };
    const { api, node, webId } = await setUp({ observe: { healthProbe: probe } });
    const changes: ServiceHealth[] = [];
    t.app.observer.health.onHealthChange(({ health }) => changes.push(health));

    const health = async () =>
      (await api<{ data: ServiceFigures[] }>('GET', `/api/observe/services?nodeId=${node.id}`)).body.data;
    await expect
      .poll(async () => (await health()).map((f) => f.health?.state), { timeout: 10_000 })
      .toEqual(['up', 'up']);
    expect(probes.find((p) => p.type === 'http')).toMatchObject({
      host: node.address,
      port: 8080,
      path: '/web',
      probe: 'http',
    });

    const set = await api<ServiceHealth>('PATCH', `/api/services/${node.id}/http/${webId}/health-check`, {
      intervalSeconds: 5,
      timeoutSeconds: 2,
    });
    expect(set.body).toMatchObject({ intervalSeconds: 5, timeoutSeconds: 2 });
    const bad = await api('PATCH', `/api/services/${node.id}/http/${webId}/health-check`, { intervalSeconds: 1 });
    expect(bad.status).toBe(422);
    expect(fieldMessage(bad.body, 'intervalSeconds')).toBeTruthy();

    failing = new Set([webId]);
    await expect
      .poll(async () => (await health()).find((f) => f.type === 'http')?.health, { timeout: 15_000 })
      .toMatchObject({ state: 'down', lastError: 'connection refused', latencyMs: null });
    failing = new Set();
    await expect
      .poll(async () => (await health()).find((f) => f.type === 'http')?.health?.state, { timeout: 15_000 })
      .toBe('up');
    expect(changes.filter((c) => c.type === 'http').map((c) => c.state)).toEqual(['up', 'down', 'up']);
    // The audit log keeps the transitions (not the first verdict that a backend is up), with the error.
    const audit = await api<{
      data: { action: string; before: unknown; after: unknown; detail: string | null; target: { id: number } | null }[];
    }>('GET', '/api/audit?action=service.health');
    expect(
      audit.body.data
        .filter((e) => e.target?.id === webId)
        .map((e) => e.detail)
        .reverse(),
    ).toEqual(['connection refused', null]);
  }, 40_000);

  it('checks nothing with the data plane off and no probe given (served services show unknown)', async () => {
    const { api, node } = await setUp();
    const figures = await api<{ data: ServiceFigures[] }>('GET', `/api/observe/services?nodeId=${node.id}`);
    expect(figures.body.data.map((f) => [f.health?.state, f.health?.lastCheckedAt])).toEqual([
      ['unknown', null],
      ['unknown', null],
    ]);
  });
});

describe('drift and system status', () => {
  it('shows the last drift check with its differences', async () => {
    const { api } = await setUp();
    expect((await api<SystemStatus>('GET', '/api/system/status')).body.drift).toBeNull();
    t.fakeDataPlane.reportDrift({
      checkedAt: '2030-01-01T10:00:00.000Z',
      differences: ['nginx: route of web.test differs'],
      repaired: true,
    });
    const status = await api<SystemStatus>('GET', '/api/system/status');
    expect(status.body.drift).toEqual({
      checkedAt: '2030-01-01T10:00:00.000Z',
      differences: ['nginx: route of web.test differs'],
      repaired: true,
    });
    expect(status.body.dictionaries).toBeNull();
  });

  it('reports what was removed behind the data plane’s back and puts it back (the supervisor the real one runs)', async () => {
    const { api } = await setUp();
    const hosts = [...t.fakeDataPlane.proxy.routes.keys()];
    const instances = [...t.fakeDataPlane.proxy.streams.keys()];
    expect(hosts).toHaveLength(1);
    expect(instances).toHaveLength(1);
    // Someone deletes the routes in nginx and stops the TCP service's instance by hand.
    t.fakeDataPlane.proxy.routes.clear();
    t.fakeDataPlane.proxy.streams.clear();
    const report = await t.fakeDataPlane.checkDrift();
    expect(report.differences).toEqual([
      'nginx lacks the routes of services without a domain',
      `the instance of ${instances[0] ?? ''} is not running`,
    ]);
    expect(report.repaired).toBe(true);
    expect([...t.fakeDataPlane.proxy.routes.keys()]).toEqual(hosts);
    expect([...t.fakeDataPlane.proxy.streams.keys()]).toEqual(instances);
    expect((await api<SystemStatus>('GET', '/api/system/status')).body.drift).toEqual(report);
    // Repaired: the next check finds nothing.
    expect((await t.fakeDataPlane.checkDrift()).differences).toEqual([]);
  });

  it('shows a change the data plane could not apply at once, and how full nginx’s dictionaries are', async () => {
    const { api, node } = await setUp();
    t.fakeDataPlane.failNextApply('nginx did not take POST /routes: its control socket cannot be reached (ENOENT).');
    expect(
      (await api('POST', `/api/services/${node.id}/http`, { name: 'late', domain: 'late.example.test' })).status,
    ).toBe(503);
    t.fakeDataPlane.setDictionaries([
      { name: 'gw_routes', capacityBytes: 16_777_216, freeBytes: 4096, refusedWrites: 2 },
    ]);
    const status = await api<SystemStatus>('GET', '/api/system/status');
    expect(status.body.drift).toMatchObject({
      differences: [
        'the last change could not be applied: nginx did not take POST /routes: its control socket cannot be reached (ENOENT).',
      ],
      repaired: false,
    });
    expect(status.body.dictionaries).toEqual([
      { name: 'gw_routes', capacityBytes: 16_777_216, freeBytes: 4096, refusedWrites: 2 },
    ]);
  });
});

describe('/metrics', () => {
  it('is not served without a metrics token or address', async () => {
    await setUp();
    expect((await t.app.inject({ url: '/metrics' })).statusCode).toBe(404);
  });

  it('answers only the metrics token (not a session) with figures a Prometheus parser reads', async () => {
    const { api, webId, dbId } = await setUp({ env: { POSTERN_METRICS_TOKEN: METRICS_TOKEN } });
    expect((await api('POST', '/api/domains', { domain: 'web.example.test' })).status).toBe(201);
    t.fakeDataPlane.setTraffic(counters([[webId, http([0, 90, 5, 3, 2], 95, 5)]], [[dbId, stream(4, 1)]]));
    t.fakeDataPlane.reportDrift({ checkedAt: '2030-01-01T10:00:00.000Z', differences: ['a', 'b'], repaired: true });
    await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: TEST_ADMIN.username, password: 'wrong-password-here' },
    });
    const session = await t.login();

    expect((await t.app.inject({ url: '/metrics' })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${session}` } })).statusCode).toBe(
      401,
    );
    expect(
      (await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}x` } })).statusCode,
    ).toBe(401);
    const response = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain; version=0.0.4');

    const families = new Map(parsePrometheusTextFormat(response.body).map((family) => [family.name, family]));
    const requests = families.get('postern_http_requests_total');
    expect(requests?.type).toBe('COUNTER');
    expect(requests?.metrics.find((m) => m.labels?.code === '2xx')).toMatchObject({
      value: '90',
      labels: { service: 'web', service_id: String(webId) },
    });
    const duration = families.get('postern_http_request_duration_seconds');
    expect(duration?.type).toBe('HISTOGRAM');
    // (This parser keeps a labelled histogram's buckets, not its _sum and _count.)
    expect(duration?.metrics[0]).toMatchObject({
      buckets: { '0.005': '95', '0.1': '95', '0.25': '100', '+Inf': '100' },
    });
    expect(response.body).toContain(
      `postern_http_request_duration_seconds_count{service_id="${webId}",service="web",node=`,
    );
    expect(families.get('postern_stream_connections_total')?.metrics[0]).toMatchObject({
      value: '4',
      labels: { service: 'db', proto: 'tcp' },
    });
    expect(families.get('postern_drift_differences')?.metrics[0]?.value).toBe('2');
    expect(
      families.get('postern_sign_in_failures_total')?.metrics.find((m) => m.labels?.reason === 'wrong_credentials')
        ?.value,
    ).toBe('1');
    expect(families.get('postern_apply_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(families.get('postern_certificate_expiry_timestamp_seconds')?.metrics[0]).toEqual({
      labels: { domain: 'web.example.test' },
      value: String(Date.parse('2028-01-01T00:00:00.000Z') / 1000),
    });
    expect(families.has('postern_sse_subscribers')).toBe(true);
    t.fakeDataPlane.setDictionaries([
      { name: 'gw_routes', capacityBytes: 16_777_216, freeBytes: 4096, refusedWrites: 2 },
      { name: 'gw_live', capacityBytes: 16_777_216, freeBytes: 0, refusedWrites: 7 },
    ]);
    const again = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const dicts = new Map(parsePrometheusTextFormat(again.body).map((family) => [family.name, family]));
    expect(dicts.get('postern_nginx_dict_free_bytes')?.metrics).toEqual([
      { labels: { dict: 'gw_routes' }, value: '4096' },
      { labels: { dict: 'gw_live' }, value: '0' },
    ]);
    expect(dicts.get('postern_nginx_dict_capacity_bytes')?.metrics[0]).toEqual({
      labels: { dict: 'gw_routes' },
      value: '16777216',
    });
    expect(dicts.get('postern_nginx_dict_refused_writes_total')?.type).toBe('COUNTER');
    expect(dicts.get('postern_nginx_dict_refused_writes_total')?.metrics[1]?.value).toBe('7');
  });
});
