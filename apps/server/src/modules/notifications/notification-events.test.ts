import { eq, like } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  NOTIFICATION_EVENTS,
  type NotificationChannel,
  type NotificationEvent,
  type NotificationPayload,
} from '@postern/contract';
import { certificates, domains, gateways, nodes } from '../../db/schema.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../../test/build-test-app.js';
import { makeTestCa } from '../../test/certificates.js';
import { createApiClient, insertNode } from '../services/test-support.js';
import {
  fakeBackends,
  loopbackNotifierOptions,
  startSmtpReceiver,
  startWebhookReceiver,
  type ReceivedRequest,
  type SmtpReceiver,
  type WebhookReceiver,
} from './test-support.js';

// Every kind of news besides backends (notifications.test.ts has those, with the queue and the signature), each from
// where the gateway learns it (docs/api.md "Notifications"): node offline/online after the grace period, a gateway
// of several gone and back, certificate renewal failed and expiring, drift found and repaired, changes set aside,
// a sign-in from a new address, two-factor sign-in turned off. Each gives exactly one message of its kind on a
// channel switched on for it and none on a channel switched on for everything else. Then the chat kinds' bodies
// against their services' documented formats, and e-mail over implicit TLS. The clock is the test's.

const GRACE_SECONDS = 60;

let t: TestApp;
let api: ReturnType<typeof createApiClient>;
let clock = Date.parse('2026-11-27T06:00:00.000Z');
let receiver: WebhookReceiver;
const received: ReceivedRequest[] = [];
let smtp: SmtpReceiver;
// No backends here: notifications.test.ts has those.
const { health } = fakeBackends(() => clock);

const settle = async () => await t.app.notifier.settle();
const advance = (seconds: number) => {
  clock += seconds * 1000;
};
const iso = (ms = clock) => new Date(ms).toISOString();

