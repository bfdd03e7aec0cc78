import { afterEach, describe, expect, test, vi } from 'vitest';
import type { HealthTarget, ProbeResult } from '../modules/observe/health-checker.js';
import { createApiClient, insertNode } from '../modules/services/test-support.js';
import { buildTestApp, TEST_STORE, type TestApp } from '../test/build-test-app.js';
import { postgresAvailable } from '../test/postgres.js';
import { LEASE_NAMES } from './leases.js';

// Run-once jobs on several gateways: the health checks run on every gateway, the audit row of a backend going down is
// written by the holder of the `health-audit` lease only; when the holder stops renewing (killed), another takes over
// within one lease period (1 s here).

const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.reverse()) await app.cleanup();
  apps.length = 0;
});

const LEASE_ENV = { POSTERN_LEASE_SECONDS: '1' };
/** Every backend is down. */
const downProbe = (_target: HealthTarget): Promise<ProbeResult> =>
  Promise.resolve({ error: 'connection refused', latencyMs: 1 });

async function twoGateways(env: Record<string, string> = LEASE_ENV): Promise<[TestApp, TestApp]> {
  const a = await buildTestApp({ postgres: true, env, observe: { healthProbe: downProbe } });
  apps.push(a);
  const b = await buildTestApp({ sameDatabaseAs: a, env, observe: { healthProbe: downProbe } });
  apps.push(b);
  return [a, b];
}

async function healthAuditRows(t: TestApp, serviceId: number): Promise<number> {
  const api = createApiClient(t, await t.login());
  const audit = await api<{ data: { target: { id: number } | null }[] }>('GET', '/api/audit?action=service.health');
  return audit.body.data.filter((e) => e.target?.id === serviceId).length;
}

describe.skipIf(TEST_STORE === 'postgres' || !(await postgresAvailable()))('leases of run-once jobs', () => {
  test('one gateway holds every lease; a backend going down is recorded once, by it', async () => {
    // Nobody is killed here: a long lease, so a loaded machine that stalls A for a second while B boots does not move
    // a lease before the first check.
    const [a, b] = await twoGateways({ POSTERN_LEASE_SECONDS: '30' });
    for (const name of LEASE_NAMES) {
      expect(a.deps.leases.holds(name)).toBe(true);
      expect(b.deps.leases.holds(name)).toBe(false);
    }
    const api = createApiClient(a, await a.login());
    const node = await insertNode(a.deps);
    const web = await api<{ id: number }>('POST', `/api/services/${node.id}/http`, {
      name: 'web',
      pathLocation: '/web',
      backendPort: 80,
    });
    expect(web.status).toBe(201);
    // Both gateways check the backend (B applied the change it was told of) and both see it down.
    const seenDown = { a: false, b: false };
    a.app.observer.health.onHealthChange(({ health }) => (seenDown.a ||= health.state === 'down'));
    b.app.observer.health.onHealthChange(({ health }) => (seenDown.b ||= health.state === 'down'));
    await vi.waitFor(() => expect(seenDown).toEqual({ a: true, b: true }), { timeout: 10_000, interval: 50 });
    await a.deps.audit.flush();
    await b.deps.audit.flush();
    expect(await healthAuditRows(a, web.body.id)).toBe(1);
  }, 20_000);

  test('a holder that stops renewing (killed) is replaced within one lease period', async () => {
    const [a, b] = await twoGateways();
    const taken: string[] = [];
    b.deps.leases.onChange((name, held) => held && taken.push(name));
    const killedAt = Date.now();
    a.deps.leases.abandon();
    await vi.waitFor(() => expect(taken.sort()).toEqual([...LEASE_NAMES].sort()), { timeout: 3000, interval: 20 });
    const tookMs = Date.now() - killedAt;
    // Not before A's lease ran out (it was renewed at most a third of a period before it stopped), within one period
    // plus B's renewal step.
    expect(tookMs).toBeGreaterThan(500);
    expect(tookMs).toBeLessThan(1500);
    for (const name of LEASE_NAMES) expect(a.deps.leases.holds(name)).toBe(false);

    // B now writes the audit rows.
    const api = createApiClient(b, await b.login());
    const node = await insertNode(b.deps);
    const web = await api<{ id: number }>('POST', `/api/services/${node.id}/http`, {
      name: 'web',
      pathLocation: '/web',
      backendPort: 80,
    });
    await vi.waitFor(async () => expect(await healthAuditRows(b, web.body.id)).toBe(1), {
      timeout: 10_000,
      interval: 100,
    });
  }, 20_000);

  test('a clean shutdown gives the leases up at once', async () => {
    const [a, b] = await twoGateways();
    const releasedAt = Date.now();
    await a.deps.leases.release();
    await vi.waitFor(() => expect(b.deps.leases.holds('certificates')).toBe(true), { timeout: 1000, interval: 10 });
    // The next renewal step (a third of the period), not the end of the lease.
    expect(Date.now() - releasedAt).toBeLessThan(500);
  }, 20_000);
});
