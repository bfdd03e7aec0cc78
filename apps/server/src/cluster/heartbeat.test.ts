import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { gateways } from '../db/schema.js';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';
import { startHeartbeat } from './heartbeat.js';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  await t.cleanup();
});

const lastSeen = async () =>
  (await t.db.select().from(gateways).where(eq(gateways.id, t.deps.gateway.id)).get())?.lastSeenAt;

test('beats every interval; a failing database is logged once per outage and stops nothing', async () => {
  let clock = new Date('2030-01-01T00:00:00.000Z');
  let down = false;
  let attempts = 0;
  const db = {
    ...t.db,
    write: (async (work) => {
      attempts++;
      if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return await t.db.write(work);
    }) as typeof t.db.write,
  };
  const log = { warn: vi.fn(), info: vi.fn() };
  const stop = startHeartbeat({ db, now: () => clock }, t.deps.gateway.id, log, 20);
  try {
    await vi.waitFor(async () => expect(await lastSeen()).toBe('2030-01-01T00:00:00.000Z'), { timeout: 5000 });
    down = true;
    clock = new Date('2030-01-01T00:00:10.000Z');
    const before = attempts;
    await vi.waitFor(() => expect(attempts).toBeGreaterThanOrEqual(before + 3), { timeout: 5000 });
    expect(log.warn).toHaveBeenCalledTimes(1);
    expect(await lastSeen()).toBe('2030-01-01T00:00:00.000Z');
    down = false;
    await vi.waitFor(async () => expect(await lastSeen()).toBe('2030-01-01T00:00:10.000Z'), { timeout: 5000 });
    expect(log.info).toHaveBeenCalledTimes(1);
  } finally {
    stop();
  }
});
