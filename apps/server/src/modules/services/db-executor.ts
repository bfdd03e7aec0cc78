import type { RunResult } from 'better-sqlite3';
import type { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core';
import type * as schema from '../../db/schema.js';

/** The database or a transaction on it: helpers that must join the caller's transaction take this. */
export type DbExecutor = BaseSQLiteDatabase<'sync', RunResult, typeof schema>;
