import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { NotificationChannel, NotificationPayload } from '@postern/contract';
import { notificationChannels, notificationDeliveries } from '../../db/schema.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { makeTestCa } from '../../test/certificates.js';
import { createApiClient, fieldMessage, insertNode } from '../services/test-support.js';
import { createAddressPolicy, resolveAllowed } from './address-guard.js';
import {
  fakeBackends,
  insertTcpServices,
  loopbackNotifierOptions,
  startSmtpReceiver,
  startWebhookReceiver,
  type SmtpReceiver,
  type WebhookReceiver,
} from './test-support.js';

// Notifications end to end inside one app (docs/api.md "Notifications"): channels (validation, secrets never
// answered), and what reaches a real webhook receiver and a real SMTP server on loopback: one "down" after the grace
// period and one "up" with the duration, twenty services of a dead node in one message, a receiver down for a while
// then every message once and in order, the HMAC signature. The clock is the test's (deps.now): the grace period and
// the back-off are proved by moving it, never by waiting; the background ticks are an hour apart, and `settle()`
// runs one round at the test's moment.

const SECRET = 'a-signing-secret-of-this-test';
const SMTP_PASSWORD = 'smtp-password-never-answered';

interface Received {
  body: string;
  payload: NotificationPayload;
  signature: string;
}

let t: TestApp;
let api: ReturnType<typeof createApiClient>;
let clock = Date.parse('2026-11-27T06:00:00.000Z');
let receiver: WebhookReceiver;
const received: Received[] = [];
let smtp: SmtpReceiver;
const { health, setBackend, removeBackend } = fakeBackends(() => clock);

const settle = async () => await t.app.notifier.settle();
const advance = (seconds: number) => {
  clock += seconds * 1000;
};

function verify(body: string, header: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match?.[1] || !match[2]) return false;
  const mac = createHmac('sha256', SECRET).update(`${match[1]}.${body}`).digest();
  return timingSafeEqual(mac, Buffer.from(match[2], 'hex'));
}

beforeAll(async () => {
  receiver = await startWebhookReceiver(({ body, headers }) =>
    received.push({
      body,
      payload: JSON.parse(body) as NotificationPayload,
      signature: String(headers['x-postern-signature']),
    }),
  );
  const ca = await makeTestCa();
  smtp = await startSmtpReceiver({ ca, password: SMTP_PASSWORD });
  // The receivers are on loopback, which the real guard refuses (a test of its own below).
  t = await buildTestApp({ now: () => new Date(clock), notifications: loopbackNotifierOptions(health, ca) });
  api = createApiClient(t, await t.login());
  const settings = await api('PATCH', '/api/notifications/settings', { graceSeconds: 60 });
  expect(settings.status).toBe(200);
  // Two servers, a CA and an app (on PostgreSQL a database migrated from scratch): seconds on a loaded machine.
}, 60_000);

afterAll(async () => {
  await t.cleanup();
  await receiver.close();
  await smtp.close();
});

async function createWebhook(events: string[] = ['backend', 'node']): Promise<NotificationChannel> {
  const { status, body } = await api<NotificationChannel>('POST', '/api/notifications/channels', {
    kind: 'webhook',
    name: `hook-${String(Math.random()).slice(2, 8)}`,
    url: `http://hooks.test:${String(receiver.port)}/postern?token=url-credential`,
    signingSecret: SECRET,
    events,
  });
  expect(status, JSON.stringify(body)).toBe(201);
  return body;
}

