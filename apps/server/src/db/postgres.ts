import { randomUUID } from 'node:crypto';
import { DrizzleQueryError } from 'drizzle-orm';
import { drizzle as nodePostgres } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as sqliteProxy, type AsyncRemoteCallback } from 'drizzle-orm/sqlite-proxy';
import pg from 'pg';
import { checkAnnouncement, readMethodsOf, txOf, type AsyncSqlite, type Store } from './client.js';
import { DATABASE_UNAVAILABLE } from './errors.js';
import {
  createTransactionGuards,
  NESTED_WRITE_MESSAGE,
  statementOf,
  TX_CLOSED_MESSAGE,
  WRITE_SPANNED_IO_MESSAGE,
  type TransactionContext,
  type TransactionKind,
} from './guards.js';
import { resolvePgMigrationsDir } from './migrations-dir.js';
import { toPostgresSql } from './postgres-sql.js';

// The store on PostgreSQL, for several gateways sharing one database. The query code is the SQLite code, run through
// drizzle's `sqlite-proxy` driver: its documented callback gets each statement drizzle's SQLite dialect built (standard
// SQL but for the placeholders, which postgres-sql.ts numbers) and answers rows as arrays. What comes back is made to
// look like SQLite's answers: 64-bit integers and numerics as numbers, booleans as 1/0 (what drizzle's SQLite boolean
// columns read), constraint errors with SQLite's codes. Nothing of drizzle's is patched: the callback and the
// `logger` hook (guards.ts) are the whole contact surface; why this design and not drizzle's PostgreSQL dialect:
// docs/ARCHITECTURE.md, "Data layer".

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

/**
 * A write's first round trip: one writer at a time across every gateway, as on the embedded engine, so a check and
 * the write it guards (the next free address, a quota, a free path) cannot interleave with another gateway's. Both
 * statements in one simple-protocol message: one round trip instead of two.
 */
const BEGIN_WRITE = `BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK})`;
/** A snapshot sees one moment of the database for all its reads and takes no lock: writes go on meanwhile. */
const BEGIN_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY';

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
 * What a transaction rejects with: the error of the statement itself. drizzle's asynchronous drivers wrap a failed
 * statement's error in a DrizzleQueryError whose message lists the parameters (password hashes, ciphertexts: nothing
 * for a log); the embedded engine throws the driver's error itself, and so does a transaction here. A read outside a
 * transaction still rejects with drizzle's wrapper: the logger's error serializer (http/logger.ts) drops its
 * parameters, and db/errors.ts finds the code along the cause chain.
 */
function statementError(error: unknown): Error {
  const own = error instanceof DrizzleQueryError && error.cause instanceof Error ? error.cause : error;
  if (!(own instanceof Error)) return new Error(String(own));
  return isConnectionError(own) ? asUnavailable(own) : own;
}

type Queryable = Pick<pg.PoolClient, 'query'>;

/** Runs one statement of drizzle's SQLite dialect on PostgreSQL and answers as sqlite-proxy's callback must. */
async function runStatement(target: Queryable, text: string, params: unknown[], method: string) {
  const values: unknown[] = params.map((value: unknown) => (value === undefined ? null : value));
  const query = { text: toPostgresSql(text), values };
  try {
    if (method === 'run') {
      await target.query(query);
      return { rows: [] };
    }
    const { rows } = await target.query<unknown[]>({ ...query, rowMode: 'array' });
    // sqlite-proxy reads `get`'s answer as the row itself (undefined when there is none).
    return { rows: method === 'get' ? (rows[0] as unknown[]) : rows };
  } catch (error) {
    throw asSqliteError(error);
  }
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

  const guards = createTransactionGuards<pg.PoolClient>();
  // The store's reads take any pooled connection; a transaction's statements go to its own, found from the context
  // the statement runs in (the guard has refused one outside an open transaction before this runs).
  const onPool: AsyncRemoteCallback = (text, params, method) => runStatement(pool, text, params, method);
  const inTransaction: AsyncRemoteCallback = async (text, params, method) => {
    const context = guards.current();
    if (!context) throw new Error(TX_CLOSED_MESSAGE);
    // Counted, so the guard tells a transaction waiting for its statement from one waiting for something else.
    return statementOf(context, () => runStatement(context.connection, text, params, method));
  };
  const readDb: AsyncSqlite = sqliteProxy(onPool, { logger: guards.storeLogger });
  const tx = txOf(sqliteProxy(inTransaction, { logger: guards.txLogger }));

  const transaction = async <T>(kind: TransactionKind, work: () => Promise<T>): Promise<T> => {
    if (guards.current()) throw new Error(NESTED_WRITE_MESSAGE);
    // Made here, so its stack names the caller of the write that awaited something else.
    const refusal = new Error(WRITE_SPANNED_IO_MESSAGE);
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
    const context: TransactionContext<pg.PoolClient> = { open: true, kind, connection: client, pending: 0 };
    try {
      await client.query(kind === 'write' ? BEGIN_WRITE : BEGIN_SNAPSHOT);
      const result = await guards.run(context, work, refusal);
      context.open = false;
      await client.query('COMMIT');
      return result;
    } catch (error) {
      context.open = false;
      try {
        await client.query('ROLLBACK');
      } catch {
        healthy = false;
      }
      throw statementError(error);
    } finally {
      // release() puts the pool's own listener back before this one goes.
      client.release(!healthy);
      client.removeListener('error', onConnectionError);
    }
  };

  const announcements = listenForAnnouncements(url, options.onIdleError);
  const store: Store = {
    ...readMethodsOf(readDb),
    engine: 'postgres',
    write: (work) => transaction('write', () => work(tx)),
    snapshot: (work) => transaction('snapshot', () => work(tx)),
    // Each page is a round trip, which leaves the event loop free: nothing more to give back between pages.
    pagedSnapshot: (work) => transaction('snapshot', () => work(tx, () => Promise.resolve())),
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
  };
  return store;
}
