import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailable } from '../test/postgres.js';
import { resolveMigrationsDir, resolvePgMigrationsDir } from './migrations-dir.js';
import { openStore } from './open-store.js';

const hasPostgres = await postgresAvailable();
const dirs = { sqlite: resolveMigrationsDir(), postgres: resolvePgMigrationsDir() };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'postern-open-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('openStore', () => {
  it('opens the embedded SQLite database under the data dir when no database URL is set', async () => {
    const dir = dataDir();
    const store = await openStore({ dataDir: dir, databaseUrl: undefined }, dirs);
    cleanups.push(() => store.close());
    expect(store.engine).toBe('sqlite');
    expect(existsSync(join(dir, 'postern.db'))).toBe(true);
  });

  it.skipIf(!hasPostgres)('opens PostgreSQL when a database URL is set, and leaves the data dir alone', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const dir = dataDir();
    const store = await openStore({ dataDir: dir, databaseUrl: database.url }, dirs);
    cleanups.push(() => store.close());
    expect(store.engine).toBe('postgres');
    expect(existsSync(join(dir, 'postern.db'))).toBe(false);
  });
});
