import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { drizzle as nodePostgres } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as sqliteProxy, type AsyncRemoteCallback } from 'drizzle-orm/sqlite-proxy';
import pg from 'pg';
import { checkAnnouncement, NESTED_WRITE_MESSAGE, type Db, type Store } from './client.js';
import { DATABASE_UNAVAILABLE } from './errors.js';
import { resolvePgMigrationsDir } from './migrations-dir.js';
import { toPostgresSql } from './postgres-sql.js';
import * as schema from './schema.js';

// The store on PostgreSQL, for several gateways sharing one database. The query code is the SQLite code: a drizzle
// `sqlite-proxy` database whose callback runs drizzle's SQLite-dialect SQL on PostgreSQL (postgres-sql.ts numbers
// the placeholders). What comes back is made to look like SQLite's answers: 64-bit integers and numerics as numbers,
// booleans as 1/0 (what drizzle's SQLite boolean columns read), constraint errors with SQLite's codes.

export interface PostgresStoreOptions {
  /** The committed PostgreSQL migrations (default: drizzle-pg beside the sources or the bundle). */
  migrationsFolder?: string;
  /** Connections in the pool (default 10). */
  maxConnections?: number;
  /** An idle pooled connection failed (the database restarted, say); the pool replaces it. Default: ignored. */
  onIdleError?: (error: Error) => void;
}

/** Key of the session-level advisory lock held while migrations run, so gateways starting together migrate once. */
const MIGRATION_LOCK = 0x706f7374; // 'post'
/** Key of the transaction-level advisory lock every write takes (released at COMMIT/ROLLBACK). */
const WRITE_LOCK = 0x77726974; // 'writ'

const { types } = pg;
const toNumber = (value: string): number => Number(value);
const toSqliteBoolean = (value: string): number => (value === 't' ? 1 : 0);

/** pg's own parsers, but counts, sums and bigint columns as numbers and booleans as SQLite's 1/0. */
const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid, format) => {
    if (oid === types.builtins.INT8 || oid === types.builtins.NUMERIC) return toNumber;
    if (oid === types.builtins.BOOL) return toSqliteBoolean;
    return types.getTypeParser(oid, format) as unknown;
  }) as typeof types.getTypeParser,
};

/** PostgreSQL's SQLSTATE for a constraint failure → the code better-sqlite3 gives it (db/errors.ts). */
const SQLITE_CODES: Record<string, string> = {
  '23505': 'SQLITE_CONSTRAINT_UNIQUE',
  '23503': 'SQLITE_CONSTRAINT_FOREIGNKEY',
  '23502': 'SQLITE_CONSTRAINT_NOTNULL',
  '23514': 'SQLITE_CONSTRAINT_CHECK',
};

/** Errors of the connection rather than the query: the server is down, restarting, or unreachable. */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
function isConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // SQLSTATE class 08 (connection exception) and 57P (the server shutting down or starting up).
    return CONNECTION_ERRNOS.has(code) || code.startsWith('08') || code.startsWith('57P');
  }
  return /^Connection terminated|timeout exceeded when trying to connect|is not queryable/.test(error.message);
}

function asUnavailable(error: unknown): Error {
  const cause = error instanceof Error ? error : new Error(String(error));
  return Object.assign(new Error('the database does not answer', { cause }), { code: DATABASE_UNAVAILABLE });
}

function asSqliteError(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  if (isConnectionError(error)) return asUnavailable(error);
  const sqlstate = (error as { code?: unknown }).code;
  const code = typeof sqlstate === 'string' ? SQLITE_CODES[sqlstate] : undefined;
  if (code === undefined) return error;
  return Object.assign(new Error(error.message, { cause: error }), { code, sqlstate });
}

/**
 * Raw `db.all(sql…)` / `db.get(sql…)` answer objects keyed by column name on SQLite, while built queries read rows
 * as arrays; the proxy's callback cannot tell them apart, so the store marks the raw calls.
 */
const objectRows = new AsyncLocalStorage<true>();

type Queryable = Pick<pg.PoolClient, 'query'>;

