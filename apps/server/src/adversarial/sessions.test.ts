import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../test/build-test-app.js';
import { connectSse, type SseTestClient } from '../test/sse-client.js';

// An event stream ends with the session that opened it (logout, password change, expiry),
// within 1 s, whichever stream it is.

const ENDS_WITHIN_MS = 1000;

let t: TestApp;
let clock: Date;
let base: string;
let nodeId: number;
const clients: SseTestClient[] = [];

beforeEach(async () => {
  clock = new Date();
  // The injected clock moves only when a test moves it, so a session expires exactly when the test says.
  t = await buildTestApp({ now: () => clock });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const token = await t.login();
  nodeId = (await call(token, 'POST', '/api/nodes', { name: 'watched' })).json().id;
  await call(token, 'POST', '/api/domains', { domain: 'watched.example.test' });
});
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await t.cleanup();
});

function call(token: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) {
  return t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
}

const STREAMS = {
  'node list': () => '/api/nodes/stream?page=1&limit=10',
  'node detail': () => `/api/nodes/stream?id=${nodeId}`,
  'domain logs': () => '/api/logs/stream?domain=watched.example.test',
} as const;

interface HeldStream {
  client: SseTestClient;
  ended: Promise<void>;
  isOpen(): boolean;
}

async function hold(token: string, path: string): Promise<HeldStream> {
  const client = await connectSse(`${base}${path}&token=${token}`);
  clients.push(client);
  expect(client.status).toBe(200);
  let isOpen = true;
  const ended = new Promise<void>((resolve) => client.onEnd(() => resolve()));
  void ended.then(() => (isOpen = false));
  return { client, ended, isOpen: () => isOpen };
}

/** Resolves when the stream has ended, or fails once ENDS_WITHIN_MS have passed since `since`. */
async function expectEndedWithin(stream: HeldStream, since: number): Promise<void> {
  const left = Math.max(0, since + ENDS_WITHIN_MS - performance.now());
  const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), left).unref());
  expect(await Promise.race([stream.ended.then(() => 'ended' as const), late])).toBe('ended');
}

describe.each(Object.entries(STREAMS))('the %s stream', (_, pathOf) => {
  it('ends on logout', async () => {
    const token = await t.login();
    const stream = await hold(token, pathOf());
    const start = performance.now();
    expect((await call(token, 'POST', '/api/auth/logout')).statusCode).toBe(204);
    await expectEndedWithin(stream, start);
  });

  it('ends when the password changes elsewhere, and stays open for the session that changed it', async () => {
    const other = await t.login();
    const mine = await t.login();
    const theirs = await hold(other, pathOf());
    const own = await hold(mine, pathOf());
    const start = performance.now();
    const changed = await call(mine, 'PATCH', '/api/auth/password', {
      currentPassword: TEST_ADMIN.password,
      newPassword: 'a-brand-new-password',
    });
    expect(changed.statusCode).toBe(204);
    await expectEndedWithin(theirs, start);
    // A round trip later (had it been closed too, its end would have arrived by now) it is still open.
    expect((await call(mine, 'GET', '/api/nodes')).statusCode).toBe(200);
    expect(own.isOpen()).toBe(true);
  });

  it('ends when the session expires', async () => {
    const token = await t.login();
    const stream = await hold(token, pathOf());
    clock = new Date(clock.getTime() + t.config.sessionTtlSeconds * 1000 + 1);
    await expectEndedWithin(stream, performance.now());
  });
});

describe('a stream of a live session', () => {
  it('keeps delivering after another session logs out', async () => {
    const mine = await t.login();
    const other = await t.login();
    const stream = await hold(mine, STREAMS['node detail']());
    await stream.client.waitForEvents(1);
    await call(other, 'POST', '/api/auth/logout');
    await call(mine, 'PATCH', `/api/nodes/${nodeId}`, { name: 'renamed' });
    expect(((await stream.client.waitForEvents(2))[1] as { name: string }).name).toBe('renamed');
    expect(stream.isOpen()).toBe(true);
  });
});
