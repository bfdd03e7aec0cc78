import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type Store } from '../../db/client.js';
import { resolveMigrationsDir } from '../../db/migrations-dir.js';
import { openPostgresStore } from '../../db/postgres.js';
import { signInAttempts } from '../../db/schema.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../../test/postgres.js';
import {
  clientKeyOf,
  createLoginLimiter,
  LOGIN_MAX_FAILURES_PER_CLIENT,
  LOGIN_MAX_FAILURES_PER_USERNAME,
  LOGIN_WINDOW_MS,
  type LoginLimiter,
} from './rate-limit.js';

/** Claims an attempt that then fails (the claim stays counted); returns false when the limiter refused. */
const fail = async (limiter: LoginLimiter, ip: string, username: string): Promise<boolean> =>
  (await limiter.reserve(ip, username)).attempt !== undefined;
const retryAfter = async (limiter: LoginLimiter, ip: string, username: string): Promise<number> => {
  const reservation = await limiter.reserve(ip, username);
  await reservation.attempt?.release();
  return reservation.retryAfterSeconds ?? 0;
};

// The attempts are rows of the database, so the limiter is tested on both engines (this file builds no app, so the
// test command's PostgreSQL run does not repeat it).
const engines = ['sqlite', ...((await postgresAvailable()) ? ['postgres'] : [])] as const;

describe.each(engines)('login limiter on %s', (engine) => {
  let db: Store;
  let dir: string;
  let database: TestDatabase | null = null;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'postern-limiter-'));
    if (engine === 'postgres') {
      database = await createTestDatabase();
      db = await openPostgresStore(database.url, { maxConnections: 4 });
    } else db = openSqliteStore(join(dir, 'postern.db'), resolveMigrationsDir());
  });
  afterEach(async () => {
    await db.close();
    await database?.drop();
    database = null;
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts an attempt from the moment it is claimed, so parallel claims see each other', async () => {
    const limiter = createLoginLimiter(db, () => new Date(0));
    const claims = await Promise.all(Array.from({ length: 50 }, () => limiter.reserve('192.0.2.1', 'admin')));
    expect(claims.filter((claim) => claim.attempt).length).toBe(LOGIN_MAX_FAILURES_PER_CLIENT);
    expect(claims.at(-1)?.retryAfterSeconds).toBe(LOGIN_WINDOW_MS / 1000);
  });

  it('is shared by every limiter on the database: two gateways do not double the attempts', async () => {
    const a = createLoginLimiter(db, () => new Date(0));
    const b = createLoginLimiter(db, () => new Date(0));
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).reserve('192.0.2.1', 'admin')),
    );
    expect(claims.filter((claim) => claim.attempt).length).toBe(LOGIN_MAX_FAILURES_PER_CLIENT);
    expect(await retryAfter(a, '192.0.2.1', 'admin')).toBeGreaterThan(0);
  });

  it('withdraws a released or successful claim, and forgets the failures of a client that signs in', async () => {
    const limiter = createLoginLimiter(db, () => new Date(0));
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT - 1; i++) await fail(limiter, '192.0.2.1', 'admin');
    await (await limiter.reserve('192.0.2.1', 'admin')).attempt?.release();
    expect(await retryAfter(limiter, '192.0.2.1', 'admin')).toBe(0);
    await (await limiter.reserve('192.0.2.1', 'admin')).attempt?.succeed();
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT - 1; i++)
      expect(await fail(limiter, '192.0.2.1', 'admin')).toBe(true);
    expect(await retryAfter(limiter, '192.0.2.1', 'admin')).toBe(0);
  });

  it('frees a client as soon as its oldest failures leave the window, and prunes them', async () => {
    let now = 0;
    const limiter = createLoginLimiter(db, () => new Date(now));
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_CLIENT; i++) await fail(limiter, '192.0.2.1', `user${i}`);
    expect(await retryAfter(limiter, '192.0.2.1', 'x')).toBe(LOGIN_WINDOW_MS / 1000);
    now = LOGIN_WINDOW_MS + 1;
    expect(await fail(limiter, '192.0.2.1', 'x')).toBe(true);
    // The next claim deleted what left the window: only its own row is left.
    expect(await db.select({ at: signInAttempts.atMs }).from(signInAttempts)).toEqual([{ at: now }]);
  });

  it('under attack, a username refuses clients that failed recently, never a client without failures', async () => {
    let now = 0;
    const limiter = createLoginLimiter(db, () => new Date(now));
    for (let i = 0; i < LOGIN_MAX_FAILURES_PER_USERNAME; i++) {
      expect(await fail(limiter, `10.0.0.${i}`, i % 2 ? 'ADMIN' : 'admin')).toBe(true);
      now += 1000;
    }
    // Every attacker that already failed waits (case-insensitively) until the name's oldest failure ages out.
    expect(await retryAfter(limiter, '10.0.0.9', 'Admin')).toBe(
      (LOGIN_WINDOW_MS - LOGIN_MAX_FAILURES_PER_USERNAME * 1000) / 1000,
    );
    // A client with no failure of its own is let through to the password check, as often as it needs.
    for (let i = 0; i < 3; i++) expect(await retryAfter(limiter, '198.51.100.1', 'admin')).toBe(0);
    // Its first failure puts it with the others; other usernames are not affected.
    expect(await fail(limiter, '198.51.100.1', 'admin')).toBe(true);
    expect(await retryAfter(limiter, '198.51.100.1', 'admin')).toBeGreaterThan(0);
    expect(await retryAfter(limiter, '10.0.0.9', 'someone-else')).toBe(0);
  });

  it('keeps a name under attack while many addresses guess it once each', async () => {
    let now = 0;
    const limiter = createLoginLimiter(db, () => new Date(now));
    for (let i = 0; i < 300; i++) {
      await fail(limiter, `10.0.${(i >> 8) & 255}.${i & 255}`, 'admin');
      now += 10;
    }
    expect(await retryAfter(limiter, '10.0.0.1', 'admin')).toBeGreaterThan(0);
    expect(await retryAfter(limiter, '192.0.2.1', 'admin')).toBe(0);
    // 300 claims are 600 writes: seconds on PostgreSQL on a loaded machine.
  }, 30_000);
});

describe('client keys', () => {
  it('groups IPv6 clients by /64 and IPv4-mapped addresses with their IPv4 address', () => {
    expect(clientKeyOf('2001:db8:1:2:aaaa::1')).toBe(clientKeyOf('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'));
    expect(clientKeyOf('2001:db8:1:2::1')).not.toBe(clientKeyOf('2001:db8:1:3::1'));
    expect(clientKeyOf('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientKeyOf('192.0.2.7')).not.toBe(clientKeyOf('192.0.2.8'));
  });
});