function proxyDb(target: Queryable): Db {
  const callback: AsyncRemoteCallback = async (text, params, method) => {
    const values: unknown[] = params.map((value: unknown) => (value === undefined ? null : value));
    const query = { text: toPostgresSql(text), values };
    // sqlite-proxy reads `get`'s answer as the row itself (undefined when there is none); `run` answers SQLite's
    // `changes` too, for code that counts what it touched.
    let answer: { rows: unknown; changes?: number };
    try {
      if (method === 'run') {
        const result = await target.query(query);
        answer = { rows: [], changes: result.rowCount ?? 0 };
      } else {
        const objects = method !== 'values' && objectRows.getStore() === true;
        const { rows } = objects
          ? await target.query<Record<string, unknown>>(query)
          : await target.query<unknown[]>({ ...query, rowMode: 'array' });
        answer = { rows: method === 'get' ? rows[0] : rows };
      }
    } catch (error) {
      throw asSqliteError(error);
    }
    return answer as { rows: unknown[] };
  };
  const db = sqliteProxy(callback, { schema }) as unknown as Db;
  // drizzle's asynchronous sessions wrap a failed query's error in one whose message lists the statement's parameters
  // (password hashes, ciphertexts: nothing for a log). The embedded engine throws the driver's error itself; so does
  // this one. The cache hook it goes through is internal to drizzle: the error-code case in postgres.test.ts guards it.
  type Prepared = { queryWithCache: (text: string, params: unknown[], query: () => Promise<unknown>) => unknown };
  const session = (db as unknown as { session: { prepareQuery: (...args: unknown[]) => Prepared } }).session;
  const prepareQuery = session.prepareQuery.bind(session);
  session.prepareQuery = (...args) => {
    const prepared = prepareQuery(...args);
    prepared.queryWithCache = (_text, _params, query) => query();
    return prepared;
  };
  // The raw query runs when awaited, so the mark goes on its execution, not on building it.
  const marked = <R extends { execute: () => Promise<unknown> }>(raw: R): R => {
    const execute = raw.execute.bind(raw);
    raw.execute = () => objectRows.run(true, execute);
    return raw;
  };
  const rawAll = db.all.bind(db);
  const rawGet = db.get.bind(db);
  const all: Db['all'] = (query) => marked(rawAll(query));
  const get: Db['get'] = (query) => marked(rawGet(query));
  return Object.assign(db, { all, get });
}

const ANNOUNCE_CHANNEL = 'postern_changes';
const CONNECT_TIMEOUT_MS = 5000;
const RELISTEN_FIRST_MS = 500;
const RELISTEN_MAX_MS = 30_000;

type TopicListener = (payload: string | null) => void;

/**
 * What travels on the channel: a data change is the announcer's instance id alone (the format gateways before topics
 * sent and read, so a gateway of either version applies the other's changes); a topic's is a JSON envelope.
 */
interface Envelope {
  from: string;
  topic: string | null;
  payload: string;
}

function encodeEnvelope(from: string, topic: string | undefined, payload: string | undefined): string {
  return topic === undefined ? from : JSON.stringify({ from, topic, payload: payload ?? '' });
}

function decodeEnvelope(text: string): Envelope | null {
  if (!text.startsWith('{')) return { from: text, topic: null, payload: '' };
  try {
    const value = JSON.parse(text) as Partial<Envelope>;
    if (typeof value.from !== 'string' || typeof value.topic !== 'string') return null;
    return { from: value.from, topic: value.topic, payload: typeof value.payload === 'string' ? value.payload : '' };
  } catch {
    return null;
  }
}

/**
 * One connection per store LISTENs for other gateways' announcements, opened with the first subscriber. A lost
 * connection is re-opened with back-off; once it is back, subscribers are called once (topic subscribers with null),
 * since announcements made meanwhile were missed. Each store's own announcements carry its instance id and are not
 * delivered to it.
 */
