import { Secret, TOTP } from 'otpauth';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { buildTestApp, TEST_ADMIN, TEST_STORE, type TestApp } from '../../test/build-test-app.js';
import { postgresAvailable } from '../../test/postgres.js';
import { connectSse, type SseTestClient } from '../../test/sse-client.js';
import { LOGIN_MAX_FAILURES_PER_CLIENT } from './rate-limit.js';
import { TOTP_MAX_FAILURES_PER_ACCOUNT } from './second-factor-limit.js';

// Sessions across several gateways on one PostgreSQL database (docs/SCALE-OUT.md): what one gateway ends, every other
// honours within 1 s, including event streams it holds open. Two-factor sign-in works behind a load balancer without
// affinity, and its limits are shared.

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

  test('an account demoted, narrowed to some nodes or disabled on A: its session and stream on B end within 1 s; a promotion counts at once', async () => {
    const [a, b] = await twoGateways();
    const owner = await a.login();
    const invite = await call(a, owner, 'POST', '/api/invites', { username: 'colleague', role: 'operator' });
    const token = invite.json<{ url: string }>().url.split('#')[1];
    const accepted = await a.app.inject({
      method: 'POST',
      url: '/api/auth/invite/accept',
      payload: { token, password: 'colleagues-password' },
    });
    expect(accepted.statusCode).toBe(201);
    const signIn = async () =>
      (
        await b.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { username: 'colleague', password: 'colleagues-password' },
        })
      ).json<{ token: string }>().token;
    const accounts = await call(a, owner, 'GET', '/api/accounts');
    const id = accounts
      .json<{ data: { id: number; username: string }[] }>()
      .data.find((x) => x.username === 'colleague')?.id;

    // A narrower node scope is a demotion too (docs/api.md "Node scope").
    const node = (await call(a, owner, 'POST', '/api/nodes', { name: 'colleagues-node' })).json<{ id: number }>().id;
    for (const change of [{ nodes: [node] }, { role: 'viewer' }, { enabled: false }]) {
      if ('enabled' in change)
        expect(
          (await call(a, owner, 'PATCH', `/api/accounts/${id}`, { enabled: true, role: 'operator' })).statusCode,
        ).toBe(200);
      const session = await signIn();
      const stream = await holdStream(b, session);
      const start = performance.now();
      expect((await call(a, owner, 'PATCH', `/api/accounts/${id}`, change)).statusCode).toBe(200);
      await expectEndedWithin(stream.ended, start);
      expect((await call(b, session, 'GET', '/api/nodes')).statusCode).toBe(401);
    }

    // Promoted on A: the viewer's session on B may write from its next request.
    expect(
      (await call(a, owner, 'PATCH', `/api/accounts/${id}`, { enabled: true, role: 'viewer', nodes: null })).statusCode,
    ).toBe(200);
    const viewer = await signIn();
    expect((await call(b, viewer, 'POST', '/api/nodes', { name: 'by-viewer' })).statusCode).toBe(403);
    expect((await call(a, owner, 'PATCH', `/api/accounts/${id}`, { role: 'operator' })).statusCode).toBe(200);
    expect((await call(b, viewer, 'POST', '/api/nodes', { name: 'by-operator' })).statusCode).toBe(201);
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

  test('two-factor sign-in: the password step on A, the second on B; a password change on A voids the challenge on B', async () => {
    const [a, b] = await twoGateways();
    const session = await a.login();
    const setup = await call(a, session, 'POST', '/api/auth/2fa/setup', { password: TEST_ADMIN.password });
    const { secret } = setup.json<{ secret: string }>();
    const codeAt = (at: number) =>
      new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({
        timestamp: at,
      });
    expect((await call(a, session, 'POST', '/api/auth/2fa/enable', { code: codeAt(Date.now()) })).statusCode).toBe(200);
    const passwordStep = async () =>
      (await a.app.inject({ method: 'POST', url: '/api/auth/login', payload: TEST_ADMIN })).json<{
        challenge: string;
      }>().challenge;
    const secondStep = (challenge: string, code: string) =>
      b.app.inject({ method: 'POST', url: '/api/auth/login/2fa', payload: { challenge, code } });
    // Behind a load balancer without affinity: the next code (one step ahead; the enrolment spent this one) on B.
    const signedIn = await secondStep(await passwordStep(), codeAt(Date.now() + 30_000));
    expect(signedIn.statusCode, signedIn.body).toBe(200);

    const pending = await passwordStep();
    const changed = await call(a, session, 'PATCH', '/api/auth/password', {
      currentPassword: TEST_ADMIN.password,
      newPassword: 'a-brand-new-password',
    });
    expect(changed.statusCode).toBe(204);
    const late = await secondStep(pending, codeAt(Date.now() + 60_000));
    expect(late.statusCode).toBe(401);
    expect(late.json().message).toBe('The sign-in has expired, enter your password again');
  });

  test("wrong codes on A and B count against one account's cap", async () => {
    const [a, b] = await twoGateways();
    const session = await a.login();
    const { secret } = (await call(a, session, 'POST', '/api/auth/2fa/setup', { password: TEST_ADMIN.password })).json<{
      secret: string;
    }>();
    const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });
    expect((await call(a, session, 'POST', '/api/auth/2fa/enable', { code: totp.generate() })).statusCode).toBe(200);
    const valid = new Set([-30_000, 0, 30_000, 60_000].map((skew) => totp.generate({ timestamp: Date.now() + skew })));
    const wrong = (n: number): string => {
      for (let k = n; ; k++) if (!valid.has(String(k).padStart(6, '0'))) return String(k).padStart(6, '0');
    };
    const statuses: number[] = [];
    for (let i = 0; i < TOTP_MAX_FAILURES_PER_ACCOUNT + 2; i++) {
      const gateway = i % 2 ? b : a;
      // Each guess from an address of its own, so only the account's cap can stop them.
      const from = { remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': `198.51.100.${i + 1}` } };
      const step = await gateway.app.inject({ method: 'POST', url: '/api/auth/login', payload: TEST_ADMIN, ...from });
      const { challenge } = step.json<{ challenge: string }>();
      const guess = await gateway.app.inject({
        method: 'POST',
        url: '/api/auth/login/2fa',
        payload: { challenge, code: wrong(i * 7919) },
        ...from,
      });
      statuses.push(guess.statusCode);
    }
    expect(statuses.slice(0, TOTP_MAX_FAILURES_PER_ACCOUNT).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(TOTP_MAX_FAILURES_PER_ACCOUNT)).toEqual([429, 429]);
  }, 30_000); // 12 sign-ins, each a password hash: well over vitest's 5 s default on a loaded 2-core machine
});