beforeAll(async () => {
  receiver = await startWebhookReceiver((request) => received.push(request));
  const ca = await makeTestCa();
  smtp = await startSmtpReceiver({ ca, password: 'smtp-password', implicitTls: true });
  t = await buildTestApp({ now: () => new Date(clock), notifications: loopbackNotifierOptions(health, ca) });
  api = createApiClient(t, await t.login());
  expect((await api('PATCH', '/api/notifications/settings', { graceSeconds: GRACE_SECONDS })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await t.cleanup();
  await receiver.close();
  await smtp.close();
});

let channelCount = 0;

async function createChannel(body: Record<string, unknown>): Promise<NotificationChannel> {
  const { status, body: channel } = await api<NotificationChannel>('POST', '/api/notifications/channels', body);
  expect(status, JSON.stringify(channel)).toBe(201);
  return channel;
}

/**
 * Two webhooks: one switched on for `event` only, one for every other event. What each received, as payloads.
 */
async function channelPair(event: NotificationEvent) {
  channelCount++;
  const on = `/on/${String(channelCount)}`;
  const off = `/off/${String(channelCount)}`;
  const hook = (path: string, events: NotificationEvent[]) =>
    createChannel({
      kind: 'webhook',
      name: `hook${path.replaceAll('/', '-')}`,
      url: `http://hooks.test:${String(receiver.port)}${path}`,
      signingSecret: 'a-signing-secret-of-this-test',
      events,
    });
  const channels = [
    await hook(on, [event]),
    await hook(
      off,
      NOTIFICATION_EVENTS.filter((e) => e !== event),
    ),
  ];
  const payloads = (path: string) =>
    received.filter((r) => r.path === path).map((r) => JSON.parse(r.body) as NotificationPayload);
  return {
    /** The messages the channel switched on for the event received. */
    on: () => payloads(on),
    /** The messages of this event the channel switched on for everything else received (none, always). */
    offOfEvent: () => payloads(off).filter((payload) => payload.event === event),
    async remove() {
      for (const channel of channels) await api('DELETE', `/api/notifications/channels/${String(channel.id)}`);
    },
  };
}

/** The data plane reports the node of `publicKey` online or offline, its handshake now. */
function setNodeStatus(publicKey: string, status: 'online' | 'offline'): void {
  t.fakeDataPlane.status.setStatus(publicKey, {
    status,
    clientIp: null,
    latestHandshakeTimestamp: iso(),
    transferRx: 0,
    transferTx: 0,
  });
}

describe('every kind of news: one message on the channel switched on for it, none on the others', () => {
  test('a node offline after the grace period, and online again with the duration', async () => {
    const pair = await channelPair('node');
    const node = await insertNode(t.deps, { name: 'edge-node' });
    const setStatus = (status: 'online' | 'offline') => setNodeStatus(node.publicKey, status);
    setStatus('online');
    await settle();
    setStatus('offline');
    await settle();
    advance(GRACE_SECONDS - 1);
    await settle();
    expect(pair.on()).toEqual([]);
    advance(2);
    await settle();
    advance(300);
    await settle();
    expect(pair.on().map((p) => [p.type, p.title])).toEqual([['node.offline', 'Node edge-node is offline']]);
    setStatus('online');
    await settle();
    advance(GRACE_SECONDS + 1);
    await settle();
    expect(pair.on().map((p) => p.type)).toEqual(['node.offline', 'node.online']);
    // Offline from 06:00 to 06:06:01 (the grace period, the wait, then online).
    expect(pair.on()[1]?.items[0]).toMatchObject({ subject: 'node', name: 'edge-node', durationSeconds: 361 });
    expect(pair.offOfEvent()).toEqual([]);
    await pair.remove();
  });

  test('a node past the first slice of a sweep (the sweep reads 500 nodes per turn): offline, then online', async () => {
    const pair = await channelPair('node');
    const many = await t.db.write(
      async (tx) =>
        await tx
          .insert(nodes)
          .values(
            Array.from({ length: 520 }, (_, i) => ({
              name: `swept-${String(i)}`,
              address: `10.44.${String(200 + Math.floor(i / 250))}.${String((i % 250) + 2)}`,
              publicKey: `swept-key-${String(i)}`,
              privateKeyEnc: t.deps.secrets.encrypt('not a key: never used'),
            })),
          )
          .returning({ publicKey: nodes.publicKey })
          .all(),
    );
    const last = many.at(-1)?.publicKey ?? '';
    const setStatus = (status: 'online' | 'offline') => setNodeStatus(last, status);
    setStatus('online');
    await settle();
    setStatus('offline');
    await settle();
    advance(GRACE_SECONDS + 1);
    await settle();
    advance(300);
    await settle();
    setStatus('online');
    await settle();
    advance(GRACE_SECONDS + 1);
    await settle();
    expect(pair.on().map((p) => p.title)).toEqual([
      'Node swept-519 is offline',
      expect.stringMatching(/^Node swept-519 is online again/),
    ]);
    await t.db.write(async (tx) => await tx.delete(nodes).where(like(nodes.name, 'swept-%')).run());
    t.fakeDataPlane.status.setStatus(last, undefined);
    await pair.remove();
  });

  test('a gateway of several gone (no heartbeat), and back', async () => {
    const pair = await channelPair('gateway');
    const heartbeat = async (id: number) => {
      await t.db.write(
        async (tx) => await tx.update(gateways).set({ lastSeenAt: iso() }).where(eq(gateways.id, id)).run(),
      );
    };
    const [other] = await t.db.write(
      async (tx) =>
        await tx
          .insert(gateways)
          .values({
            name: 'gw-other',
            publicKey: 'b3RoZXItZ2F0ZXdheS1wdWJsaWMta2V5LW9mLXRlc3Q=',
            privateKeyEnc: t.deps.secrets.encrypt('not a real key'),
            address: '10.44.255.250',
            endpoint: 'gw-other.test:51820',
            lastSeenAt: iso(),
          })
          .returning()
          .all(),
    );
    const otherId = other?.id ?? 0;
    await heartbeat(t.deps.gateway.id);
    await settle();
    // This gateway beats on; the other stops: gone once past the live window, reported after the grace period.
    // Its last heartbeat at 0 s: live until 60 s, seen gone at 80 s, due after the grace period at 140 s.
    for (let i = 0; i < 6; i++) {
      advance(20);
      await heartbeat(t.deps.gateway.id);
      await settle();
    }
    expect(pair.on()).toEqual([]);
    advance(20);
    await heartbeat(t.deps.gateway.id);
    await settle();
    expect(pair.on().map((p) => [p.type, p.title])).toEqual([['gateway.gone', 'Gateway gw-other is gone']]);
    await heartbeat(otherId);
    await settle();
    advance(GRACE_SECONDS + 1);
    await heartbeat(t.deps.gateway.id);
    await heartbeat(otherId);
    await settle();
    expect(pair.on().map((p) => p.type)).toEqual(['gateway.gone', 'gateway.back']);
    expect(pair.offOfEvent()).toEqual([]);
    // The other gateway leaves the cluster for good: its row goes, and nothing more is said.
    await t.db.write(async (tx) => await tx.delete(gateways).where(eq(gateways.id, otherId)).run());
    await pair.remove();
  });

  test('a certificate renewal that failed, once, with the next attempt', async () => {
    const pair = await channelPair('certificate-failed');
    const [domain] = await t.db.write(
      async (tx) => await tx.insert(domains).values({ domain: 'shop.example.com', ssl: 'certbot' }).returning().all(),
    );
    await t.db.write(
      async (tx) =>
        await tx
          .insert(certificates)
          .values({
            domainId: domain?.id ?? 0,
            state: 'failed',
            error: 'the CA refused the order: rateLimited',
            nextAttemptAt: iso(clock + 86_400_000),
            failures: 3,
          })
          .run(),
    );
    await settle();
    await settle();
    expect(pair.on().map((p) => [p.type, p.title])).toEqual([
      ['certificate.failed', 'Certificate renewal failed for shop.example.com'],
    ]);
    expect(pair.on()[0]?.items[0]?.detail).toContain('rateLimited; the next attempt is at 2026-11-28');
    expect(pair.offOfEvent()).toEqual([]);
    await pair.remove();
  });

  test('a certificate expiring within the warning (14 days by default), once', async () => {
    const pair = await channelPair('certificate-expiring');
    const [domain] = await t.db.write(
      async (tx) => await tx.insert(domains).values({ domain: 'old.example.com', ssl: 'certbot' }).returning().all(),
    );
    await t.db.write(
      async (tx) =>
        await tx
          .insert(certificates)
          .values({
            domainId: domain?.id ?? 0,
            state: 'valid',
            notBefore: iso(clock - 80 * 86_400_000),
            notAfter: iso(clock + 5 * 86_400_000 + 3600_000),
          })
          .run(),
    );
    await settle();
    await settle();
    expect(pair.on().map((p) => [p.type, p.title])).toEqual([
      ['certificate.expiring', 'The certificate of old.example.com expires in 5 days'],
    ]);
    expect(pair.offOfEvent()).toEqual([]);
    await pair.remove();
  });

  test('drift found and repaired: once for the same differences within the hour', async () => {
    const pair = await channelPair('drift');
    const report = {
      checkedAt: iso(),
      differences: ['nginx: route shop.example.com is missing', 'wireguard: peer of node edge-1 is missing'],
      repaired: true,
    };
    t.fakeDataPlane.reportDrift(report);
    await settle();
    advance(60);
    t.fakeDataPlane.reportDrift({ ...report, checkedAt: iso() });
    await settle();
    expect(pair.on().map((p) => [p.type, p.severity, p.title])).toEqual([
      ['drift.found', 'warning', `Drift found on gateway ${t.deps.gateway.name} and repaired`],
    ]);
    expect(pair.on()[0]?.items.map((item) => item.name)).toEqual(report.differences);
    expect(pair.offOfEvent()).toEqual([]);
    await pair.remove();
  });

  test('changes the data plane set aside: the rows of one apply in one message', async () => {
    const pair = await channelPair('set-aside');
    // As dataplane-apply.ts records each newly refused row.
    for (const [id, name] of [
      [41, 'wiki'],
      [42, 'files'],
    ] as const)
      await t.deps.audit.record({
        actor: { kind: 'system' },
        action: 'dataplane.rejected',
        target: { type: 'http', id, name },
        after: { applyError: 'the backend address is in a network the gateway refuses' },
        detail: 'the backend address is in a network the gateway refuses',
      });
    await settle();
    expect(pair.on().map((p) => [p.type, p.title])).toEqual([['change.set-aside', '2 changes were set aside']]);
    expect(pair.on()[0]?.items.map((item) => item.name)).toEqual(['wiki', 'files']);
    expect(pair.offOfEvent()).toEqual([]);
    await pair.remove();
  });

  test('a sign-in from a new address, once: the next sign-in from it is not news', async () => {
    const pair = await channelPair('new-sign-in-address');
    const signIn = async (address: string) => {
      const answer = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: address,
        payload: TEST_ADMIN,
      });
      expect(answer.statusCode).toBe(200);
    };
    await signIn('127.0.0.1');
    await signIn('203.0.113.77');
    await signIn('203.0.113.77');
    await settle();
    expect(pair.on().map((p) => [p.type, p.title])).toEqual([
      ['auth.new-address', 'admin signed in from a new address: 203.0.113.77'],
    ]);
    expect(pair.offOfEvent()).toEqual([]);
    await pair.remove();
  });

  test('two-factor sign-in turned off, through the API as an admin does it', async () => {
    const pair = await channelPair('two-factor-disabled');
    const codeAt = (secret: string) =>
      new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({
        timestamp: clock,
      });
    const setup = await api<{ secret: string }>('POST', '/api/auth/2fa/setup', { password: TEST_ADMIN.password });
    expect(setup.status).toBe(200);
    expect((await api('POST', '/api/auth/2fa/enable', { code: codeAt(setup.body.secret) })).status).toBe(200);
    advance(30); // the enrolment code's step is spent
    const off = await api('POST', '/api/auth/2fa/disable', {
      password: TEST_ADMIN.password,
      code: codeAt(setup.body.secret),
    });
    expect(off.status).toBe(204);
    await settle();
    expect(pair.on().map((p) => [p.type, p.title])).toEqual([
      ['auth.two-factor-disabled', 'admin turned two-factor sign-in off'],
    ]);
    expect(pair.offOfEvent()).toEqual([]);
    await pair.remove();
  });
});