function listenForAnnouncements(url: string, onError: ((error: Error) => void) | undefined) {
  const instance = randomUUID();
  const listeners = new Set<() => void>();
  const topics = new Map<string, Set<TopicListener>>();
  let client: pg.Client | null = null;
  let isStopped = false;
  let delayMs = RELISTEN_FIRST_MS;
  let retry: NodeJS.Timeout | null = null;
  // One listener failing must not keep the others from hearing it, nor reach the connection's event handler.
  const safely = (call: () => void): void => {
    try {
      call();
    } catch (error) {
      if (error instanceof Error) onError?.(error);
    }
  };
  const deliver = (envelope: Envelope): void => {
    if (envelope.topic === null) for (const listener of listeners) safely(listener);
    else for (const listener of topics.get(envelope.topic) ?? []) safely(() => listener(envelope.payload));
  };
  const deliverMissed = (): void => {
    for (const listener of listeners) safely(listener);
    for (const set of topics.values()) for (const listener of set) safely(() => listener(null));
  };

  async function connect(isReconnect: boolean): Promise<void> {
    const next = new pg.Client({ connectionString: url, types: typeParsers });
    client = next;
    next.on('notification', (message) => {
      if (message.channel !== ANNOUNCE_CHANNEL) return;
      const envelope = decodeEnvelope(message.payload ?? '');
      if (envelope && envelope.from !== instance) deliver(envelope);
    });
    next.on('error', (error) => {
      onError?.(error);
      lost(next);
    });
    next.on('end', () => {
      lost(next);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${ANNOUNCE_CHANNEL}`);
      delayMs = RELISTEN_FIRST_MS;
      if (isReconnect) deliverMissed();
    } catch (error) {
      if (error instanceof Error) onError?.(error);
      lost(next);
    }
  }

  function lost(which: pg.Client): void {
    if (client !== which || isStopped) return;
    client = null;
    which.end().catch(() => undefined);
    retry = setTimeout(() => {
      retry = null;
      if (!isStopped) void connect(true);
    }, delayMs);
    retry.unref();
    delayMs = Math.min(delayMs * 2, RELISTEN_MAX_MS);
  }

  const ensureListening = (): void => {
    if (client === null && retry === null && !isStopped) void connect(false);
  };

  return {
    instance,
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      ensureListening();
      return () => {
        listeners.delete(listener);
      };
    },
    subscribeTopic(topic: string, listener: TopicListener): () => void {
      checkAnnouncement(topic, undefined);
      const set = topics.get(topic) ?? new Set<TopicListener>();
      topics.set(topic, set);
      set.add(listener);
      ensureListening();
      return () => {
        set.delete(listener);
      };
    },
    async stop(): Promise<void> {
      isStopped = true;
      if (retry) clearTimeout(retry);
      const open = client;
      client = null;
      await open?.end().catch(() => undefined);
    },
  };
}

/** Refuses anything but postgres:// and postgresql:// URLs, without repeating the URL (it may hold a password). */
export function assertPostgresUrl(url: string): void {
  let scheme: string;
  try {
    scheme = new URL(url).protocol;
  } catch {
    throw new Error('the PostgreSQL connection URL is not a valid URL');
  }
  if (scheme !== 'postgres:' && scheme !== 'postgresql:') {
    throw new Error('the PostgreSQL connection URL must start with postgres:// or postgresql://');
  }
}

async function applyMigrations(pool: pg.Pool, migrationsFolder: string): Promise<void> {
  const client = await pool.connect();
  // pg-pool listens for errors of idle connections only: one lost while it is held must not crash the process (the
  // failed query rejects and the boot stops with that error).
  const ignore = (): void => undefined;
  client.on('error', ignore);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrate(nodePostgres({ client }), { migrationsFolder });
  } finally {
    // Ending the session releases the advisory lock whatever happened.
    client.release(true);
    client.off('error', ignore);
  }
}

/**
 * Connects to PostgreSQL at `url` (a secret: never logged nor put in an error) and applies the committed migrations
 * under an advisory lock; several gateways may open the same database at once.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  assertPostgresUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    types: typeParsers,
    // A database that does not answer must fail a request in seconds (503), not hold it.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  pool.on('error', (error) => options.onIdleError?.(error));
  try {
    await applyMigrations(pool, options.migrationsFolder ?? resolvePgMigrationsDir());
  } catch (error) {
    await pool.end();
    throw error;
  }

  const db = proxyDb(pool);
  const inWrite = new AsyncLocalStorage<true>();
  const refuseNested = (): Promise<never> => Promise.reject(new Error(NESTED_WRITE_MESSAGE));

  const write = async <T>(work: (tx: Db) => Promise<T>): Promise<T> => {
    if (inWrite.getStore()) return refuseNested();
    const client = await pool.connect().catch((error: unknown) => {
      throw asUnavailable(error);
    });
    let healthy = true;
    // pg-pool listens for a connection's errors only while it is idle: one that fails while checked out (the
    // database stopped between two queries of this transaction) would emit an unhandled 'error' and end the process.
    const onConnectionError = (): void => {
      healthy = false;
    };
    client.on('error', onConnectionError);
    try {
      await client.query('BEGIN');
      // One writer at a time across every gateway, as on the embedded engine: a check and the write it guards
      // (the next free address, a quota, a free path) cannot interleave with another gateway's.
      await client.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK]);
      // drizzle's own transaction() would send BEGIN on this client again: refused like a nested write.
      const tx = Object.assign(proxyDb(client), { transaction: refuseNested });
      const result = await inWrite.run(true, () => work(tx));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch {
        healthy = false;
      }
      if (error instanceof Error && isConnectionError(error)) throw asUnavailable(error);
      throw error;
    } finally {
      // release() puts the pool's own listener back before this one goes.
      client.release(!healthy);
      client.removeListener('error', onConnectionError);
    }
  };

  const announcements = listenForAnnouncements(url, options.onIdleError);
  return Object.assign(db, {
    engine: 'postgres' as const,
    write,
    announce: async (topic?: string, payload?: string) => {
      checkAnnouncement(topic, payload);
      const text = encodeEnvelope(announcements.instance, topic, payload);
      await pool.query('SELECT pg_notify($1, $2)', [ANNOUNCE_CHANNEL, text]);
    },
    onAnnounce: (first: string | (() => void), second?: TopicListener) =>
      typeof first === 'string'
        ? announcements.subscribeTopic(first, second ?? (() => undefined))
        : announcements.subscribe(first),
    close: async () => {
      await announcements.stop();
      await pool.end();
    },
  });
}
