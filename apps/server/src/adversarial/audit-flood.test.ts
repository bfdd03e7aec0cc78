import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Store } from '../db/client.js';
import { auditEvents, signInAttempts } from '../db/schema.js';
import { SUMMED_FIRST_ROWS_PER_WINDOW } from '../modules/audit/recorder.js';
import { LOGIN_MAX_FAILURES_PER_CLIENT } from '../modules/auth/rate-limit.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../test/build-test-app.js';

// Anonymous clients must not be able to write the audit log at their own pace (docs/api.md "Audit log"). Every refused
// sign-in used to write one row, each in its own write transaction (on PostgreSQL under the cluster-wide write lock):
// 3,000 requests from one address were 3,000 rows and 3,000 write-lock turns. Failures are now summed per client and
// window (docs/api.md "Audit log"): the first is written at once, the rest as one row at the window's end.

let t: TestApp;
afterEach(async () => {
  vi.restoreAllMocks();
  await t.cleanup();
});

/** Through the gateway's own nginx (loopback, a trusted proxy), from `client`. */
const loginFrom = (client: string, password = 'wrong-password', username: string = TEST_ADMIN.username) =>
  t.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username, password },
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': client },
  });

async function inBatches<T>(count: number, batch: number, make: (index: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += batch) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(batch, count - start) }, (_, i) => make(start + i)))));
  }
  return out;
}

/**
 * Counts the write transactions sign-in causes: those that insert into the audit log, and all that insert into the
 * audit log or claim an attempt in the sign-in limiter (one per guess it lets through to the password check). The
 * gateway's own background writes (heartbeat, leases) are not counted.
 */
function countWrites(db: Store): { signIn: () => number; audit: () => number } {
  const original = db.write.bind(db);
  let signIn = 0;
  let audit = 0;
  vi.spyOn(db, 'write').mockImplementation(async (work) => {
    const touched = new Set<unknown>();
    const result = await original(async (tx) => {
      const watched = new Proxy(tx, {
        get(target, property) {
          const value: unknown = Reflect.get(target, property, target);
          if (property !== 'insert' || typeof value !== 'function') return value;
          return (table: unknown) => {
            touched.add(table);
            return (value as (table: unknown) => unknown).call(target, table);
          };
        },
      });
      return await work(watched);
    });
    if (touched.has(auditEvents)) audit++;
    if (touched.has(auditEvents) || touched.has(signInAttempts)) signIn++;
    return result;
  });
  return { signIn: () => signIn, audit: () => audit };
}

const failureRows = async () =>
  await t.db.select().from(auditEvents).where(eq(auditEvents.action, 'auth.sign-in-failed')).all();

describe('the audit log under a flood of refused sign-ins', () => {
  it('writes 2 rows for 1,000 refused sign-ins from one address, and no write per refused request', async () => {
    t = await buildTestApp();
    const writes = countWrites(t.db);
    // The guesses the limiter lets through one by one (parallel ones racing for the last claim would each take a
    // write of the limiter's own), then the flood.
    const statuses: number[] = [];
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++) statuses.push((await loginFrom('203.0.113.7')).statusCode);
    const flood = await inBatches(1000 - LOGIN_MAX_FAILURES_PER_CLIENT, 50, () => loginFrom('203.0.113.7'));
    statuses.push(...flood.map((r) => r.statusCode));
    const wrong = statuses.filter((status) => status === 401).length;
    expect(wrong).toBe(LOGIN_MAX_FAILURES_PER_CLIENT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(1000 - wrong);
    // The attack's start is in the log at once...
    const first = await failureRows();
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ actorKind: 'anonymous', actorName: 'admin', address: '203.0.113.7' });
    // ...and the whole flood cost one write per permitted guess (the limiter's claim) plus that one row.
    expect(writes.audit()).toBe(1);
    expect(writes.signIn()).toBe(wrong + 1);

    // At the window's end, one row sums up the rest.
    await t.deps.audit.flushSummed();
    const rows = await failureRows();
    expect(rows).toHaveLength(2);
    expect(rows[1]?.detail).toMatch(/^999 failed sign-ins from 203\.0\.113\.7 between \S+ and \S+: \d+ /);
    expect(rows[1]?.after).toMatchObject({ count: 999, usernames: ['admin'] });
    expect(writes.audit()).toBe(2);
    expect(writes.signIn()).toBe(wrong + 2);
    // A quiet window later, the next failure is an attack's start again: written at once.
    await t.deps.audit.flushSummed();
    expect(await failureRows()).toHaveLength(2);
    await loginFrom('203.0.113.7');
    expect(await failureRows()).toHaveLength(3);
  }, 60_000);

  it('bounds the rows written at once when the flood comes from many addresses', async () => {
    t = await buildTestApp();
    const writes = countWrites(t.db);
    const addresses = SUMMED_FIRST_ROWS_PER_WINDOW + 50;
    // Two refusals from each address, straight into the audit log (through HTTP each would cost a password hash:
    // the first test shows the way in). The first rows of the window are written at once, the rest only counted.
    const refuse = (i: number) =>
      t.deps.audit.recordSummed({
        actor: { kind: 'anonymous', name: 'admin' },
        address: `198.18.${Math.floor(i / 500)}.${(i >> 1) % 250}`,
        action: 'auth.sign-in-failed',
        target: { type: 'user', name: 'admin' },
        reason: i % 2 ? 'rate limited' : 'wrong username or password',
      });
    await inBatches(addresses * 2, 50, refuse);
    expect(await failureRows()).toHaveLength(SUMMED_FIRST_ROWS_PER_WINDOW);
    // At most one write each (those recorded in one turn share one: audit/recorder.ts).
    const firstWrites = writes.audit();
    expect(firstWrites).toBeLessThanOrEqual(SUMMED_FIRST_ROWS_PER_WINDOW);
    await t.deps.audit.flushSummed();
    // One write for every summary; every refusal is accounted for.
    expect(writes.audit()).toBe(firstWrites + 1);
    const rows = await failureRows();
    expect(rows).toHaveLength(SUMMED_FIRST_ROWS_PER_WINDOW + addresses);
    const counted = rows.reduce((sum, row) => sum + ((row.after as { count?: number } | null)?.count ?? 1), 0);
    expect(counted).toBe(addresses * 2);
  });
});
