import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import {
  operations,
  type NotificationChannel,
  type NotificationChannelCreate,
  type NotificationPayload,
  type ServiceType,
} from '@postern/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../harness/backends.js';
import { Lab } from '../harness/lab.js';
import type { ManagedProcess } from '../harness/processes.js';
import { makeServerTls } from '../harness/server-tls.js';
import { startWireguard, waitForHandshake, type WireguardInterface } from '../harness/wireguard.js';
import { canRun } from '../../apps/server/src/test/requirements.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { connectNode, startSystem, stopSystem, type ConnectedNode, type System } from './fixture.js';

// Notifications from a real gateway (docs/api.md "Notifications"): the health checks of real nginx + WireGuard see a
// backend on a node stop and a node's tunnel die, and what the operator receives is checked where it lands: a webhook
// receiver and a real SMTP server (the `smtp-server` package, STARTTLS and a login) run in this test process on the
// test's end of the gateway's management link, which the gateway reaches as any LAN address (its outbound guard
// refuses only its own addresses, loopback, link-local and the tunnel network). The gateway trusts the SMTP server's
// test CA through NODE_EXTRA_CA_CERTS, as it would a private CA.
//
// Short timings: a grace period of GRACE_SECONDS (the settings API) and retries from 1 s doubling to 2 s
// (POSTERN_NOTIFICATION_RETRY_SECONDS / _MAX_SECONDS). The receiver is down, answering 503, for the whole outage of
// the 20 services (about 30 s on this machine: the tunnel killed, the grace period, the tunnel back, the grace period
// again), not for a fixed wall-clock time: the test ends its window when both messages have been refused, so it
// waits for events, never for time.

const SIGNING_SECRET = 'system-test-signing-secret-0123';
const SMTP_USER = 'postern';
const SMTP_PASSWORD = 'smtp-password-of-the-system-test';
/** The grace period: at least the health checks' interval plus timeout, so a dead node's services group (alerts.ts). */
const GRACE_SECONDS = 8;
const HEALTH = { intervalSeconds: 5, timeoutSeconds: 2 };
const CHECKED_PORT = 8081;
const MANY_PORT = 9090;
const MANY = 20;
/** Each test waits for several of those deadlines in a row (vitest's 60 s default is for one). */
const TEST_TIMEOUT_MS = 180_000;
/**
 * Down seen within two health intervals, then the grace period, then the notifier's 5 s sweep and 1 s tick: ~30 s,
 * doubled for a loaded machine (a deadline, not a wait: a passing run takes what the events take).
 */
const MESSAGE_DEADLINE_MS = 2 * (2 * HEALTH.intervalSeconds + HEALTH.timeoutSeconds + GRACE_SECONDS + 10) * 1000;

interface Received {
  path: string;
  body: string;
  signature: string;
  payload: NotificationPayload;
}

interface Mail {
  to: string[];
  data: string;
  user: string | undefined;
  secure: boolean;
}

/** The test's end of the management link (the gateway's end is .2 of the /30, see harness/topology.ts). */
const testSideOf = (gatewayMgmtIp: string): string =>
  gatewayMgmtIp.replace(/\.(\d+)$/, (_, last: string) => `.${String(Number(last) - 1)}`);

/** The recipe docs/api.md gives receivers: HMAC-SHA-256 over `<t>.<raw body>`, constant-time, t within 5 minutes. */
function verifiesAsDocumented(rawBody: string, header: string): boolean {
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) ?? [];
  if (t === undefined || v1 === undefined) return false;
  const mac = createHmac('sha256', SIGNING_SECRET).update(`${t}.${rawBody}`).digest();
  return Math.abs(Date.now() / 1000 - Number(t)) < 300 && timingSafeEqual(mac, Buffer.from(v1, 'hex'));
}

