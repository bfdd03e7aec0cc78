import { join } from 'node:path';
import { DB_FILE } from '../backup/archive.js';
import type { Config } from '../env.js';
import { openSqliteStore, type Store } from './client.js';
import { openPostgresStore, type PostgresStoreOptions } from './postgres.js';

export interface MigrationsDirs {
  /** SQLite's committed migrations (resolveMigrationsDir()). */
  sqlite: string;
  /** PostgreSQL's (resolvePgMigrationsDir()). */
  postgres: string;
}

/**
 * The store the configuration asks for: PostgreSQL when POSTERN_DATABASE_URL is set (several gateways share it),
 * otherwise the embedded SQLite database at <dataDir>/postern.db. Either way the migrations are applied first.
 */
export async function openStore(
  config: Pick<Config, 'dataDir' | 'databaseUrl'>,
  migrationsDirs: MigrationsDirs,
  postgresOptions: Omit<PostgresStoreOptions, 'migrationsFolder'> = {},
): Promise<Store> {
  if (config.databaseUrl !== undefined) {
    return openPostgresStore(config.databaseUrl, { ...postgresOptions, migrationsFolder: migrationsDirs.postgres });
  }
  return openSqliteStore(join(config.dataDir, DB_FILE), migrationsDirs.sqlite);
}
