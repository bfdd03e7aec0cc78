import { AsyncLocalStorage } from 'node:async_hooks';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import type { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core';
import * as schema from './schema.js';

/**
 * The query handle every module writes its queries against: drizzle's SQLite dialect, typed as an asynchronous
 * database so the same code runs on an engine that answers over the network (PostgreSQL for several gateways).
 * On the embedded engine the answers are there at once; awaiting them costs a microtask.
 */
export type Db = BaseSQLiteDatabase<'async', unknown, typeof schema>;

/** What may run outside a transaction: reads. Every write goes through `Store.write`. */
export type ReadDb = Omit<Db, 'insert' | 'update' | 'delete' | 'run' | 'transaction' | 'batch'>;

export type Engine = 'sqlite' | 'postgres';

/**
 * The shared store: reads straight on `store`, writes inside `store.write(async (tx) => …)`, one transaction each.
 * Writes are serialised on the embedded engine (one writer; a write from elsewhere can never join a transaction in
 * flight) and run as real transactions on PostgreSQL. A write inside a write is refused: pass `tx` down instead.
 */
export type Store = ReadDb & {
  readonly engine: Engine;
  write<T>(work: (tx: Db) => Promise<T>): Promise<T>;
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

export const NESTED_WRITE_MESSAGE = 'store.write called inside store.write: pass the transaction down instead';

/**
 * Opens (creating if needed) the embedded SQLite database with WAL and foreign keys on, and applies the committed
 * SQL migrations from `migrationsFolder`.
 */
export function openSqliteStore(file: string, migrationsFolder: string): Store {
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const sync = drizzle(sqlite, { schema });
  migrate(sync, { migrationsFolder });
  // The synchronous driver answers every query at once; code awaits it as if it were asynchronous (`await` of a value
  // is the value), which is what lets one query code serve both engines.
  const db = sync as unknown as Db;
  const inWrite = new AsyncLocalStorage<true>();
  let tail: Promise<unknown> = Promise.resolve();

  const write = <T>(work: (tx: Db) => Promise<T>): Promise<T> => {
    if (inWrite.getStore()) return Promise.reject(new Error(NESTED_WRITE_MESSAGE));
    const run = async (): Promise<T> => {
      sqlite.exec('BEGIN IMMEDIATE');
      try {
        const result = await inWrite.run(true, () => work(db));
        sqlite.exec('COMMIT');
        return result;
      } catch (error) {
        if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
        throw error;
      }
    };
    const result = tail.then(run, run);
    tail = result.catch(() => undefined);
    return result;
  };

  return Object.assign(db, {
    engine: 'sqlite' as const,
    write,
    // Checked as on PostgreSQL, so a bad topic fails in the tests of either engine.
    announce: async (topic?: string, payload?: string) => checkAnnouncement(topic, payload),
    onAnnounce: () => () => undefined,
    close: async () => {
      await tail;
      sqlite.close();
    },
  });
}

/** The SQLite connection under a store, for the few jobs that are SQLite's own (online backup, file checks). */
export function sqliteClientOf(store: Store): Database.Database {
  if (store.engine !== 'sqlite') throw new Error('not an embedded SQLite store');
  return (store as unknown as { $client: Database.Database }).$client;
}
