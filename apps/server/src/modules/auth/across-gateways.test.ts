import { afterEach, describe, expect, test, vi } from 'vitest';
import { buildTestApp, TEST_ADMIN, TEST_STORE, type TestApp } from '../../test/build-test-app.js';
import { postgresAvailable } from '../../test/postgres.js';
import { connectSse, type SseTestClient } from '../../test/sse-client.js';
import { LOGIN_MAX_FAILURES_PER_CLIENT } from './rate-limit.js';

// Sessions across several gateways on one PostgreSQL database (issue 16 item 4): what one gateway ends, every other
// honours within 1 s, including event streams it holds open.

const ENDS_WITHIN_MS = 1000;

const apps: TestApp[] = [];
const clients: SseTestClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  // The first app made the database: it goes last.
  for (const app of apps.reverse()) await app.cleanup();
  apps.length = 0;
});

async function twoGateways(): Promise<[TestApp, TestApp]> {
  const a = await buildTestApp({ postgres: true });
  apps.push(a);
  const b = await buildTestApp({ sameDatabaseAs: a });
  apps.push(b);
  // B's LISTEN connection opens in the background: it is in place once one of A's announcements reaches it.
  let isListening = false;
  const stop = b.db.onAnnounce('test.ready', () => (isListening = true));
  await vi.waitFor(
    async () => {
      await a.db.announce('test.ready');
      expect(isListening).toBe(true);
    },
    { timeout: 2000, interval: 20 },
  );
  stop();
  return [a, b];
}

const listening = new WeakMap<TestApp, string>();

async function holdStream(app: TestApp, token: string): Promise<{ ended: Promise<void> }> {
  const base = listening.get(app) ?? (await app.app.listen({ host: '127.0.0.1', port: 0 }));
  listening.set(app, base);
  const client = await connectSse(`${base}/api/nodes/stream?page=1&limit=10&token=${token}`);
  clients.push(client);
  expect(client.status).toBe(200);
  return { ended: new Promise<void>((resolve) => client.onEnd(() => resolve())) };
}

async function expectEndedWithin(ended: Promise<void>, since: number): Promise<void> {
  const left = Math.max(0, since + ENDS_WITHIN_MS - performance.now());
  const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), left).unref());
  expect(await Promise.race([ended.then(() => 'ended' as const), late])).toBe('ended');
}

const call = (app: TestApp, token: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });

// Once per test command: the run on PostgreSQL (POSTERN_TEST_STORE=postgres) would only repeat it.
describe.skipIf(TEST_STORE === 'postgres' || !(await postgresAvailable()))('sessions across gateways', () => {
  test('a stream opened on gateway B ends within 1 s of a logout on gateway A', async () => {
    const [a, b] = await twoGateways();
    const token = await a.login();
    const stream = await holdStream(b, token);
    const start = performance.now();
    expect((await call(a, token, 'POST', '/api/auth/logout')).statusCode).toBe(204);
    await expectEndedWithin(stream.ended, start);
    expect((await call(b, token, 'GET', '/api/nodes')).statusCode).toBe(401);
  });

  test("a password change on A ends B's streams of the other sessions, not the changer's", async () => {
    const [a, b] = await twoGateways();
    const other = await b.login();
    const mine = await a.login();
    const theirs = await holdStream(b, other);
    let isOwnOpen = true;
    const own = await holdStream(b, mine);
    void own.ended.then(() => (isOwnOpen = false));
    const start = performance.now();
    const changed = await call(a, mine, 'PATCH', '/api/auth/password', {
      currentPassword: TEST_ADMIN.password,
      newPassword: 'a-brand-new-password',
    });
    expect(changed.statusCode).toBe(204);
    await expectEndedWithin(theirs.ended, start);
    expect((await call(b, mine, 'GET', '/api/nodes')).statusCode).toBe(200);
    expect(isOwnOpen).toBe(true);
  });

  test('the sign-in limit is shared: failures on A count on B', async () => {
    const [a, b] = await twoGateways();
    const wrong = { username: TEST_ADMIN.username, password: 'not-the-password' };
    const login = (app: TestApp) => app.app.inject({ method: 'POST', url: '/api/auth/login', payload: wrong });
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++) expect((await login(i % 2 ? b : a)).statusCode).toBe(401);
    const refused = await login(b);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await login(a)).statusCode).toBe(429);
  });
});
