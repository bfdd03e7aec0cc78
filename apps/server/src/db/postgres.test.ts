import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asc, count, eq, sql } from 'drizzle-orm';
import { getTableConfig, SQLiteTable, type SQLiteColumn } from 'drizzle-orm/sqlite-core';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../test/postgres.js';
import { NESTED_WRITE_MESSAGE, openSqliteStore, type Store } from './client.js';
import { resolveMigrationsDir, resolvePgMigrationsDir } from './migrations-dir.js';
import { openPostgresStore } from './postgres.js';
import * as schema from './schema.js';
import { nodes, settings, tcpServices, users } from './schema.js';

const hasPostgres = await postgresAvailable();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openPg(database?: TestDatabase): Promise<Store> {
  const db = database ?? (await createTestDatabase());
  if (!database) cleanups.push(() => db.drop());
  const store = await openPostgresStore(db.url);
  cleanups.push(() => store.close());
  return store;
}

function openSqlite(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'postern-store-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const store = openSqliteStore(join(dir, 'postern.db'), resolveMigrationsDir());
  cleanups.push(() => store.close());
  return store;
}

const engines = [
  { engine: 'sqlite', open: async () => openSqlite() },
  { engine: 'postgres', open: () => openPg() },
] as const;

const node = (name: string, address: string) => ({
  name,
  address,
  publicKey: `pk-${name}`,
  privateKeyEnc: 'x',
});

/** The same queries on both engines must give the same answers. */
const cases: { name: string; run: (store: Store) => Promise<unknown>; expected: unknown }[] = [
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
    name: 'raw SQL: rows by column name, a ? inside a string stays, instr() exists',
    run: async (store) => {
      await store.write((tx) => tx.insert(nodes).values(node('what?', '10.44.0.9')));
      return {
        get: await store.get(sql`select count(*) as n, 'a?b' as s from ${nodes} where ${nodes.name} = ${'what?'}`),
        all: await store.all(sql`select name from ${nodes} where instr(${nodes.name}, ${'?'}) > 0`),
        values: await store.values(sql`select name, ${'lit'} from ${nodes}`),
      };
    },
    expected: { get: { n: 1, s: 'a?b' }, all: [{ name: 'what?' }], values: [['what?', 'lit']] },
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

describe.each(engines)('the store on $engine', ({ engine, open }) => {
  it.skipIf(engine === 'postgres' && !hasPostgres).each(cases)('$name', async ({ run, expected }) => {
    expect(await run(await open())).toEqual(expected);
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
    expect(await b.get(sql`select count(*) as n from drizzle.__drizzle_migrations`)).toEqual({
      n: journal.entries.length,
    });
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
    const withTrigger = (await store.all<{ table: string }>(
      sql`select c.relname as "table" from pg_trigger t join pg_class c on c.oid = t.tgrelid
          where t.tgname = 'postern_fill_id' order by 1`,
    )) as { table: string }[];
    expect(withTrigger.map((row) => row.table)).toEqual(autoIncrementing);
  });

  it('keeps writes of a transaction from other connections until they commit', async () => {
    const store = await openPg();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
    const writing = store.write(async (tx) => {
      await tx.insert(users).values({ username: 'pending', passwordHash: 'h' });
      // Inside the transaction its own rows are there; outside they are not yet.
      const own = await tx.select({ username: users.username }).from(users);
      inserted();
      await held;
      return own;
    });
    await insertedYet;
    expect(await store.select().from(users)).toEqual([]);
    release();
    expect(await writing).toEqual([{ username: 'pending' }]);
    expect(await store.select({ username: users.username }).from(users)).toEqual([{ username: 'pending' }]);
  });

  it('refuses drizzle’s own transaction() inside a write', async () => {
    const store = await openPg();
    await expect(store.write((tx) => tx.transaction(async () => undefined))).rejects.toThrow(NESTED_WRITE_MESSAGE);
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
  it('are each their own, and gone when dropped', async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    expect(a.url).not.toBe(b.url);
    await a.drop();
    await b.drop();
    const admin = new pg.Client({ connectionString: a.url });
    await expect(admin.connect()).rejects.toThrow(/does not exist/);
  });
});
