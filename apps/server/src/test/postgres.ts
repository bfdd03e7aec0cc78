import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { resolvePgMigrationsDir } from '../db/migrations-dir.js';
import { openPostgresStore } from '../db/postgres.js';
import { isRequired } from './requirements.js';

// Each test gets a database of its own on the machine's PostgreSQL (scripts/lib/postgres.sh starts it and makes the
// role), cloned from a template migrated once per set of migrations: a clone takes milliseconds, migrating seconds.
// Loopback only. The databases use the C locale: text sorts by bytes and lower() folds ASCII only, as on SQLite.

export const ADMIN_URL =
  // eslint-disable-next-line no-restricted-properties -- set by scripts/lib/postgres.sh; tests only
  process.env.POSTERN_TEST_DATABASE_URL ?? 'postgres://postern_test:postern_test@127.0.0.1:5432/postgres';
const TEMPLATE_LOCK = 0x74706c; // 'tpl'

function urlOf(database: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

let available: Promise<boolean> | undefined;

/**
 * Whether the test PostgreSQL answers. Where it was started (scripts/lib/postgres.sh sets
 * POSTERN_TEST_POSTGRES=required) or POSTERN_TEST_REQUIRE names it (src/test/requirements.ts), an unreachable server
 * is an error, not a skip; elsewhere, a machine without it skips the PostgreSQL tests.
 */
export function postgresAvailable(): Promise<boolean> {
  available ??= withAdmin(async () => true).catch((error: unknown) => {
    // eslint-disable-next-line no-restricted-properties -- set by scripts/lib/postgres.sh; tests only
    if (process.env.POSTERN_TEST_POSTGRES === 'required' || isRequired('postgres')) throw error;
    return false;
  });
  return available;
}

/** The template's name changes with the migrations, so an edited migration never meets a stale template. */
function templateName(): string {
  const dir = resolvePgMigrationsDir();
  const hash = createHash('sha256');
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()) {
    hash.update(file).update(readFileSync(join(dir, file)));
  }
  hash.update(readFileSync(join(dir, 'meta', '_journal.json')));
  return `postern_tpl_${hash.digest('hex').slice(0, 16)}`;
}

let template: Promise<string> | undefined;

function migratedTemplate(): Promise<string> {
  template ??= withAdmin(async (admin) => {
    const name = templateName();
    // Test files run in parallel workers: one builds the template, the others wait for it.
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      // Built under another name and renamed when complete: a run that dies half-way leaves no broken template.
      const building = `${name}_building`;
      await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${building}" TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`);
      const store = await openPostgresStore(urlOf(building), { maxConnections: 1 });
      await store.close();
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    }
    await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    return name;
  });
  return template;
}

export interface TestDatabase {
  /** Connection URL of the new database (holds the test role's password; loopback only). */
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh database of its own: migrated (a clone of the template), or `{ migrated: false }` empty, for tests of the
 * migrations themselves. Always `drop()` it (in afterEach / a finally).
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const source = options.migrated === false ? 'template0' : await migratedTemplate();
  const name = `postern_test_${process.pid}_${randomBytes(6).toString('hex')}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${source}" ENCODING 'UTF8' LOCALE 'C'`));
  return {
    url: urlOf(name),
    drop: async () => {
      await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}
