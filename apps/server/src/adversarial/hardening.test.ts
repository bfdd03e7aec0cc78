import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { createLogger } from '../http/logger.js';
import { startMetricsListener } from '../modules/observe/metrics-listener.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../test/build-test-app.js';
import { connectSse } from '../test/sse-client.js';

// The control plane's hardening: request timeouts, security headers, no caching of secrets, and a
// request log that never holds a token, however the URL spells it.

let t: TestApp | undefined;
const closers: (() => void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  await t?.cleanup();
  t = undefined;
});

interface RawExchange {
  /** Everything the server sent before it closed the connection. */
  answer: Promise<string>;
}

/** Writes `text` on a fresh connection and never sends more; `answer` settles when the server closes it. */
function sendAndStall(port: number, text: string): RawExchange {
  const socket = connect(port, '127.0.0.1');
  closers.push(() => socket.destroy());
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.write(text);
  return { answer: new Promise((resolve) => socket.on('close', () => resolve(received))) };
}

/** Settles with the exchange's answer, or with 'still open' once `ms` have passed. */
const within = (exchange: RawExchange, ms: number): Promise<string> =>
  Promise.race([
    exchange.answer,
    new Promise<string>((resolve) => setTimeout(() => resolve('still open'), ms).unref()),
  ]);

describe('request timeouts', () => {
  it('cuts a body that promises 100 bytes and sends 10, and a request whose headers never end', async () => {
    t = await buildTestApp({ env: { POSTERN_REQUEST_TIMEOUT: '1' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as { port: number }).port;
    const token = await t.login();
    const stream = await connectSse(`http://127.0.0.1:${port}/api/nodes/stream?page=1&token=${token}`);
    closers.push(() => stream.close());
    await stream.waitForEvents(1);

    const slowBody = sendAndStall(
      port,
      'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"usernam',
    );
    const slowHeaders = sendAndStall(port, 'GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    // 1 s timeout plus at most one 0.5 s check interval; 5 s leaves room for a busy machine, not for "never".
    expect(await within(slowBody, 5000)).toMatch(/^HTTP\/1\.1 408 /);
    expect(await within(slowHeaders, 5000)).toMatch(/^HTTP\/1\.1 408 /);

    // An event stream's request was complete at once: it outlives the timeout that cut the two above.
    await t.app.inject({
      method: 'POST',
      url: '/api/nodes',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'later' },
    });
    expect(((await stream.waitForEvents(2))[1] as { name: string }[]).map((node) => node.name)).toContain('later');
  }, 20_000);
});

describe('security headers', () => {
  const expectHardened = (headers: Record<string, unknown>, where: string) => {
    const csp = (headers['content-security-policy'] as string | undefined) ?? '';
    const directives = new Map(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name = '', ...values]) => [name, values]),
    );
    expect(directives.get('script-src'), where).toEqual(["'self'"]);
    expect(directives.get('default-src'), where).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors'), where).toEqual(["'none'"]);
    expect(directives.get('object-src'), where).toEqual(["'none'"]);
    expect(csp, where).not.toContain('unsafe-inline');
    expect(headers['x-content-type-options'], where).toBe('nosniff');
    expect(headers['x-frame-options'], where).toBe('DENY');
    expect(headers['referrer-policy'], where).toBe('no-referrer');
  };

  it('are on every kind of answer: console page, asset, API, error, event stream', async () => {
    t = await buildTestApp();
    const dir = mkdtempSync(join(tmpdir(), 'postern-console-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(
      join(dir, 'index.html'),
      '<!doctype html><title>Postern</title><script type="module" src="/assets/app.js"></script>',
    );
    writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
    const app = await buildApp(t.deps, { consoleDir: dir });
    closers.push(() => void app.close());
    const token = await t.login();
    const answers = {
      'console page': await app.inject({ url: '/nodes/3' }),
      asset: await app.inject({ url: '/assets/app.js' }),
      'API answer': await app.inject({ url: '/api/nodes', headers: { authorization: `Bearer ${token}` } }),
      '401': await app.inject({ url: '/api/nodes' }),
      '404': await app.inject({ url: '/api/nope', headers: { authorization: `Bearer ${token}` } }),
      '413': await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: 'a', password: 'b'.repeat(10_000) },
      }),
    };
    for (const [where, response] of Object.entries(answers)) expectHardened(response.headers, where);

    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const stream = await rawHeaders(base, `/api/nodes/stream?page=1&token=${token}`);
    expectHardened(stream, 'event stream');
    expect(stream['cache-control']).toBe('no-store, no-transform');
  });

  it('sends HSTS only over HTTPS, as vouched for by a trusted proxy', async () => {
    t = await buildTestApp();
    const hsts = async (remoteAddress: string, proto?: string) =>
      (await t!.app.inject({ url: '/api/health', remoteAddress, headers: proto ? { 'x-forwarded-proto': proto } : {} }))
        .headers['strict-transport-security'];
    expect(await hsts('127.0.0.1', 'https')).toBe('max-age=31536000');
    expect(await hsts('127.0.0.1', 'http')).toBeUndefined();
    expect(await hsts('127.0.0.1')).toBeUndefined();
    expect(await hsts('192.0.2.9', 'https')).toBeUndefined();
  });
});

