import { afterEach, describe, expect, test, vi } from 'vitest';
import { ACCESS_KEY_ID, accessCookieKey } from '../../db/access-state.js';
import { buildTestApp, TEST_STORE, type TestApp } from '../../test/build-test-app.js';
import { postgresAvailable } from '../../test/postgres.js';
import { verifyAccessCookie } from './cookie.js';

// Visitors across several gateways on one PostgreSQL database (docs/ACCESS.md "Several gateways"): a session made
// through one gateway is valid on every other at once (the key is derived from the shared secret key), and a
// sign-out through one reaches every other's nginx within 1 s (the change announcement).

const REACHES_WITHIN_MS = 1000;
const HOST = 'app.example.test';

const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.reverse()) await app.cleanup();
  apps.length = 0;
});

async function twoGateways(): Promise<[TestApp, TestApp]> {
  const a = await buildTestApp({ postgres: true });
  apps.push(a);
  const b = await buildTestApp({ sameDatabaseAs: a });
  apps.push(b);
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

const api = async (app: TestApp, token: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  (
    await app.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(payload ? { payload } : {}),
    })
  ).json<Record<string, unknown>>();

const password = (app: TestApp, serviceId: number, value: string, headers: Record<string, string> = {}) =>
  app.app.inject({
    method: 'POST',
    url: '/_postern/access/password',
    headers: {
      host: HOST,
      'content-type': 'application/x-www-form-urlencoded',
      'x-forwarded-for': '203.0.113.7',
      ...headers,
    },
    payload: `s=${serviceId}&password=${value}`,
  });

describe.skipIf(TEST_STORE === 'postgres' || !(await postgresAvailable()))('visitors on several gateways', () => {
  test('a session made through one gateway is valid on the other, and its sign-out reaches it within 1 s', async () => {
    const [a, b] = await twoGateways();
    const admin = await a.login();
    const nodeId = (await api(a, admin, 'POST', '/api/nodes', { name: 'n' })).id as number;
    const serviceId = (await api(a, admin, 'POST', `/api/services/${nodeId}/http`, { name: 'web', domain: HOST }))
      .id as number;
    const domainId = ((await api(a, admin, 'GET', `/api/domains?search=${HOST}`)).data as { id: number }[])[0]?.id ?? 0;
    await api(a, admin, 'PATCH', `/api/domains/${domainId}/access`, { mode: 'protected', password: 'open-sesame' });

    const signedIn = await password(a, serviceId, 'open-sesame');
    expect(signedIn.statusCode).toBe(303);
    const value = String(signedIn.headers['set-cookie']).split(';')[0]?.split('=')[1] ?? '';
    // B verifies A's cookie with its own key: nothing had to travel.
    const payload = verifyAccessCookie(accessCookieKey(b.deps.secrets), ACCESS_KEY_ID, HOST, value);
    expect(payload).not.toBeNull();
    await vi.waitFor(() => expect(b.fakeDataPlane.proxy.access.entries.size).toBe(1), { timeout: REACHES_WITHIN_MS });

    const started = performance.now();
    const out = await a.app.inject({
      method: 'POST',
      url: '/_postern/access/sign-out',
      headers: { host: HOST, cookie: `__Host-postern-${payload?.p ?? 0}=${value}` },
    });
    expect(out.statusCode).toBe(200);
    await vi.waitFor(() => expect(b.fakeDataPlane.proxy.access.revoked.has(payload?.s ?? '')).toBe(true), {
      timeout: Math.max(1, started + REACHES_WITHIN_MS - performance.now()),
      interval: 10,
    });
  });

  test('wrong passwords through one gateway count on the other', async () => {
    const [a, b] = await twoGateways();
    const admin = await a.login();
    const nodeId = (await api(a, admin, 'POST', '/api/nodes', { name: 'n' })).id as number;
    const serviceId = (await api(a, admin, 'POST', `/api/services/${nodeId}/http`, { name: 'web', domain: HOST }))
      .id as number;
    const domainId = ((await api(a, admin, 'GET', `/api/domains?search=${HOST}`)).data as { id: number }[])[0]?.id ?? 0;
    await api(a, admin, 'PATCH', `/api/domains/${domainId}/access`, { mode: 'protected', password: 'open-sesame' });
    for (let i = 0; i < 5; i++) expect((await password(a, serviceId, `guess-${i}`)).statusCode).toBe(401);
    expect((await password(b, serviceId, 'open-sesame')).statusCode).toBe(429);
  });
});
