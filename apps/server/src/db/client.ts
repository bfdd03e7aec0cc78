import { setImmediate } from 'node:timers';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import type { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core';
import {
  createTransactionGuards,
  NESTED_WRITE_MESSAGE,
  WRITE_SPANNED_IO_MESSAGE,
  type TransactionContext,
  type TransactionKind,
} from './guards.js';
import { toSqliteSql } from './sqlite-sql.js';

export { NESTED_WRITE_MESSAGE, READ_ON_STORE_MESSAGE, TX_CLOSED_MESSAGE, WRITE_SPANNED_IO_MESSAGE } from './guards.js';

/**
 * drizzle's SQLite dialect as an asynchronous database: every query is written once against it and awaited, so the
 * same code runs on the embedded engine (which answers at once: awaiting costs a microtask) and on PostgreSQL.
 */
export type AsyncSqlite = BaseSQLiteDatabase<'async', unknown>;

/** Reads: on the store, or through the `tx` of a transaction. Rows of raw SQL come from `values` (arrays). */
export type ReadDb = Pick<AsyncSqlite, 'select' | 'selectDistinct' | '$count' | '$with' | 'with' | 'values'>;

const READ_METHODS = [
  'select',
  'selectDistinct',
  '$count',
  '$with',
  'with',
  'values',
] as const satisfies readonly (keyof ReadDb)[];

declare const writeTransaction: unique symbol;

/**
 * The transaction of one `store.write`: reads and writes. Only `store.write` hands one out; the store is not one, so
 * a helper that takes `tx: Tx` cannot be given the store (whose reads would not see the transaction's writes on
 * PostgreSQL). A read on the store while a write is open in the same call chain is refused at run time.
 */
export type Tx = ReadDb &
  Pick<AsyncSqlite, 'insert' | 'update' | 'delete' | 'run'> & { readonly [writeTransaction]: true };

export type Engine = 'sqlite' | 'postgres';

/**
 * The shared store: reads straight on `store`, writes inside `store.write(async (tx) => …)`, one transaction each.
 * Writes are serialised (on PostgreSQL across every gateway, by an advisory lock): a check and the write it guards
 * cannot interleave with another write. Inside a write every statement goes through `tx`; a read on the store, a
 * write inside a write, and a `tx` used after its write are refused. A write awaits nothing but its own statements
 * (one that awaits a timer, a file, the network… is rolled back and rejects): it holds the write lock meanwhile.
 */
export type Store = ReadDb & {
  readonly engine: Engine;
  write<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Several reads that must see one moment of the database (no write lands between them), e.g. the desired state.
   * PostgreSQL: a REPEATABLE READ, READ ONLY transaction, which neither waits for writes nor holds them up. SQLite: a
   * read transaction among the writes. The same rules as a write's: read through `tx`, await nothing else.
   */
  snapshot<T>(work: (tx: ReadDb) => Promise<T>): Promise<T>;
  /**
   * A snapshot whose reads may span several turns of the event loop: `work` reads in pages and awaits `pause()` between
   * them, so reading 100,000 rows does not hold every request behind it (the desired state of a full run or a drift
   * check). SQLite: a read transaction on a connection of its own (WAL: writes go on meanwhile and the snapshot keeps
   * its moment; the store's other reads see the latest), one at a time; `pause` is the next turn. PostgreSQL: a
   * `snapshot`, each page a round trip that leaves the event loop free; `pause` awaits nothing.
   */
  pagedSnapshot<T>(work: (tx: ReadDb, pause: () => Promise<void>) => Promise<T>): Promise<T>;
  /**
   * Tells every other gateway on this database that something changed (call it after the write committed).
   * Without a topic: what the gateways serve changed, and every other gateway applies its data plane. With a topic
   * (`ANNOUNCEMENT_TOPIC`, e.g. 'sessions'): only that topic's listeners hear it, with `payload` (short, and never a
   * secret: it travels as a NOTIFY any database session could LISTEN to); the data plane does not apply.
   * PostgreSQL: a NOTIFY; the embedded engine has one gateway, so nothing. Never delivered to the announcing store:
   * the gateway that made the change acts on it itself.
   */
  announce(topic?: string, payload?: string): Promise<void>;
  /** `listener` runs when another gateway announced a data change (or missed ones may have been); returns the stop. */
  onAnnounce(listener: () => void): () => void;
  /**
   * `listener` runs when another gateway announced on `topic`, with its payload ('' when none), or with null when
   * announcements may have been missed (the LISTEN connection was lost and is back): then re-check everything.
   */
  onAnnounce(topic: string, listener: (payload: string | null) => void): () => void;
  close(): Promise<void>;
};

const WRITE_METHODS = ['insert', 'update', 'delete', 'run'] as const satisfies readonly (keyof Tx)[];

function boundMethods(db: AsyncSqlite, names: readonly (keyof AsyncSqlite)[]): Record<string, unknown> {
  const bound: Record<string, unknown> = {};
  for (const name of names) bound[name] = (db[name] as (...args: unknown[]) => unknown).bind(db);
  return bound;
}

/** The read methods of a drizzle database, bound: what the store exposes of it (nothing that writes). */
export function readMethodsOf(db: AsyncSqlite): ReadDb {
  return boundMethods(db, READ_METHODS) as ReadDb;
}

/** What a transaction's work gets: reads and writes, bound; no `transaction` (pass `tx` down instead). */
export function txOf(db: AsyncSqlite): Tx {
  return boundMethods(db, [...READ_METHODS, ...WRITE_METHODS]) as unknown as Tx;
}

/** A topic name: lowercase, short (it travels in every NOTIFY of that topic). */
export const ANNOUNCEMENT_TOPIC = /^[a-z][a-z0-9_.-]{0,31}$/;
/** NOTIFY payloads are limited to 8000 bytes; the envelope around a topic's payload needs some of them. */
export const MAX_ANNOUNCEMENT_PAYLOAD = 4000;

/** Refuses a topic or payload no gateway could receive (a programming error, so it throws). */
export function checkAnnouncement(topic: string | undefined, payload: string | undefined): void {
  if (topic === undefined) {
    if (payload !== undefined) throw new Error('an announcement with a payload needs a topic');
    return;
  }
  if (!ANNOUNCEMENT_TOPIC.test(topic)) throw new Error(`not an announcement topic: ${JSON.stringify(topic)}`);
  if (payload !== undefined && Buffer.byteLength(payload) > MAX_ANNOUNCEMENT_PAYLOAD)
    throw new Error(`announcement payloads are at most ${MAX_ANNOUNCEMENT_PAYLOAD} bytes`);
}

const sqliteClients = new WeakMap<object, Database.Database>();

/** The next turn of the event loop (imported setImmediate: a test's fake timers do not stop a paged read). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Opens (creating if needed) the embedded SQLite database with WAL and foreign keys on, and applies the committed
 * SQL migrations from `migrationsFolder`. Two connections: one writes (the transactions, one at a time), one reads
 * (the store's reads, `query_only`). In WAL mode the reading one sees committed data only, as another connection of
 * PostgreSQL does: a read never sees a transaction still in progress, nor one that is rolled back.
 */
export function openSqliteStore(file: string, migrationsFolder: string): Store {
  const writer = new Database(file);
  writer.pragma('journal_mode = WAL');
  writer.pragma('synchronous = NORMAL');
  writer.pragma('foreign_keys = ON');
  writer.pragma('busy_timeout = 5000');
  migrate(drizzle(writer), { migrationsFolder });
  const reader = new Database(file);
  reader.pragma('busy_timeout = 5000');
  reader.pragma('query_only = ON');

  // The paged snapshots' connection: a read transaction left open across turns on `reader` would show the store's other
  // reads an old moment, and on `writer` would hold every write up.
  const pager = new Database(file);
  pager.pragma('busy_timeout = 5000');
  pager.pragma('query_only = ON');
  const pagerDb = readMethodsOf(drizzle({ client: withStatementCache(pager) }) as unknown as AsyncSqlite);
  const pagerFrame = { begin: pager.prepare('BEGIN'), commit: pager.prepare('COMMIT') };
  let pagerTail: Promise<unknown> = Promise.resolve();
  const pagedSnapshot = <T>(work: (tx: ReadDb, pause: () => Promise<void>) => Promise<T>): Promise<T> => {
    const run = async (): Promise<T> => {
      // Deferred: the snapshot is the moment of the first read, kept until COMMIT.
      pagerFrame.begin.run();
      try {
        return await work(pagerDb, nextTurn);
      } finally {
        if (pager.inTransaction) pagerFrame.commit.run();
      }
    };
    const result = pagerTail.then(run, run);
    pagerTail = result.catch(() => undefined);
    return result;
  };

  const guards = createTransactionGuards<Database.Database>();
  // The synchronous driver answers every query at once; code awaits it as if it were asynchronous (`await` of a value
  // is the value), which is what lets one query code serve both engines.
  const readDb = drizzle({ client: withStatementCache(reader), logger: guards.storeLogger }) as unknown as AsyncSqlite;
  const tx = txOf(drizzle({ client: withStatementCache(writer), logger: guards.txLogger }) as unknown as AsyncSqlite);
  let tail: Promise<unknown> = Promise.resolve();
  // Prepared once: a transaction's frame costs four statements, each parsed anew by exec().
  const frame = {
    write: writer.prepare('BEGIN IMMEDIATE'),
    snapshot: writer.prepare('BEGIN'),
    commit: writer.prepare('COMMIT'),
    rollback: writer.prepare('ROLLBACK'),
    queryOnly: writer.prepare('PRAGMA query_only = ON'),
    writable: writer.prepare('PRAGMA query_only = OFF'),
  };

  const finish = (context: TransactionContext<Database.Database>, isCommit: boolean): void => {
    context.open = false;
    try {
      if (isCommit) frame.commit.run();
    } finally {
      if (writer.inTransaction) frame.rollback.run();
      if (context.kind === 'snapshot') frame.writable.run();
    }
  };

  /** One transaction at a time on the writing connection, each settled within the event loop's turn it began in. */
  const transaction = <T>(kind: TransactionKind, work: () => Promise<T>): Promise<T> => {
    if (guards.current()) return Promise.reject(new Error(NESTED_WRITE_MESSAGE));
    // Made here, so its stack names the caller of the write that awaited something else.
    const refusal = new Error(WRITE_SPANNED_IO_MESSAGE);
    const run = async (): Promise<T> => {
      const context: TransactionContext<Database.Database> = { open: true, kind, connection: writer, pending: 0 };
      try {
        // A snapshot cannot write, as PostgreSQL's READ ONLY transaction cannot.
        if (kind === 'snapshot') frame.queryOnly.run();
        frame[kind].run();
        const result = await guards.run(context, work, refusal);
        finish(context, true);
        return result;
      } catch (error) {
        finish(context, false);
        throw error;
      }
    };
    const result = tail.then(run, run);
    tail = result.catch(() => undefined);
    return result;
  };

  const store: Store = {
    ...readMethodsOf(readDb),
    engine: 'sqlite',
    write: (work) => transaction('write', () => work(tx)),
    snapshot: (work) => transaction('snapshot', () => work(tx)),
    pagedSnapshot,
    // Checked as on PostgreSQL, so a bad topic fails in the tests of either engine.
    announce: async (topic?: string, payload?: string) => checkAnnouncement(topic, payload),
    onAnnounce: () => () => undefined,
    close: async () => {
      await tail;
      await pagerTail;
      pager.close();
      reader.close();
      writer.close();
    },
  };
  sqliteClients.set(store, writer);
  return store;
}

/** Statements kept per connection (least recently used go first): a few hundred distinct texts cover the app's. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * A connection as drizzle sees it, its statements kept by SQL text: drizzle builds a query's text anew at each call,
 * and SQLite would parse and plan the same text again each time (a tenth of the CPU of a change through the API,
 * bench/README.md "propagation.ts"). Bounded, since some texts carry the length of a list. A statement's text is
 * given to SQLite as `toSqliteSql` writes it (sqlite-sql.ts: a `limit ?` would be planned again at every run).
 */
function withStatementCache(db: Database.Database): Database.Database {
  const cache = new Map<string, Database.Statement>();
  const prepare = (source: string): Database.Statement => {
    let statement = cache.get(source);
    if (statement === undefined) {
      statement = db.prepare(toSqliteSql(source));
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    } else {
      cache.delete(source);
      // drizzle switches a statement to rows as arrays when it maps them itself; a fresh one answers objects.
      if (statement.reader) statement.raw(false);
    }
    cache.set(source, statement);
    return statement;
  };
  // drizzle's session calls nothing else on the connection (transactions are the store's own, above).
  return { prepare } as unknown as Database.Database;
}

/** The writing SQLite connection under a store, for the jobs that are SQLite's own (tests, benches, file checks). */
export function sqliteClientOf(store: Store): Database.Database {
  const client = sqliteClients.get(store);
  if (!client) throw new Error('not an embedded SQLite store');
  return client;
}
