import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { BACKUPS_DIR, createBackup, DB_FILE } from './archive.js';

// At boot, before a pending migration changes the database, the gateway backs itself up into <data>/backups/ and
// keeps the newest `keep` of those archives: an upgrade whose migration goes wrong can be rolled back with
// `restore` and the previous release.

const ARCHIVE_NAME = /^postern-\d{8}T\d{6}Z-before-migration-\d+\.tar\.gz$/;

/** How many committed migrations the database has not had yet; 0 for a database that does not exist yet. */
export function countPendingMigrations(dbFile: string, migrationsFolder: string): number {
  if (!existsSync(dbFile)) return 0;
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const hasTable = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'")
      .get();
    // A file without the table is a first boot (an empty file created 0600 by main.ts): nothing to keep.
    if (!hasTable) return 0;
    const last = db
      .prepare('SELECT created_at AS at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1')
      .get() as { at: number | string } | undefined;
    const lastAt = last === undefined ? -1 : Number(last.at);
    // The same rule as drizzle's migrator: every migration newer than the last one applied runs.
    return readMigrationFiles({ migrationsFolder }).filter((migration) => migration.folderMillis > lastAt).length;
  } finally {
    db.close();
  }
}

const stamp = (now: Date): string =>
  now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

/**
 * Backs the data dir up when a migration is pending; returns the archive's path, or null when nothing was pending.
 * Prunes the oldest boot backups beyond `keep` (archives the operator put there under other names are left alone).
 */
export async function backupBeforeMigrations(options: {
  dataDir: string;
  migrationsFolder: string;
  keep: number;
  now?: Date;
}): Promise<string | null> {
  const { dataDir, migrationsFolder, keep } = options;
  const dbFile = join(dataDir, DB_FILE);
  const pending = countPendingMigrations(dbFile, migrationsFolder);
  if (pending === 0) return null;
  const dir = join(dataDir, BACKUPS_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const applied = readMigrationFiles({ migrationsFolder }).length - pending;
  const archive = join(
    dir,
    `postern-${stamp(options.now ?? new Date())}-before-migration-${String(applied + 1).padStart(4, '0')}.tar.gz`,
  );
  await createBackup(dataDir, archive, options.now ? { now: options.now } : {});
  await pruneBootBackups(dir, keep);
  return archive;
}

/** Names sort by time (UTC stamp first), so the oldest are first. */
export async function pruneBootBackups(dir: string, keep: number): Promise<void> {
  const archives = (await readdir(dir)).filter((name) => ARCHIVE_NAME.test(name)).sort();
  for (const name of archives.slice(0, Math.max(0, archives.length - keep))) await rm(join(dir, name), { force: true });
}
