import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { gateways } from '../../db/schema.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { startHeartbeat } from './heartbeat.js';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  vi.useRealTimers();
  await t.cleanup();
});

const lastSeen = async () =>
  (await t.db.select().from(gateways).where(eq(gateways.id, t.deps.gateway.id)).get())?.lastSeenAt;

test('beats every interval; a failing database is logged once per outage and stops nothing', async () => {
  vi.useFakeTimers();
  let clock = new Date('2030-01-01T00:00:00.000Z');
  let down = false;
  const db = {
    ...t.db,
    write: (async (work) => {
      if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return await t.db.write(work);
    }) as typeof t.db.write,
  };
  const log = { warn: vi.fn(), info: vi.fn() };
  const stop = startHeartbeat({ db, now: () => clock }, t.deps.gateway.id, log, 1000);
  await vi.advanceTimersByTimeAsync(1000);
  expect(await lastSeen()).toBe('2030-01-01T00:00:00.000Z');
  down = true;
  clock = new Date('2030-01-01T00:00:10.000Z');
  await vi.advanceTimersByTimeAsync(3000);
  expect(log.warn).toHaveBeenCalledTimes(1);
  expect(await lastSeen()).toBe('2030-01-01T00:00:00.000Z');
  down = false;
  await vi.advanceTimersByTimeAsync(1000);
  expect(await lastSeen()).toBe('2030-01-01T00:00:10.000Z');
  expect(log.info).toHaveBeenCalledTimes(1);
  stop();
  clock = new Date('2030-01-01T00:01:00.000Z');
  await vi.advanceTimersByTimeAsync(5000);
  expect(await lastSeen()).toBe('2030-01-01T00:00:10.000Z');
});
