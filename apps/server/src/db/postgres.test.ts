import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asc, count, DrizzleQueryError, eq, sql } from 'drizzle-orm';
import { getTableConfig, SQLiteTable, type SQLiteColumn } from 'drizzle-orm/sqlite-core';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../test/postgres.js';
import {
  NESTED_WRITE_MESSAGE,
  openSqliteStore,
  READ_ON_STORE_MESSAGE,
  TX_CLOSED_MESSAGE,
  type ReadDb,
  type Store,
  type Tx,
  WRITE_SPANNED_IO_MESSAGE,
} from './client.js';
import { resolveMigrationsDir, resolvePgMigrationsDir } from './migrations-dir.js';
import { openPostgresStore } from './postgres.js';
import * as schema from './schema.js';
import { nodes, settings, tcpServices, users } from './schema.js';

const hasPostgres = await postgresAvailable();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const urls = new WeakMap<Store, string>();

async function openPg(database?: TestDatabase): Promise<Store> {
  const db = database ?? (await createTestDatabase());
  if (!database) cleanups.push(() => db.drop());
  const store = await openPostgresStore(db.url);
  cleanups.push(() => store.close());
  urls.set(store, db.url);
  return store;
}

function sameTurnHold(): Hold {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  return {
    inside: async () => {
      reach();
      await released;
    },
    reached: () => reached,
    release: async () => release(),
  };
}

async function advisoryLockHold(store: Store): Promise<Hold> {
  const client = new pg.Client({ connectionString: urls.get(store) });
  await client.connect();
  cleanups.push(() => client.end());
  const key = randomInt(1, 2 ** 31 - 1);
  await client.query('select pg_advisory_lock($1)', [key]);
  const waiting = async () =>
    (
      await client.query<{ n: number }>(
        "select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = $1 and not granted",
        [key],
      )
    ).rows[0]?.n;
  return {
    inside: async (tx) => {
      await tx.values(sql`select pg_advisory_xact_lock(${key})`);
    },
    reached: async () => {
      await expect.poll(waiting).toBe(1);
    },
    release: async () => {
      await client.query('select pg_advisory_unlock($1)', [key]);
    },
  };
}

function openSqlite(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'postern-store-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const store = openSqliteStore(join(dir, 'postern.db'), resolveMigrationsDir());
  cleanups.push(() => store.close());
  return store;
}

const engines = [
  { engine: 'sqlite', open: async () => openSqlite(), holdOf: async () => sameTurnHold() },
  { engine: 'postgres', open: () => openPg(), holdOf: advisoryLockHold },
] as const;

const node = (name: string, address: string) => ({
  name,
  address,
  publicKey: `pk-${name}`,
  privateKeyEnc: 'x',
});

/**
 * Keeps a transaction open inside one of its statements until released, so a test can look at the store meanwhile
 * (a transaction may await nothing else). SQLite answers at once, so there the hold is a promise the test releases
 * within the same turn of the event loop; PostgreSQL's is an advisory lock another connection holds.
 */
interface Hold {
  inside(tx: ReadDb): Promise<void>;
  /** Resolves once the transaction is held. */
  reached(): Promise<void>;
  release(): Promise<void>;
}

