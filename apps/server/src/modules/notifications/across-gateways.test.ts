import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { NotificationChannel, NotificationPayload } from '@postern/contract';
import { buildTestApp, TEST_STORE, type TestApp } from '../../test/build-test-app.js';
import { postgresAvailable } from '../../test/postgres.js';
import { createApiClient, insertNode } from '../services/test-support.js';
import {
  fakeBackends,
  insertTcpServices,
  loopbackNotifierOptions,
  startWebhookReceiver,
  type WebhookReceiver,
} from './test-support.js';

// Several gateways on one PostgreSQL database (docs/SCALE-OUT.md, docs/api.md "Notifications"): every gateway's
// health checks see the same backend go down, both decide at the same moments, and the operator gets each message
// once: only the holder of the `notifications` lease writes and delivers, and what was reported is a database row,
// so the gateway that takes the lease over repeats nothing and forgets nothing.

const GRACE_SECONDS = 60;

let clock = Date.parse('2026-11-27T06:00:00.000Z');
const advance = (seconds: number) => {
  clock += seconds * 1000;
};

/** What every gateway's health checks say (one backend, the same for all, as through the same tunnel). */
const { health, setBackend } = fakeBackends(() => clock);
let receiver: WebhookReceiver;
const received: NotificationPayload[] = [];
let a: TestApp;
let b: TestApp;
const notifications = loopbackNotifierOptions(health);

/** Both gateways take a round at the same moment: what each observes, writes and delivers. */
const settleBoth = async () => await Promise.all([a.app.notifier.settle(), b.app.notifier.settle()]);

// Once per test command: the run on PostgreSQL (POSTERN_TEST_STORE=postgres) would only repeat it.
describe.skipIf(TEST_STORE === 'postgres' || !(await postgresAvailable()))('notifications across gateways', () => {
  beforeAll(async () => {
    receiver = await startWebhookReceiver(({ body }) => received.push(JSON.parse(body) as NotificationPayload));
    // Leases of 6 s: the takeover below is two seconds away (a third of the period), not ten; and long enough that A,
    // stalled by B's boot in this same process on a loaded machine, does not lose its lease before the first check
    // (with 1 s both held nothing then).
    const env = { POSTERN_LEASE_SECONDS: '6' };
    a = await buildTestApp({ postgres: true, env, now: () => new Date(clock), notifications });
    b = await buildTestApp({ sameDatabaseAs: a, env, now: () => new Date(clock), notifications });
  }, 60_000);

  afterAll(async () => {
    // The first app made the database: it goes last.
    await b.cleanup();
    await a.cleanup();
    await receiver.close();
  });

  test('both see a backend go down and come back: one "down" and one "up", also after the lease moved', async () => {
    expect([a.deps.leases.holds('notifications'), b.deps.leases.holds('notifications')]).toEqual([true, false]);
    const api = createApiClient(a, await a.login());
    expect((await api('PATCH', '/api/notifications/settings', { graceSeconds: GRACE_SECONDS })).status).toBe(200);
    const { status, body: channel } = await api<NotificationChannel>('POST', '/api/notifications/channels', {
      kind: 'webhook',
      name: 'ops',
      url: `http://hooks.test:${String(receiver.port)}/postern`,
      signingSecret: 'a-signing-secret-of-this-test',
      events: ['backend'],
    });
    expect(status, JSON.stringify(channel)).toBe(201);
    const node = await insertNode(a.deps, { name: 'edge-shared' });
    const [service] = await insertTcpServices(a, [
      { nodeId: node.id, name: 'db', port: 31000, backendHost: '10.0.0.5', backendPort: 5432 },
    ]);
    const id = service?.id ?? 0;

    setBackend(id, node.id, 'up');
    await settleBoth();
    setBackend(id, node.id, 'down');
    await settleBoth();
    advance(GRACE_SECONDS + 1);
    await settleBoth();
    advance(300);
    await settleBoth();
    setBackend(id, node.id, 'up');
    await settleBoth();
    advance(GRACE_SECONDS + 1);
    await settleBoth();
    await settleBoth();
    expect(received.map((p) => p.type)).toEqual(['backend.down', 'backend.up']);

    // A leaves (a clean shutdown gives its leases up); B takes them over and is the one that speaks from now on.
    await a.deps.leases.release();
    await vi.waitFor(() => expect(b.deps.leases.holds('notifications')).toBe(true), { timeout: 10_000, interval: 50 });
    // B read the alert rows when it took over: the outage already reported is not reported again.
    await settleBoth();
    advance(300);
    await settleBoth();
    expect(received.map((p) => p.type)).toEqual(['backend.down', 'backend.up']);
    setBackend(id, node.id, 'down');
    await settleBoth();
    advance(GRACE_SECONDS + 1);
    await settleBoth();
    await settleBoth();
    expect(received.map((p) => p.type)).toEqual(['backend.down', 'backend.up', 'backend.down']);
    expect(received[2]?.gateway).toBe(b.deps.gateway.name);
    expect(new Set(received.map((p) => p.id)).size).toBe(3);
  });
});