describe('channels', () => {
  test('refuses what cannot be sent and addresses of the gateway itself, with the field named', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ kind: 'webhook', name: 'a', url: 'https://hooks.example.com/x' }, 'signingSecret', 'This field is required'],
      [{ kind: 'slack', name: 'a', url: 'ftp://hooks.example.com/x' }, 'url', 'http or https'],
      [{ kind: 'slack', name: 'a', url: 'http://127.0.0.1:8080/' }, 'url', 'refused'],
      [{ kind: 'discord', name: 'a', url: 'http://169.254.169.254/latest/meta-data/' }, 'url', 'refused'],
      [{ kind: 'ntfy', name: 'a', url: 'http://[::1]/topic' }, 'url', 'refused'],
      [{ kind: 'mattermost', name: 'a', url: 'http://localhost/hooks/x' }, 'url', 'refused'],
      [
        { kind: 'slack', name: 'a', url: 'https://hooks.example.com/x', signingSecret: SECRET },
        'signingSecret',
        'not used',
      ],
      [
        { kind: 'email', name: 'a', host: '127.0.0.1', from: 'a@example.com', to: ['b@example.com'] },
        'host',
        'refused',
      ],
      [{ kind: 'email', name: 'a', host: 'mail.example.com', from: 'a@example.com', to: [] }, 'to', 'at least one'],
      [
        {
          kind: 'email',
          name: 'a',
          host: 'mail.example.com',
          from: 'a@example.com',
          to: ['b@example.com'],
          password: 'x',
        },
        'password',
        'needs a username',
      ],
    ];
    for (const [body, field, message] of cases) {
      const response = await api('POST', '/api/notifications/channels', body);
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(fieldMessage(response.body, field), JSON.stringify(response.body)).toContain(message);
    }
    expect((await api<{ data: NotificationChannel[] }>('GET', '/api/notifications/channels')).body.data).toEqual([]);
  });

  test('never answers a secret: the URL, the signing secret, the SMTP password; stored encrypted', async () => {
    const hook = await createWebhook();
    const { status, body: mail } = await api<NotificationChannel>('POST', '/api/notifications/channels', {
      kind: 'email',
      name: 'mail',
      host: 'mail.test',
      port: smtp.port,
      security: 'starttls',
      username: 'postern',
      password: SMTP_PASSWORD,
      from: 'gateway@example.com',
      to: ['ops@example.com'],
      events: ['two-factor-disabled'],
    });
    expect(status, JSON.stringify(mail)).toBe(201);
    expect(hook).toMatchObject({ target: 'http://hooks.test:' + String(receiver.port) + '/…', hasSigningSecret: true });
    expect(mail).toMatchObject({ hasPassword: true, email: { username: 'postern', port: smtp.port } });
    const edited = await api('PATCH', `/api/notifications/channels/${String(hook.id)}`, { name: 'hook-renamed' });
    expect(edited.status).toBe(200);
    const answers = JSON.stringify([
      hook,
      mail,
      edited.body,
      (await api('GET', '/api/notifications/channels')).body,
      (await api('GET', '/api/audit?limit=50')).body,
    ]);
    for (const secret of [SECRET, SMTP_PASSWORD, 'url-credential']) expect(answers).not.toContain(secret);
    const rows = await t.db.select().from(notificationChannels).all();
    for (const secret of [SECRET, SMTP_PASSWORD, 'url-credential']) expect(JSON.stringify(rows)).not.toContain(secret);
    // An edit that leaves the secrets out keeps them: the test still signs and authenticates.
    const tested = await api<{ ok: boolean; message: string }>(
      'POST',
      `/api/notifications/channels/${String(hook.id)}/test`,
      {},
    );
    expect(tested.body, tested.body.message).toMatchObject({ ok: true });
    expect(verify(received.at(-1)?.body ?? '', received.at(-1)?.signature ?? '')).toBe(true);
    const mailed = await api<{ ok: boolean; message: string }>(
      'POST',
      `/api/notifications/channels/${String(mail.id)}/test`,
      {},
    );
    expect(mailed.body, mailed.body.message).toMatchObject({ ok: true });
    expect(smtp.mails.at(-1)).toMatchObject({ to: ['ops@example.com'], user: 'postern', secure: true });
    expect(smtp.mails.at(-1)?.data).toContain('Subject: [Postern]');
    received.length = 0;
    smtp.mails.length = 0;
    await api('DELETE', `/api/notifications/channels/${String(hook.id)}`);
    await api('DELETE', `/api/notifications/channels/${String(mail.id)}`);
  });

  test('"send test" says why a channel is unreachable, with no URL in the sentence', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const hook = await api<{ ok: boolean; message: string }>('POST', '/api/notifications/channels/test', {
      kind: 'slack',
      name: 'draft',
      url: `http://hooks.test:${String(port)}/services/secret-path`,
    });
    expect(hook.status).toBe(200);
    expect(hook.body.ok).toBe(false);
    expect(hook.body.message).toContain('connection refused');
    expect(hook.body.message).not.toContain('secret-path');
    const mail = await api<{ ok: boolean; message: string }>('POST', '/api/notifications/channels/test', {
      kind: 'email',
      name: 'draft',
      host: 'mail.test',
      port: smtp.port,
      username: 'postern',
      password: 'wrong',
      from: 'gateway@example.com',
      to: ['ops@example.com'],
    });
    expect(mail.body.ok).toBe(false);
    expect(mail.body.message).toMatch(/username or password|Invalid/);
  });

  test('the real guard refuses a name that resolves to this machine, link-local or the tunnel network', async () => {
    const policy = createAddressPolicy({ vpnSubnet: '10.44.0.0/16', localAddresses: () => ['192.0.2.7'] });
    const to = (address: string) => () => Promise.resolve([address]);
    for (const address of [
      '127.0.0.1',
      '169.254.169.254',
      '10.44.0.9',
      '192.0.2.7',
      '::1',
      'fe80::1',
      '::ffff:127.0.0.1',
    ])
      await expect(resolveAllowed('hooks.example.com', policy, to(address)), address).rejects.toThrow(/never sent/);
    await expect(resolveAllowed('hooks.example.com', policy, to('192.168.1.20'))).resolves.toEqual(['192.168.1.20']);
  });
});

