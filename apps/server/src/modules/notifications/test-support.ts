import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { ServiceHealth } from '@postern/contract';
import { tcpServices } from '../../db/schema.js';
import type { TestApp } from '../../test/build-test-app.js';
import { makeTestLeaf, type TestCertificate } from '../../test/certificates.js';
import type { HealthChecker } from '../observe/health-checker.js';
import type { NotifierOptions } from './notifier.js';

// What the notifications tests share: the notifier's options for receivers on loopback, backends as the health checks
// see them, a webhook receiver and an SMTP server on 127.0.0.1, and a TCP service row to report on.

/**
 * The notifier's options for receivers on loopback, which the real guard refuses (a test of its own): names ending in
 * .test resolve to 127.0.0.1, and only that address is let through. Background ticks an hour apart: each test runs a
 * round with `notifier.settle()` at its own moment.
 */
export function loopbackNotifierOptions(health: HealthChecker, ca?: TestCertificate): NotifierOptions {
  return {
    health,
    resolve: (host) => Promise.resolve(host.endsWith('.test') ? ['127.0.0.1'] : []),
    addressPolicy: { refusal: (address) => (address === '127.0.0.1' ? null : 'not the test receiver') },
    ...(ca ? { ca: [ca.pem] } : {}),
    tickMs: 3_600_000,
    sweepMs: 0,
    timings: { tickMs: 3_600_000, retryFirstMs: 10_000, retryMaxMs: 40_000, sendTimeoutMs: 5000 },
  };
}

/** Backends as the health checks see them: the test sets each one's state, since the test clock's `now()`. */
export function fakeBackends(now: () => number): {
  health: HealthChecker;
  setBackend: (id: number, nodeId: number, state: 'up' | 'down') => void;
  /** The backend is no longer checked (its service went). */
  removeBackend: (id: number) => void;
} {
  const backends = new Map<number, ServiceHealth>();
  return {
    health: {
      start: () => undefined,
      stop: () => undefined,
      refresh: () => Promise.resolve(),
      invalidate: () => undefined,
      list: () => Promise.resolve([...backends.values()]),
      get: (_type, id) => Promise.resolve(backends.get(id)),
      onHealthChange: () => () => undefined,
    },
    setBackend: (id, nodeId, state) => {
      // The same state again keeps its "since", as the health checks do.
      if (backends.get(id)?.state === state) return;
      const at = new Date(now()).toISOString();
      backends.set(id, {
        type: 'tcp',
        id,
        nodeId,
        state,
        since: at,
        lastCheckedAt: at,
        lastError: state === 'down' ? 'connection refused' : null,
        latencyMs: null,
        intervalSeconds: 10,
        timeoutSeconds: 5,
      });
    },
    removeBackend: (id) => {
      backends.delete(id);
    },
  };
}

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  port: number;
  /** False: every request is answered 503 and kept nowhere (a receiver down for maintenance). */
  isUp: boolean;
  close(): Promise<void>;
}

/** An HTTP receiver on 127.0.0.1 that hands every request it takes to `keep` and answers 204. */
export async function startWebhookReceiver(keep: (request: ReceivedRequest) => void): Promise<WebhookReceiver> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (!receiver.isUp) {
        res.writeHead(503).end('down for maintenance');
        return;
      }
      keep({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver: WebhookReceiver = {
    port: (server.address() as AddressInfo).port,
    isUp: true,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return receiver;
}

export interface ReceivedMail {
  from: string;
  to: string[];
  data: string;
  user: string | undefined;
  secure: boolean;
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

/**
 * An SMTP server on 127.0.0.1 with a certificate for mail.test from `ca`, taking the login postern/`password`:
 * STARTTLS, or TLS from the first byte (port 465 style) with `implicitTls`.
 */
export async function startSmtpReceiver(options: {
  ca: TestCertificate;
  password: string;
  implicitTls?: boolean;
}): Promise<SmtpReceiver> {
  const leaf = await makeTestLeaf(options.ca, ['mail.test']);
  const mails: ReceivedMail[] = [];
  const smtp = new SMTPServer({
    secure: options.implicitTls === true,
    key: leaf.keyPem,
    cert: leaf.pem,
    authOptional: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'postern' && auth.password === options.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      let data = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (data += chunk));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          data,
          user: typeof session.user === 'string' ? session.user : undefined,
          secure: session.secure,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  return {
    port: (smtp.server.address() as AddressInfo).port,
    mails,
    close: () => new Promise<void>((resolve) => smtp.close(resolve)),
  };
}

/** TCP services of a node, as rows (the service layer is not what these tests are about). */
export async function insertTcpServices(
  t: TestApp,
  rows: { nodeId: number; name: string; port: number; backendHost: string; backendPort: number }[],
): Promise<(typeof tcpServices.$inferSelect)[]> {
  return await t.db.write(async (tx) => await tx.insert(tcpServices).values(rows).returning().all());
}
