import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { eq, sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { NESTED_WRITE_MESSAGE, openSqliteStore, type Store, type Tx } from './client.js';
import { resolveMigrationsDir } from './migrations-dir.js';
import { settings } from './schema.js';

let dir: string;
let store: Store;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'postern-store-'));
  store = openSqliteStore(join(dir, 'postern.db'), resolveMigrationsDir());
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const valueOf = async (key: string) =>
  (await store.select({ value: settings.value }).from(settings).where(eq(settings.key, key)).get())?.value;

describe('the embedded store', () => {
  test('a prepared page answers the page it is asked for, run after run (its limit is bound anew each time)', async () => {
    await store.write(async (tx) => {
      for (let i = 0; i < 30; i++)
        await tx
          .insert(settings)
          .values({ key: `k${String(i).padStart(2, '0')}`, value: String(i) })
          .run();
    });
    const page = store
      .select({ key: settings.key })
      .from(settings)
      .orderBy(settings.key)
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare();
    const keys = async (limit: number, offset: number) => (await page.all({ limit, offset })).map((row) => row.key);
    expect(await keys(3, 0)).toEqual(['k00', 'k01', 'k02']);
    expect(await keys(2, 10)).toEqual(['k10', 'k11']);
    expect(await keys(0, 0)).toEqual([]);
    expect(await keys(-1, 28)).toEqual(['k28', 'k29']);
    expect(await keys(5, 27)).toEqual(['k27', 'k28', 'k29']);
  });

  test('a write that fails is undone whole', async () => {
    const failing = store.write(async (tx) => {
      await tx.insert(settings).values({ key: 'a', value: '1' }).run();
      throw new Error('refused halfway');
    });
    await expect(failing).rejects.toThrow('refused halfway');
    expect(await valueOf('a')).toBeUndefined();
  });

  test('a write started elsewhere while a transaction is open waits for it, and is not undone with it', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = store.write(async (tx) => {
      await tx.insert(settings).values({ key: 'first', value: '1' }).run();
      await held; // released within this turn of the event loop (a transaction may await no longer)
      throw new Error('first fails');
    });
    const second = store.write(async (tx) => {
      await tx.insert(settings).values({ key: 'second', value: '2' }).run();
    });
    release();
    await expect(first).rejects.toThrow('first fails');
    await second;
    expect(await valueOf('first')).toBeUndefined();
    expect(await valueOf('second')).toBe('2');
  });

  test('a write inside a write is refused (the transaction is passed down instead)', async () => {
    const nested = store.write(async () => {
      await store.write(async (tx) => {
        await tx.insert(settings).values({ key: 'inner', value: '1' }).run();
      });
    });
    await expect(nested).rejects.toThrow(NESTED_WRITE_MESSAGE);
    expect(await valueOf('inner')).toBeUndefined();
  });

  test('the compiler keeps the store out of what takes a transaction', async () => {
    const insertOn = (tx: Tx) => tx.insert(settings);
    const readFor = (tx: Tx) => tx.select().from(settings);
    // @ts-expect-error -- the store is not a transaction: a helper that writes takes tx
    expect(() => insertOn(store)).toThrow(TypeError);
    // @ts-expect-error -- nor for a helper that reads on behalf of a write (the store would not see its writes)
    expect(await readFor(store)).toEqual([]);
    const answers = await store.write(async (tx) => ({
      // @ts-expect-error -- no transaction inside a transaction: pass tx down
      nested: typeof tx.transaction,
      // @ts-expect-error -- raw rows by column name differ between the engines: raw SQL reads with values()
      raw: typeof store.all,
    }));
    expect(answers).toEqual({ nested: 'undefined', raw: 'undefined' });
  });

  test('a query is parsed once and its statement reused; more texts than are kept still answer', async () => {
    await store.write(async (tx) => {
      await tx.insert(settings).values({ key: 'a', value: '1' }).run();
    });
    const prepare = vi.spyOn(Database.prototype, 'prepare');
    try {
      for (let i = 0; i < 20; i++) expect(await valueOf('a')).toBe('1');
      for (let i = 0; i < 20; i++)
        await store.write(async (tx) =>
          tx
            .update(settings)
            .set({ value: `${i}` })
            .run(),
        );
      expect(prepare.mock.calls.length).toBeLessThanOrEqual(2);
      expect(await valueOf('a')).toBe('19');
    } finally {
      prepare.mockRestore();
    }
    // Beyond the texts kept, the oldest go and come back.
    for (let i = 0; i < 600; i++) expect(await store.values(sql`select ${sql.raw(String(i))}`)).toEqual([[i]]);
    expect(await store.values(sql`select 0`)).toEqual([[0]]);
  });
});