describe("each kind's body, as its service documents it", () => {
  const sendTest = async (body: Record<string, unknown>) => {
    const { status, body: result } = await api<{ ok: boolean; message: string }>(
      'POST',
      '/api/notifications/channels/test',
      { name: 'draft', ...body },
    );
    expect(status).toBe(200);
    expect(result, result.message).toMatchObject({ ok: true });
  };
  const lastAt = (path: string): ReceivedRequest => {
    const found = received.filter((r) => r.path === path).at(-1);
    if (!found) throw new Error(`nothing received at ${path}`);
    return found;
  };
  const url = (path: string) => `http://hooks.test:${String(receiver.port)}${path}`;

  test('Slack: a JSON object with `text` (mrkdwn, the title in *bold*)', async () => {
    // https://docs.slack.dev/tools/java-slack-sdk/guides/incoming-webhooks (curl -d '{"text":"Hello, World!"}'),
    // api.slack.com/messaging/webhooks: POST application/json, `text` in mrkdwn, where *x* is bold.
    await sendTest({ kind: 'slack', url: url('/fmt/slack') });
    const got = lastAt('/fmt/slack');
    expect(got.headers['content-type']).toBe('application/json');
    const body = JSON.parse(got.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['text']);
    expect(body.text).toMatch(/^\*Test message from Postern \(draft\)\*\nThis is a test/);
  });

  test('Mattermost: `text` (Markdown, **bold**) and the `username` override', async () => {
    // https://developers.mattermost.com/integrate/webhooks/incoming/: POST application/json {"text": "…"}, Markdown;
    // optional `username` overrides the name the post shows.
    await sendTest({ kind: 'mattermost', url: url('/fmt/mattermost') });
    const got = lastAt('/fmt/mattermost');
    expect(got.headers['content-type']).toBe('application/json');
    const body = JSON.parse(got.body) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['text', 'username']);
    expect(body.username).toBe('Postern');
    expect(body.text).toMatch(/^\*\*Test message from Postern \(draft\)\*\*\n/);
  });

  test('Discord: `content` of at most 2,000 characters, mentions off', async () => {
    // https://discord.com/developers/docs/resources/webhook#execute-webhook (as discord-api-types'
    // RESTPostAPIWebhookWithTokenJSONBody words it): `content` "the message contents (up to 2000 characters)",
    // `allowed_mentions` (an allowed-mentions object; `parse: []` lets no name in a message ping anyone).
    await sendTest({ kind: 'discord', url: url('/fmt/discord') });
    const got = lastAt('/fmt/discord');
    const body = JSON.parse(got.body) as { content: string; allowed_mentions: unknown };
    expect(Object.keys(body).sort()).toEqual(['allowed_mentions', 'content']);
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.content).toMatch(/^\*\*Test message from Postern \(draft\)\*\*\n/);
    // A long message (drift with many long differences) is cut to fit.
    const channel = await createChannel({
      kind: 'discord',
      name: 'discord-long',
      url: url('/fmt/discord-long'),
      events: ['drift'],
    });
    t.fakeDataPlane.reportDrift({
      checkedAt: iso(),
      differences: Array.from(
        { length: 40 },
        (_, i) => `nginx: route ${'x'.repeat(60)}-${String(i)}.example.com differs`,
      ),
      repaired: false,
    });
    await settle();
    const long = JSON.parse(lastAt('/fmt/discord-long').body) as { content: string };
    expect(long.content.length).toBeLessThanOrEqual(2000);
    expect(long.content.endsWith(' …')).toBe(true);
    await api('DELETE', `/api/notifications/channels/${String(channel.id)}`);
  });

  test('ntfy: the text as the body, with Title, Priority (1-5) and Tags headers, and the token as a bearer', async () => {
    // https://docs.ntfy.sh/publish/: POST/PUT the message as the body to the topic URL; `Title`, `Priority`
    // (1 min … 5 max/urgent, 3 default) and `Tags` (comma-separated; emoji short codes show as emoji) as headers;
    // access tokens as `Authorization: Bearer`.
    await sendTest({ kind: 'ntfy', url: url('/fmt/ntfy-topic'), token: 'tk_ntfy-token-of-the-test' });
    const got = lastAt('/fmt/ntfy-topic');
    expect(got.body).toMatch(/^This is a test of the notification channel draft/);
    expect(got.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(got.headers.title).toBe('Test message from Postern (draft)');
    expect(got.headers.priority).toBe('3');
    expect(got.headers.tags).toBe('information_source');
    expect(got.headers.authorization).toBe('Bearer tk_ntfy-token-of-the-test');
  });

  test('e-mail over implicit TLS (port 465 style): TLS from the first byte, then the login', async () => {
    smtp.mails.length = 0;
    await sendTest({
      kind: 'email',
      host: 'mail.test',
      port: smtp.port,
      security: 'tls',
      username: 'postern',
      password: 'smtp-password',
      from: 'gateway@example.com',
      to: ['ops@example.com'],
    });
    expect(smtp.mails.map((m) => [m.secure, m.user])).toEqual([[true, 'postern']]);
    expect(smtp.mails[0]?.data).toContain('Subject: [Postern] Test message from Postern (draft)');
  });
});