/** The same queries on both engines must give the same answers. */
const cases: {
  name: string;
  run: (store: Store, holdOf: (store: Store) => Promise<Hold>) => Promise<unknown>;
  expected: unknown;
}[] = [
  {
    name: 'an insert without id gets the next ids, with returning',
    run: async (store) =>
      store.write(async (tx) => [
        await tx.insert(users).values({ username: 'a', passwordHash: 'h' }).returning({ id: users.id }),
        await tx
          .insert(users)
          .values([
            { username: 'b', passwordHash: 'h' },
            { username: 'c', passwordHash: 'h' },
          ])
          .returning({ id: users.id, username: users.username }),
      ]),
    expected: [
      [{ id: 1 }],
      [
        { id: 2, username: 'b' },
        { id: 3, username: 'c' },
      ],
    ],
  },
  {
    name: 'an upsert updates the row that is there',
    run: async (store) => {
      const put = (value: string) =>
        store.write((tx) =>
          tx
            .insert(settings)
            .values({ key: 'k', value })
            .onConflictDoUpdate({ target: settings.key, set: { value: sql`excluded.value` } })
            .returning(),
        );
      await put('one');
      await put('two');
      return store.select().from(settings);
    },
    expected: [{ key: 'k', value: 'two' }],
  },
  {
    name: 'boolean and json columns round-trip, their defaults apply, timestamps are filled in',
    run: async (store) => {
      await store.write(async (tx) => {
        await tx
          .insert(nodes)
          .values({ ...node('gw', '10.44.0.2'), isGateway: true, extraGatewayNetworks: ['10.9.0.0/24'] });
        await tx.insert(nodes).values(node('plain', '10.44.0.3'));
        await tx.insert(tcpServices).values({ nodeId: 2, name: 't', port: 30001, backendHost: 'h', backendPort: 22 });
      });
      const rows = await store
        .select({
          isGateway: nodes.isGateway,
          enabled: nodes.enabled,
          extra: nodes.extraGatewayNetworks,
          createdAt: nodes.createdAt,
        })
        .from(nodes)
        .orderBy(asc(nodes.id));
      const [service] = await store.select({ allowed: tcpServices.allowedIps, ssl: tcpServices.ssl }).from(tcpServices);
      const gateways = await store.select({ name: nodes.name }).from(nodes).where(eq(nodes.isGateway, true));
      return {
        rows: rows.map(({ createdAt, ...rest }) => ({
          ...rest,
          iso: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(createdAt),
        })),
        service,
        gateways,
      };
    },
    expected: {
      rows: [
        { isGateway: true, enabled: true, extra: ['10.9.0.0/24'], iso: true },
        { isGateway: false, enabled: true, extra: [], iso: true },
      ],
      service: { allowed: [], ssl: false },
      gateways: [{ name: 'gw' }],
    },
  },
  {
    name: 'count() is a number; limit and offset page; a prepared query takes placeholders',
    run: async (store) => {
      await store.write((tx) =>
        tx.insert(nodes).values(['a', 'b', 'c', 'd', 'e'].map((name, i) => node(name, `10.44.0.${i + 2}`))),
      );
      const [total] = await store.select({ n: count() }).from(nodes);
      const page = await store.select({ name: nodes.name }).from(nodes).orderBy(asc(nodes.name)).limit(2).offset(2);
      const byName = store
        .select({ address: nodes.address })
        .from(nodes)
        .where(eq(nodes.name, sql.placeholder('name')))
        .prepare();
      return { total, page, c: await byName.get({ name: 'c' }), none: await byName.get({ name: 'zz' }) };
    },
    expected: { total: { n: 5 }, page: [{ name: 'c' }, { name: 'd' }], c: { address: '10.44.0.4' }, none: undefined },
  },
  {
    name: 'raw SQL: rows as arrays, a ? inside a string stays',
    run: async (store) => {
      await store.write((tx) => tx.insert(nodes).values(node('what?', '10.44.0.9')));
      return {
        count: await store.values(sql`select count(*), 'a?b' from ${nodes} where ${nodes.name} = ${'what?'}`),
        values: await store.values(sql`select name, ${'lit'} from ${nodes}`),
      };
    },
    expected: { count: [[1, 'a?b']], values: [['what?', 'lit']] },
  },
  {
    name: 'a unique violation carries SQLite’s error code',
    run: async (store) => {
      await store.write((tx) => tx.insert(users).values({ username: 'a', passwordHash: 'h' }));
      const error = await store
        .write((tx) => tx.insert(users).values({ username: 'a', passwordHash: 'h' }))
        .catch((e: unknown) => e);
      return (error as { code?: string }).code;
    },
    expected: 'SQLITE_CONSTRAINT_UNIQUE',
  },
  {
    name: 'a write that throws leaves nothing behind',
    run: async (store) => {
      const error = await store
        .write(async (tx) => {
          await tx.insert(users).values({ username: 'gone', passwordHash: 'h' });
          await tx.update(users).set({ passwordHash: 'changed' });
          throw new Error('boom');
        })
        .catch((e: unknown) => (e as Error).message);
      return { error, rows: await store.select().from(users) };
    },
    expected: { error: 'boom', rows: [] },
  },
  {
    name: 'concurrent writes each commit',
    run: async (store) => {
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.write(async (tx) => {
            await tx.insert(users).values({ username: `u${i}`, passwordHash: 'h' });
            await tx.insert(settings).values({ key: `k${i}`, value: String(i) });
          }),
        ),
      );
      const [u] = await store.select({ n: count() }).from(users);
      const [s] = await store.select({ n: count() }).from(settings);
      return [u, s];
    },
    expected: [{ n: 8 }, { n: 8 }],
  },
  {
    name: 'reads on the store do not see a write in progress, nor one rolled back',
    run: async (store, holdOf) => {
      const hold = await holdOf(store);
      const writing = store.write(async (tx) => {
        await tx.insert(users).values({ username: 'pending', passwordHash: 'h' });
        // Inside the transaction its own rows are there; outside they are not yet.
        const own = await tx.select({ username: users.username }).from(users);
        await hold.inside(tx);
        return own;
      });
      await hold.reached();
      const during = await store.select().from(users);
      await hold.release();
      const own = await writing;
      const failing = store.write(async (tx) => {
        await tx.insert(users).values({ username: 'undone', passwordHash: 'h' });
        throw new Error('undone');
      });
      await failing.catch(() => undefined);
      return { during, own, after: await store.select({ username: users.username }).from(users) };
    },
    expected: { during: [], own: [{ username: 'pending' }], after: [{ username: 'pending' }] },
  },
  {
    name: 'a read on the store inside a write is refused, and nothing of the write stays',
    run: async (store) => {
      const error = await store
        .write(async (tx) => {
          await tx.insert(users).values({ username: 'a', passwordHash: 'h' });
          return store.select().from(users);
        })
        .catch((e: unknown) => (e as Error).message);
      return { error, rows: await store.select().from(users) };
    },
    expected: { error: READ_ON_STORE_MESSAGE, rows: [] },
  },
  {
    name: 'a tx used after its write ended is refused',
    run: async (store) => {
      let kept!: Tx;
      await store.write(async (tx) => {
        kept = tx;
        await tx.insert(users).values({ username: 'a', passwordHash: 'h' });
      });
      const late = await Promise.resolve(kept.insert(users).values({ username: 'late', passwordHash: 'h' })).then(
        () => 'ran',
        (e: unknown) => (e as Error).message,
      );
      return { late, rows: await store.select({ username: users.username }).from(users) };
    },
    expected: { late: TX_CLOSED_MESSAGE, rows: [{ username: 'a' }] },
  },
  {
    name: 'a snapshot reads one moment: a write that commits meanwhile is not in it, and it cannot write',
    run: async (store, holdOf) => {
      await store.write((tx) => tx.insert(settings).values({ key: 'k', value: 'before' }));
      const read = (tx: ReadDb) => tx.select({ value: settings.value }).from(settings).where(eq(settings.key, 'k'));
      const hold = await holdOf(store);
      const snapshot = store.snapshot(async (tx) => {
        const first = await read(tx);
        await hold.inside(tx);
        return { first, second: await read(tx) };
      });
      await hold.reached();
      const writing = store.write((tx) => tx.update(settings).set({ value: 'after' }).where(eq(settings.key, 'k')));
      // On PostgreSQL the write commits while the snapshot is open (a snapshot takes no lock); SQLite runs it after.
      if (store.engine === 'postgres') await writing;
      await hold.release();
      const seen = await snapshot;
      await writing;
      const write = await store
        .snapshot((tx) => (tx as Tx).delete(settings).then(() => 'deleted'))
        .catch((e: unknown) => (e as { code?: string }).code ?? (e as Error).message);
      return { first: seen.first, second: seen.second, after: await read(store), write };
    },
    expected: {
      first: [{ value: 'before' }],
      second: [{ value: 'before' }],
      after: [{ value: 'after' }],
      write: expect.stringMatching(/READONLY|25006/),
    },
  },
  {
    name: 'a transaction that awaits anything but its statements (a timer, a file) is rolled back and refused',
    run: async (store) => {
      const outcome = (p: Promise<unknown>) =>
        p.then(
          () => 'committed',
          (e: unknown) => (e as Error).message,
        );
      let late: Promise<string> | undefined;
      const timer = store.write(async (tx) => {
        await tx.insert(settings).values({ key: 'timer', value: '1' });
        await new Promise((resolve) => setTimeout(resolve, 1));
        late = outcome(Promise.resolve(tx.insert(settings).values({ key: 'late', value: '1' })));
      });
      const file = store.write(async (tx) => {
        await tx.insert(settings).values({ key: 'file', value: '1' });
        await readFile(fileURLToPath(import.meta.url));
      });
      const snapshot = store.snapshot(async (tx) => {
        await tx.select().from(settings);
        await new Promise((resolve) => setTimeout(resolve, 1));
      });
      const behind = store.write((tx) => tx.insert(settings).values({ key: 'behind', value: '1' }));
      const outcomes = await Promise.all([timer, file, snapshot, behind].map(outcome));
      // What the refused write did once refused ran outside any transaction: refused too, never committed.
      await expect.poll(() => late !== undefined).toBe(true);
      return {
        outcomes,
        late: await late,
        rows: await store.select({ key: settings.key }).from(settings).orderBy(asc(settings.key)),
      };
    },
    expected: {
      outcomes: [WRITE_SPANNED_IO_MESSAGE, WRITE_SPANNED_IO_MESSAGE, WRITE_SPANNED_IO_MESSAGE, 'committed'],
      late: TX_CLOSED_MESSAGE,
      rows: [{ key: 'behind' }],
    },
  },
  {
    name: 'a write that awaits only its statements, many at once and one after another, commits',
    run: async (store) => {
      await store.write(async (tx) => {
        await Promise.all(
          Array.from({ length: 40 }, (_, i) => tx.insert(settings).values({ key: `k${i}`, value: String(i) })),
        );
        for (let i = 0; i < 40; i++)
          await tx
            .update(settings)
            .set({ value: 'x' })
            .where(eq(settings.key, `k${i}`));
        // A helper's own awaits between statements are promise continuations, not I/O.
        await Promise.resolve();
        await tx.insert(settings).values({ key: 'last', value: 'y' });
      });
      return store.values(sql`select count(*), min(${settings.value}) from ${settings}`);
    },
    expected: [[41, 'x']],
  },
  {
    name: 'a tx offers no transaction of its own: pass it down',
    run: async (store) => store.write(async (tx) => 'transaction' in tx),
    expected: false,
  },
  {
    name: 'a failed write answers with the statement’s own error, its parameters left out',
    run: async (store) => {
      await store.write((tx) => tx.insert(users).values({ username: 'a', passwordHash: 'h' }));
      const error = (await store
        .write((tx) => tx.insert(users).values({ username: 'a', passwordHash: 'secret-hash-x9' }))
        .catch((e: unknown) => e)) as Error;
      return {
        wrapped: error instanceof DrizzleQueryError,
        leaks: JSON.stringify([error.message, error.stack]).includes('x9'),
      };
    },
    expected: { wrapped: false, leaks: false },
  },
  {
    name: 'a write inside a write is refused',
    run: async (store) =>
      store
        .write(() => store.write(async () => 'inner'))
        .then(
          () => 'ran',
          (e: unknown) => (e as Error).message,
        ),
    expected: NESTED_WRITE_MESSAGE,
  },
];