/** The response headers of a GET, read from a real socket (event streams never end, so inject cannot). */
async function rawHeaders(base: string, path: string): Promise<Record<string, unknown>> {
  const controller = new AbortController();
  closers.push(() => controller.abort());
  const response = await fetch(`${base}${path}`, { signal: controller.signal });
  return Object.fromEntries(response.headers);
}

describe('answers that carry a secret', () => {
  it('are never cacheable: sign-in, session, node creation, token creation, agent config, config download', async () => {
    t = await buildTestApp();
    const app = t.app;
    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: TEST_ADMIN });
    const { token } = login.json();
    const headers = { authorization: `Bearer ${token}` };
    const node = await app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: 'secretive' } });
    const { id, token: nodeToken } = node.json();
    const answers = {
      login,
      session: await app.inject({ url: '/api/auth/session', headers: { cookie: `token=${token}` } }),
      'node creation': node,
      'token creation': await app.inject({
        method: 'POST',
        url: `/api/nodes/${id}/pats`,
        headers,
        payload: { name: 'ci' },
      }),
      'agent config': await app.inject({ url: '/api/agent/config', headers: { authorization: `Bearer ${nodeToken}` } }),
      'agent node': await app.inject({ url: '/api/agent/node', headers: { authorization: `Bearer ${nodeToken}` } }),
      'config download': await app.inject({ url: `/api/nodes/${id}/download`, headers }),
    };
    for (const [what, response] of Object.entries(answers)) {
      expect(response.statusCode, what).toBeLessThan(300);
      expect(response.headers['cache-control'], what).toBe('no-store');
    }
  });
});

describe('request log', () => {
  it('never holds a token, however the query spells its name', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    t = await buildTestApp({ logger: createLogger('info', sink) });
    const token = await t.login();
    const spellings = [
      `?token=${token}`,
      `?%74oken=${token}`,
      `?%74%6F%6B%65%6E=${token}`,
      `?%2574oken=${token}`,
      `?TOKEN=${token}`,
      `?ToKeN=${token}`,
      `?tok%65n=${encodeURIComponent(token).replace(/e/g, '%65')}`,
      `?page=1&token=${token}&token=${token}`,
      `?page=1;token=${token}`,
      `?token+=${token}`,
      `?x=${token}`,
      `/extra/${token}`,
    ];
    for (const spelling of spellings) {
      const url = spelling.startsWith('/') ? `/api/nodes/stream${spelling}` : `/api/nodes/stream${spelling}&id=999`;
      await t.app.inject({ url });
    }
    const log = lines.join('');
    expect(log).toContain('%74oken=[redacted]');
    const decoded = log.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    for (const text of [log, decoded]) {
      expect(text).not.toContain(token);
      // Neither the signature nor the payload alone.
      for (const part of token.split('.').slice(1)) expect(text).not.toContain(part);
    }
  });
});

describe('/metrics', () => {
  const METRICS_TOKEN = 'metrics-token-0123456789';

  /** The app with a console build, whose pages answer every other GET outside /api. */
  async function withConsole(env: Record<string, string>) {
    const dir = mkdtempSync(join(tmpdir(), 'postern-console-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Postern</title>');
    t = await buildTestApp({ env, consoleDir: dir });
    expect((await t.app.inject({ url: '/nodes' })).headers['content-type']).toContain('text/html');
    return t.app;
  }

  /** A port free on 127.0.0.1 a moment ago. */
  const freePort = () =>
    new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });

  it('is a 404, not the console page, when the app does not serve it (no token; or only its own address)', async () => {
    for (const env of [{}, { POSTERN_METRICS_ADDRESS: `127.0.0.1:${await freePort()}` }]) {
      const app = await withConsole(env);
      for (const method of ['GET', 'HEAD'] as const) {
        const response = await app.inject({ method, url: '/metrics' });
        expect(response.statusCode, `${method} with ${JSON.stringify(env)}`).toBe(404);
        expect(response.headers['content-type'], `${method} with ${JSON.stringify(env)}`).not.toContain('text/html');
      }
      expect((await app.inject({ url: '/metrics', headers: { authorization: 'Bearer x' } })).statusCode).toBe(404);
      await t?.cleanup();
      t = undefined;
    }
  });

  it('takes the bearer scheme in any case (RFC 9110), on the app and on its own listener', async () => {
    const app = await withConsole({ POSTERN_METRICS_TOKEN: METRICS_TOKEN });
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const response = await app.inject({ url: '/metrics', headers: { authorization: `${scheme} ${METRICS_TOKEN}` } });
      expect(response.statusCode, scheme).toBe(200);
      expect(response.body, scheme).toContain('postern_');
    }
    for (const wrong of [`Basic ${METRICS_TOKEN}`, `Bearer ${METRICS_TOKEN}x`, `Bearer`, METRICS_TOKEN]) {
      expect((await app.inject({ url: '/metrics', headers: { authorization: wrong } })).statusCode, wrong).toBe(401);
    }
    const port = await freePort();
    const stop = await startMetricsListener(`127.0.0.1:${port}`, app.observer, METRICS_TOKEN);
    closers.push(() => void stop());
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: { authorization: `${scheme} ${METRICS_TOKEN}` },
      });
      expect(response.status, `listener, ${scheme}`).toBe(200);
    }
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: 'bearer x' } })).status).toBe(
      401,
    );
  });
});