describe.skipIf(!canRun('netns', 'server-build'))('notifications from a real gateway', () => {
  let system: System | undefined;
  let node: ConnectedNode;
  let checked: ManagedProcess;
  let listenIp = '';
  let receiver: Server | undefined;
  let smtp: SMTPServer | undefined;
  let receiverPort = 0;
  let smtpPort = 0;
  const received: Received[] = [];
  /** Paths whose requests are answered 503, and how many were. */
  const down = new Map<string, number>();
  const mails: Mail[] = [];

  const sys = (): System => {
    if (!system) throw new Error('the system did not start');
    return system;
  };
  const receivedAt = (path: string) => received.filter((entry) => entry.path === path);
  const typesAt = (path: string) => receivedAt(path).map((entry) => entry.payload.type);

  async function startReceivers(lab: Lab, ip: string): Promise<string> {
    receiver = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const path = req.url ?? '';
        const refused = down.get(path);
        if (refused !== undefined) {
          down.set(path, refused + 1);
          res.writeHead(503).end('down for maintenance');
          return;
        }
        received.push({
          path,
          body,
          signature: String(req.headers['x-postern-signature']),
          payload: JSON.parse(body) as NotificationPayload,
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver?.listen(0, ip, resolve));
    receiverPort = (receiver.address() as AddressInfo).port;

    const tls = await makeServerTls(lab.makeTempDir('smtp'), 'smtp', {
      caSubject: '/CN=SMTP test CA',
      subject: `/CN=${ip}`,
      subjectAltName: `IP:${ip}`,
    });
    smtp = new SMTPServer({
      key: readFileSync(tls.keyFile),
      cert: readFileSync(tls.certFile),
      authOptional: false,
      // Authentication only after STARTTLS (the package's default): a login proves the channel upgraded.
      onAuth(auth, _session, callback) {
        if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: auth.username });
        else callback(new Error('Invalid username or password'));
      },
      onData(stream, session, callback) {
        let data = '';
        stream.setEncoding('utf8');
        stream.on('data', (chunk: string) => (data += chunk));
        stream.on('end', () => {
          mails.push({
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            data,
            user: typeof session.user === 'string' ? session.user : undefined,
            secure: session.secure,
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp?.listen(0, ip, resolve));
    smtpPort = (smtp.server.address() as AddressInfo).port;
    return tls.caFile;
  }

  beforeAll(async () => {
    const lab = new Lab();
    system = await startSystem(lab, async (topology) => {
      listenIp = testSideOf(topology.gatewayMgmtIp);
      const caFile = await startReceivers(lab, listenIp);
      return {
        POSTERN_NOTIFICATION_RETRY_SECONDS: '1',
        POSTERN_NOTIFICATION_RETRY_MAX_SECONDS: '2',
        NODE_EXTRA_CA_CERTS: caFile,
      };
    });
    await system.api.call(operations.updateNotificationSettings, { body: { graceSeconds: GRACE_SECONDS } });
    node = await connectNode(system, 'node1', 11);
    checked = await startBackend(lab, node.ns, 'http', node.tunnelIp, CHECKED_PORT, 'node1');
  });

  afterAll(async () => {
    const leftovers = await stopSystem(system);
    await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
    await new Promise<void>((resolve) => (smtp ? smtp.close(resolve) : resolve()));
    expect(leftovers).toEqual([]);
  });

  const createChannel = (body: NotificationChannelCreate): Promise<NotificationChannel> =>
    sys().api.call(operations.createNotificationChannel, { body });
  const webhook = (name: string, path: string) =>
    createChannel({
      kind: 'webhook',
      name,
      url: `http://${listenIp}:${String(receiverPort)}${path}`,
      signingSecret: SIGNING_SECRET,
      events: ['backend'],
    });
  const deliveriesOf = async (channelId: number) =>
    (await sys().api.call(operations.listNotificationDeliveries, { query: { channelId, limit: 50 } })).data;
  const setHealthCheck = (nodeId: number, type: ServiceType, id: number) =>
    sys().api.call(operations.updateHealthCheck, { params: { nodeId, type, id }, body: HEALTH });
  const healthStates = async (nodeId: number, type: ServiceType): Promise<Map<number, string>> => {
    const { data } = await sys().api.call(operations.serviceFigures, { query: { nodeId, type } });
    return new Map(data.map((row) => [row.id, row.health?.state ?? 'unknown']));
  };

  it(
    'a backend stopped on a node: one "down" after the grace period and one "up" with its duration, signed, and by e-mail',
    async () => {
      const path = '/hooks/backend';
      const hook = await webhook('ops-webhook', path);
      const mail = await createChannel({
        kind: 'email',
        name: 'ops-mail',
        host: listenIp,
        port: smtpPort,
        security: 'starttls',
        username: SMTP_USER,
        password: SMTP_PASSWORD,
        from: 'gateway@example.com',
        to: ['ops@example.com'],
        events: ['backend'],
      });
      // "Send test" through the real gateway reaches both: the e-mail over STARTTLS with a login.
      for (const channel of [hook, mail]) {
        const tested = await sys().api.call(operations.testNotificationChannel, {
          params: { id: channel.id },
          body: {},
        });
        expect(tested, tested.message).toMatchObject({ ok: true });
      }
      expect(typesAt(path)).toEqual(['test']);
      expect(mails.map((m) => [m.to, m.user, m.secure])).toEqual([[['ops@example.com'], SMTP_USER, true]]);
      received.length = 0;
      mails.length = 0;

      const service = await sys().api.createHttpService(node.node.id, {
        name: 'orders',
        domain: 'orders.notify.e2e.test',
        backendHost: node.tunnelIp,
        backendPort: CHECKED_PORT,
      });
      await setHealthCheck(node.node.id, 'http', service.id);
      await waitFor(async () => (await healthStates(node.node.id, 'http')).get(service.id) === 'up', {
        timeoutMs: MESSAGE_DEADLINE_MS,
        what: 'the backend to be checked up',
      });

      await checked.stop();
      const downMessage = await waitFor(() => receivedAt(path).find((entry) => entry.payload.type === 'backend.down'), {
        timeoutMs: MESSAGE_DEADLINE_MS,
        what: 'the "down" message',
      });
      const [downItem] = downMessage.payload.items;
      expect(downMessage.payload.items).toHaveLength(1);
      expect(downItem).toMatchObject({ subject: 'service', name: 'orders', node: { name: node.node.name } });
      expect(downMessage.payload.title).toBe(`orders is down (node ${node.node.name})`);
      // Decided no earlier than the grace period after the health checks saw it down (both the gateway's clock).
      expect(Date.parse(downMessage.payload.at) - Date.parse(downItem?.since ?? '')).toBeGreaterThanOrEqual(
        GRACE_SECONDS * 1000,
      );

      checked = await startBackend(sys().lab, node.ns, 'http', node.tunnelIp, CHECKED_PORT, 'node1');
      const upMessage = await waitFor(() => receivedAt(path).find((entry) => entry.payload.type === 'backend.up'), {
        timeoutMs: MESSAGE_DEADLINE_MS,
        what: 'the "up" message',
      });
      const [upItem] = upMessage.payload.items;
      expect(upItem).toMatchObject({ name: 'orders', since: downItem?.since });
      // Down from the first failed check to the first good one: at least the grace period the "down" waited.
      expect(upItem?.durationSeconds).toBeGreaterThanOrEqual(GRACE_SECONDS);
      expect(upMessage.payload.title).toMatch(/^orders is up again after \d+ s$/);

      // Exactly one of each: both delivered, nothing else queued for the channel, every body signed as documented.
      expect(typesAt(path)).toEqual(['backend.down', 'backend.up']);
      // (The gateway records "sent" once the receiver answered: read after that.)
      const recorded = await waitFor(
        async () => {
          const rows = await deliveriesOf(hook.id);
          return rows.every((d) => d.status !== 'pending') && rows;
        },
        { timeoutMs: 10_000, what: 'the deliveries to be recorded' },
      );
      expect(recorded.map((d) => [d.type, d.status])).toEqual([
        ['backend.up', 'sent'],
        ['backend.down', 'sent'],
      ]);
      for (const entry of receivedAt(path)) expect(verifiesAsDocumented(entry.body, entry.signature)).toBe(true);
      expect(
        verifiesAsDocumented(receivedAt(path)[0]?.body.replace('orders', 'orderz') ?? '', downMessage.signature),
      ).toBe(false);

      // The same two by e-mail, once each.
      const subjects = await waitFor(
        () => {
          const found = mails.map((m) => /^Subject: (.*)$/m.exec(m.data)?.[1]);
          return found.length >= 2 && found;
        },
        { timeoutMs: 20_000, what: 'two e-mails' },
      );
      expect(subjects).toEqual([`[Postern] ${downMessage.payload.title}`, `[Postern] ${upMessage.payload.title}`]);
      expect(mails.every((m) => m.secure && m.user === SMTP_USER)).toBe(true);
      const mailed = await waitFor(
        async () => {
          const rows = await deliveriesOf(mail.id);
          return rows.every((d) => d.status !== 'pending') && rows;
        },
        { timeoutMs: 10_000, what: 'the e-mails to be recorded' },
      );
      expect(mailed.map((d) => d.status)).toEqual(['sent', 'sent']);

      for (const channel of [hook, mail])
        await sys().api.call(operations.deleteNotificationChannel, { params: { id: channel.id } });
      await sys().api.call(operations.deleteService, {
        params: { nodeId: node.node.id, type: 'http', id: service.id },
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a node's tunnel killed with 20 services: one grouped message; the receiver down meanwhile gets each once",
    async () => {
      const path = '/hooks/many';
      const hook = await webhook('ops-many', path);
      // A node of its own, joined as fixture.joinNode does, keeping its config to bring the tunnel back later.
      const created = await sys().api.createNode({ name: 'e2e-many' });
      const config = await sys().api.downloadNodeConfig(created.id);
      const { ns } = await sys().topology.addHost('many', 12);
      const ifname = sys().lab.ifName('many');
      let wg: WireguardInterface = await startWireguard(sys().lab, ns, ifname, config);
      await waitForHandshake(wg, 15_000);
      const tunnelIp = created.address ?? '';
      // On every address: the backend outlives its tunnel address going away and coming back.
      await startBackend(sys().lab, ns, 'tcp', '0.0.0.0', MANY_PORT, 'many');
      const ids: number[] = [];
      for (let i = 0; i < MANY; i++) {
        const service = await sys().api.createTcpService(created.id, {
          name: `many-${String(i).padStart(2, '0')}`,
          port: 30_040 + i,
          backendHost: tunnelIp,
          backendPort: MANY_PORT,
        });
        await setHealthCheck(created.id, 'tcp', service.id);
        ids.push(service.id);
      }
      const allAre = async (state: string) => {
        const states = await healthStates(created.id, 'tcp');
        return ids.every((id) => states.get(id) === state);
      };
      await waitFor(() => allAre('up'), { timeoutMs: MESSAGE_DEADLINE_MS, what: 'the 20 backends to be checked up' });

      // The receiver goes down, then the node's tunnel dies: every check through it times out.
      down.set(path, 0);
      const windowStart = Date.now();
      await wg.stop();
      await waitFor(() => allAre('down'), { timeoutMs: MESSAGE_DEADLINE_MS, what: 'the 20 backends to be down' });
      const firstPending = await waitFor(
        async () => {
          const rows = await deliveriesOf(hook.id);
          return rows.length > 0 && rows;
        },
        { timeoutMs: MESSAGE_DEADLINE_MS, what: 'the grouped message to be queued' },
      );
      expect(firstPending.map((d) => [d.type, d.status])).toEqual([['backend.down', 'pending']]);

      // The tunnel comes back; the "up" is queued behind the "down", both retried while the receiver refuses them.
      wg = await startWireguard(sys().lab, ns, ifname, config);
      await waitForHandshake(wg, 15_000);
      await waitFor(
        async () => {
          const rows = await deliveriesOf(hook.id);
          return rows.length === 2 && rows.every((d) => d.status === 'pending') && rows;
        },
        { timeoutMs: MESSAGE_DEADLINE_MS + 15_000, what: 'the "up" to be queued behind the "down"' },
      );
      const refused = down.get(path) ?? 0;
      expect(refused).toBeGreaterThanOrEqual(2);
      expect(received.filter((entry) => entry.path === path)).toEqual([]);
      down.delete(path);
      const windowSeconds = Math.round((Date.now() - windowStart) / 1000);

      await waitFor(() => receivedAt(path).length >= 2, {
        timeoutMs: 15_000,
        what: 'both messages after the receiver is back',
      });
      const [downMessage, upMessage] = receivedAt(path);
      expect(typesAt(path)).toEqual(['backend.down', 'backend.up']);
      expect(new Set(receivedAt(path).map((entry) => entry.payload.id)).size).toBe(2);
      expect(downMessage?.payload.title).toBe(`${String(MANY)} services are down`);
      // In the order the checks saw them go.
      expect(downMessage?.payload.items.map((item) => item.name).sort()).toEqual(
        Array.from({ length: MANY }, (_, i) => `many-${String(i).padStart(2, '0')}`),
      );
      expect(downMessage?.payload.text).toContain(`All ${String(MANY)} checked services of node e2e-many are down`);
      expect(upMessage?.payload.items).toHaveLength(MANY);
      for (const entry of receivedAt(path)) expect(verifiesAsDocumented(entry.body, entry.signature)).toBe(true);
      const done = await waitFor(
        async () => {
          const rows = await deliveriesOf(hook.id);
          return rows.every((d) => d.status !== 'pending') && rows;
        },
        { timeoutMs: 10_000, what: 'the deliveries to be recorded' },
      );
      expect(done.map((d) => d.status)).toEqual(['sent', 'sent']);
      expect(Math.max(...done.map((d) => d.attempts))).toBeGreaterThanOrEqual(2);
      console.info(
        `notifications: the receiver was down ${String(windowSeconds)} s and refused ${String(refused)} attempts`,
      );
      await sys().api.call(operations.deleteNotificationChannel, { params: { id: hook.id } });
    },
    TEST_TIMEOUT_MS,
  );
});