describe.each(engines)('the store on $engine', ({ engine, open, holdOf }) => {
  it.skipIf(engine === 'postgres' && !hasPostgres).each(cases)('$name', async ({ run, expected }) => {
    expect(await run(await open(), holdOf)).toEqual(expected);
  });
});

describe.skipIf(!hasPostgres)('PostgreSQL', () => {
  it('applies the migrations to an empty database, from two gateways at once, and once only', async () => {
    const database = await createTestDatabase({ migrated: false });
    cleanups.push(() => database.drop());
    const [a, b] = await Promise.all([openPg(database), openPg(database)]);
    await a.write((tx) => tx.insert(users).values({ username: 'a', passwordHash: 'h' }));
    await openPg(database);
    const journal = JSON.parse(readFileSync(join(resolvePgMigrationsDir(), 'meta', '_journal.json'), 'utf8')) as {
      entries: unknown[];
    };
    expect(await b.values(sql`select count(*) from drizzle.__drizzle_migrations`)).toEqual([[journal.entries.length]]);
    expect(await b.select({ username: users.username }).from(users)).toEqual([{ username: 'a' }]);
  });

  it('fills an omitted id in every table whose id autoincrements', async () => {
    const store = await openPg();
    const autoIncrementing = Object.values(schema as Record<string, unknown>)
      .filter((table): table is SQLiteTable => table instanceof SQLiteTable)
      .map((table) => getTableConfig(table))
      .filter((table) =>
        table.columns.some((c) => c.primary && (c as SQLiteColumn & { autoIncrement?: boolean }).autoIncrement),
      )
      .map((table) => table.name)
      .sort();
    expect(autoIncrementing.length).toBeGreaterThan(5);
    const withTrigger = await store.values<[string]>(
      sql`select c.relname from pg_trigger t join pg_class c on c.oid = t.tgrelid
          where t.tgname = 'postern_fill_id' order by 1`,
    );
    expect(withTrigger.map(([table]) => table)).toEqual(autoIncrementing);
  });

  it('keeps the connection URL out of its errors', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const url = new URL(database.url);
    url.password = 'not-the-password-x9';
    const error = (await openPostgresStore(url.toString()).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(JSON.stringify({ ...(error as object), message: error.message, stack: error.stack })).not.toContain('x9');
    await expect(openPostgresStore('mysql://u:secret-x9@127.0.0.1/db')).rejects.toThrow(/postgres:\/\//);
    await expect(openPostgresStore('postgres://u:secret-x9@127.0.0.1/db')).rejects.not.toThrow(/x9/);
  });
});

describe.skipIf(!hasPostgres)('the test databases', () => {
  // Two databases made and dropped inside the test: seconds each on a loaded machine (as the PostgreSQL pass allows).
  it('are each their own, and gone when dropped', { timeout: 20_000 }, async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    expect(a.url).not.toBe(b.url);
    await a.drop();
    await b.drop();
    const admin = new pg.Client({ connectionString: a.url });
    await expect(admin.connect()).rejects.toThrow(/does not exist/);
  });
});
