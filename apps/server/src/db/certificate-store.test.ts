import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { CertificateRecord } from '../dataplane/certs/renewal.js';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';
import { openDbCertificateStore } from './certificate-store.js';
import type { Store } from './client.js';
import { domains } from './schema.js';

let t: TestApp;

beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  await t.cleanup();
});

const record = (over: Partial<CertificateRecord> = {}): CertificateRecord => ({
  state: 'valid',
  issuer: 'CN=Test CA',
  notBefore: '2026-01-01T00:00:00.000Z',
  notAfter: '2026-04-01T00:00:00.000Z',
  fingerprint: 'AA:BB',
  error: null,
  nextAttemptAt: null,
  failures: 0,
  lastAttemptAt: null,
  names: null,
  ...over,
});

async function addDomain(name: string): Promise<void> {
  const now = new Date().toISOString();
  await t.db.write(
    async (tx) =>
      await tx.insert(domains).values({ domain: name, ssl: 'certbot', createdAt: now, updatedAt: now }).run(),
  );
}

describe('the certificate store', () => {
  test('keeps one record per domain, replaced on put, gone on delete: in memory at once, in the database after', async () => {
    await addDomain('a.example.com');
    await addDomain('b.example.com');
    const store = await openDbCertificateStore(t.db);
    expect(store.get('a.example.com')).toBeNull();
    store.put('a.example.com', record());
    store.put('b.example.com', record({ state: 'failed', error: 'rate limited', failures: 2 }));
    store.put('a.example.com', record({ fingerprint: 'CC:DD' }));
    expect(store.get('a.example.com')).toEqual(record({ fingerprint: 'CC:DD' }));
    await store.flush();
    const reopened = await openDbCertificateStore(t.db);
    expect(reopened.get('a.example.com')).toEqual(record({ fingerprint: 'CC:DD' }));
    expect(reopened.get('b.example.com')).toEqual(record({ state: 'failed', error: 'rate limited', failures: 2 }));
    store.delete('a.example.com');
    expect(store.get('a.example.com')).toBeNull();
    await store.flush();
    const again = await openDbCertificateStore(t.db);
    expect(again.get('a.example.com')).toBeNull();
    expect(again.get('b.example.com')).not.toBeNull();
  });

  test('stores nothing for a domain that does not exist, and loses the record with its domain', async () => {
    const store = await openDbCertificateStore(t.db);
    store.put('gone.example.com', record());
    await addDomain('c.example.com');
    store.put('c.example.com', record());
    await store.flush();
    expect((await openDbCertificateStore(t.db)).get('c.example.com')).not.toBeNull();
    await t.db.write(async (tx) => await tx.delete(domains).where(eq(domains.domain, 'c.example.com')).run());
    const reopened = await openDbCertificateStore(t.db);
    expect(reopened.get('gone.example.com')).toBeNull();
    expect(reopened.get('c.example.com')).toBeNull();
  });

  test('a write the database refuses stays queued and is written with the next flush, in order', async () => {
    await addDomain('d.example.com');
    let isDown = true;
    const flaky: Store = Object.create(t.db) as Store;
    flaky.write = (work) => (isDown ? Promise.reject(new Error('database away')) : t.db.write(work));
    const errors: unknown[] = [];
    const store = await openDbCertificateStore(flaky, (err) => errors.push(err));
    store.put('d.example.com', record({ fingerprint: '11:11' }));
    store.put('d.example.com', record({ fingerprint: '22:22' }));
    await expect(store.flush()).rejects.toThrow('database away');
    expect(errors.length).toBeGreaterThan(0);
    expect(store.get('d.example.com')?.fingerprint).toBe('22:22');
    isDown = false;
    await store.flush();
    expect((await openDbCertificateStore(t.db)).get('d.example.com')?.fingerprint).toBe('22:22');
  });
  test("a refresh whose read began before this gateway's own write landed keeps the newer record", async () => {
    await addDomain('race.example.com');
    // As on PostgreSQL, where a read does not wait for a write: the refresh's rows are read at once and handed over
    // only once `release` is called, after the write below committed.
    let release: () => void = () => undefined;
    let gate = Promise.resolve();
    const select = t.db.select.bind(t.db);
    const racing = Object.create(t.db, {
      engine: { value: 'postgres' },
      select: {
        value: (...args: Parameters<Store['select']>) => {
          const query = select(...args);
          const from = query.from.bind(query);
          return Object.assign(query, {
            from: (...fromArgs: Parameters<typeof from>) => {
              const joined = from(...fromArgs);
              const innerJoin = joined.innerJoin.bind(joined);
              return Object.assign(joined, {
                innerJoin: (...joinArgs: Parameters<typeof innerJoin>) => {
                  const filtered = innerJoin(...joinArgs);
                  const where = filtered.where.bind(filtered);
                  return Object.assign(filtered, {
                    where: (...whereArgs: Parameters<typeof where>) => {
                      const rows = where(...whereArgs).all();
                      const opens = gate;
                      return { finally: (done: () => void) => opens.then(() => rows).finally(done) };
                    },
                  });
                },
              });
            },
          });
        },
      },
    }) as Store;
    const store = await openDbCertificateStore(racing);
    store.put('race.example.com', record({ state: 'pending', fingerprint: null }));
    await store.flush();
    gate = new Promise((resolve) => {
      release = resolve;
    });
    const refreshed = store.refresh();
    store.put('race.example.com', record());
    await store.flush();
    release();
    await refreshed;
    expect(store.get('race.example.com')).toEqual(record());
  });
});