describe('what reaches the operator', () => {
  test('a backend down: one "down" after the grace period, one "up" with the duration; a flap within it: nothing', async () => {
    const hook = await createWebhook(['backend']);
    const node = await insertNode(t.deps, { name: 'edge-1' });
    const [service] = await insertTcpServices(t, [
      { nodeId: node.id, name: 'db', port: 31000, backendHost: '10.0.0.5', backendPort: 5432 },
    ]);
    const id = service?.id ?? 0;
    setBackend(id, node.id, 'up');
    await settle();
    // A flap shorter than the grace period says nothing.
    setBackend(id, node.id, 'down');
    advance(30);
    await settle();
    setBackend(id, node.id, 'up');
    advance(120);
    await settle();
    expect(received).toEqual([]);
    // Down for longer: nothing before the grace period, one message after it, and no repeat.
    setBackend(id, node.id, 'down');
    advance(59);
    await settle();
    expect(received).toEqual([]);
    advance(2);
    await settle();
    advance(300);
    await settle();
    expect(received.map((r) => r.payload.type)).toEqual(['backend.down']);
    expect(received[0]?.payload.title).toContain('db');
    setBackend(id, node.id, 'up');
    advance(61);
    await settle();
    advance(300);
    await settle();
    expect(received.map((r) => r.payload.type)).toEqual(['backend.down', 'backend.up']);
    // Down from 06:02:31 (after the flap) to 06:08:32: 361 s.
    expect(received[1]?.payload.items[0]).toMatchObject({ name: 'db', durationSeconds: 361 });
    for (const r of received) expect(verify(r.body, r.signature), r.signature).toBe(true);
    received.length = 0;
    await api('DELETE', `/api/notifications/channels/${String(hook.id)}`);
  });

  test('a backend past the first slice of a sweep (the sweep observes 500 backends per turn): down, then up', async () => {
    const hook = await createWebhook(['backend']);
    const node = await insertNode(t.deps, { name: 'edge-sliced' });
    const [service] = await insertTcpServices(t, [
      { nodeId: node.id, name: 'sliced-db', port: 31500, backendHost: '10.0.0.9', backendPort: 5432 },
    ]);
    const id = service?.id ?? 0;
    // 520 backends in the health checks' list, this service's the last: the second slice of every sweep.
    const others = Array.from({ length: 519 }, (_, i) => 1_000_000 + i);
    for (const other of others) setBackend(other, node.id, 'up');
    setBackend(id, node.id, 'up');
    await settle();
    setBackend(id, node.id, 'down');
    advance(61);
    await settle();
    advance(300);
    await settle();
    setBackend(id, node.id, 'up');
    advance(61);
    await settle();
    advance(300);
    await settle();
    expect(received.map((r) => [r.payload.type, r.payload.items[0]?.name])).toEqual([
      ['backend.down', 'sliced-db'],
      ['backend.up', 'sliced-db'],
    ]);
    for (const other of others) removeBackend(other);
    removeBackend(id);
    received.length = 0;
    await api('DELETE', `/api/notifications/channels/${String(hook.id)}`);
  });

  test('a node dies with 20 services: one message naming them all; a receiver down: every message once, in order', async () => {
    const hook = await createWebhook(['backend']);
    const node = await insertNode(t.deps, { name: 'edge-20' });
    const rows = await insertTcpServices(
      t,
      Array.from({ length: 20 }, (_, i) => ({
        nodeId: node.id,
        name: `svc-${String(i)}`,
        port: 32000 + i,
        backendHost: '10.0.0.6',
        backendPort: 8000 + i,
      })),
    );
    for (const row of rows) setBackend(row.id, node.id, 'up');
    await settle();
    // The health checks see them go one after another, a few seconds apart, as a dead node's timeouts come in.
    receiver.isUp = false;
    for (const row of rows) {
      setBackend(row.id, node.id, 'down');
      advance(1);
      await settle();
    }
    // The first is past its grace period, the last not yet: the message waits for the group.
    advance(41);
    await settle();
    advance(20);
    await settle();
    // Queued, not delivered: the receiver answers 503. Retried with back-off; back later: delivered once.
    const pending = await t.db
      .select()
      .from(notificationDeliveries)
      .where(eq(notificationDeliveries.channelId, hook.id))
      .all();
    expect(pending.map((row) => row.status)).toEqual(['pending']);
    expect(pending[0]?.attempts).toBeGreaterThanOrEqual(1);
    for (const row of rows) setBackend(row.id, node.id, 'up');
    advance(61);
    await settle();
    advance(30);
    await settle();
    expect(received).toEqual([]);
    const retried = await t.db
      .select()
      .from(notificationDeliveries)
      .where(eq(notificationDeliveries.channelId, hook.id))
      .all();
    expect(retried.map((row) => row.status)).toEqual(['pending', 'pending']);
    expect(retried[0]?.attempts).toBeGreaterThanOrEqual(2);
    expect(retried[0]?.lastError).toContain('503');
    receiver.isUp = true;
    advance(60);
    await settle();
    advance(60);
    await settle();
    expect(received.map((r) => r.payload.type)).toEqual(['backend.down', 'backend.up']);
    expect(received[0]?.payload.items).toHaveLength(20);
    expect(received[0]?.payload.title).toContain('20');
    expect(received[1]?.payload.items).toHaveLength(20);
    for (const r of received) expect(verify(r.body, r.signature)).toBe(true);
    const done = await t.db
      .select()
      .from(notificationDeliveries)
      .where(eq(notificationDeliveries.channelId, hook.id))
      .all();
    expect(done.map((row) => row.status)).toEqual(['sent', 'sent']);
    received.length = 0;
  });

  test('a message no channel takes for 24 hours is given up, and the audit log says so', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { body: dead } = await api<NotificationChannel>('POST', '/api/notifications/channels', {
      kind: 'slack',
      name: 'gone-chat',
      url: `http://chat.test:${String(port)}/hooks/x`,
      events: ['backend'],
    });
    const node = await insertNode(t.deps, { name: 'edge-lost' });
    const [service] = await insertTcpServices(t, [
      { nodeId: node.id, name: 'lost', port: 33000, backendHost: '10.0.0.7', backendPort: 80 },
    ]);
    setBackend(service?.id ?? 0, node.id, 'up');
    await settle();
    setBackend(service?.id ?? 0, node.id, 'down');
    advance(61);
    await settle();
    const rowsOf = async () =>
      await t.db.select().from(notificationDeliveries).where(eq(notificationDeliveries.channelId, dead.id)).all();
    expect((await rowsOf()).map((row) => row.status)).toEqual(['pending']);
    expect((await rowsOf())[0]?.lastError).toContain('connection refused');
    advance(25 * 3600);
    await settle();
    expect((await rowsOf()).map((row) => row.status)).toEqual(['failed']);
    await t.deps.audit.flush();
    // A day later the session has ended: sign in again to read the log.
    api = createApiClient(t, await t.login());
    const audit = await api<{ data: { action: string; target: { name: string } | null; detail: string | null }[] }>(
      'GET',
      '/api/audit?action=notification.failed',
    );
    expect(audit.status, JSON.stringify(audit.body)).toBe(200);
    expect(audit.body.data.map((entry) => [entry.action, entry.target?.name])).toEqual([
      ['notification.failed', 'gone-chat'],
    ]);
    expect(audit.body.data[0]?.detail).toContain('connection refused');
    expect(audit.body.data[0]?.detail).not.toContain('/hooks/x');
  });

  test('a forged or replayed signature does not verify (what the docs tell receivers to check)', () => {
    const body = JSON.stringify({ version: 1, type: 'test' });
    const t0 = 1_790_000_000;
    const mac = createHmac('sha256', SECRET)
      .update(`${String(t0)}.${body}`)
      .digest('hex');
    expect(verify(body, `t=${String(t0)},v1=${mac}`)).toBe(true);
    expect(verify(body.replace('test', 'backend.down'), `t=${String(t0)},v1=${mac}`)).toBe(false);
    expect(verify(body, `t=${String(t0 + 1)},v1=${mac}`)).toBe(false);
  });
});
