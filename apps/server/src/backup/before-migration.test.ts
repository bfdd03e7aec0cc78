import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, sqliteClientOf } from '../db/client.js';
import { resolveMigrationsDir } from '../db/migrations-dir.js';
import { restoreBackup } from './archive.js';
import { backupBeforeMigrations } from './before-migration.js';

let dir: string;
let dataDir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'postern-boot-backup-'));
  dataDir = join(dir, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  writeFileSync(join(dataDir, 'secret.key'), 'k'.repeat(44), { mode: 0o600 });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A migrations folder holding only the first migration: the database of an older release. */
function firstReleaseMigrations(): string {
  const source = resolveMigrationsDir();
  const target = join(dir, 'drizzle-0000');
  mkdirSync(join(target, 'meta'), { recursive: true });
  copyFileSync(join(source, '0000_init.sql'), join(target, '0000_init.sql'));
  const journal = JSON.parse(readFileSync(join(source, 'meta', '_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  writeFileSync(
    join(target, 'meta', '_journal.json'),
    JSON.stringify({ ...journal, entries: journal.entries.filter((e) => e.tag === '0000_init') }),
  );
  return target;
}

const backupsIn = (data: string): string[] => readdirSync(join(data, 'backups')).sort();
const at = (minute: number): Date => new Date(Date.UTC(2026, 0, 1, 12, minute));

describe('backup before a migration at boot', () => {
  it('leaves an archive of the database as it was before the migration', async () => {
    const old = openSqliteStore(join(dataDir, 'postern.db'), firstReleaseMigrations());
    sqliteClientOf(old).exec("INSERT INTO settings (key, value) VALUES ('marker', 'old release')");
    sqliteClientOf(old).close();

    const archive = await backupBeforeMigrations({
      dataDir,
      migrationsFolder: resolveMigrationsDir(),
      keep: 5,
      now: at(0),
    });
    expect(archive).not.toBeNull();
    expect(backupsIn(dataDir)).toEqual(['postern-20260101T120000Z-before-migration-0002.tar.gz']);
    // The migration then runs; the archive still holds the old schema and data.
    sqliteClientOf(openSqliteStore(join(dataDir, 'postern.db'), resolveMigrationsDir())).close();

    const restored = join(dir, 'restored');
    const manifest = await restoreBackup(archive ?? '', restored);
    expect(manifest.migrations).toBe(1);
    const copy = openSqliteStore(join(restored, 'postern.db'), firstReleaseMigrations());
    expect(sqliteClientOf(copy).prepare("SELECT value FROM settings WHERE key = 'marker'").get()).toEqual({
      value: 'old release',
    });
    sqliteClientOf(copy).close();
  });

  it('takes none on a first boot or when the database is up to date', async () => {
    writeFileSync(join(dataDir, 'postern.db'), '', { mode: 0o600 });
    expect(await backupBeforeMigrations({ dataDir, migrationsFolder: resolveMigrationsDir(), keep: 5 })).toBeNull();
    sqliteClientOf(openSqliteStore(join(dataDir, 'postern.db'), resolveMigrationsDir())).close();
    expect(await backupBeforeMigrations({ dataDir, migrationsFolder: resolveMigrationsDir(), keep: 5 })).toBeNull();
    expect(readdirSync(dataDir)).not.toContain('backups');
  });

  it('keeps the newest N boot backups and never touches other files there', async () => {
    sqliteClientOf(openSqliteStore(join(dataDir, 'postern.db'), firstReleaseMigrations())).close();
    mkdirSync(join(dataDir, 'backups'));
    writeFileSync(join(dataDir, 'backups', 'my-own.tar.gz'), 'kept');
    for (let minute = 0; minute < 4; minute += 1) {
      await backupBeforeMigrations({ dataDir, migrationsFolder: resolveMigrationsDir(), keep: 2, now: at(minute) });
    }
    expect(backupsIn(dataDir)).toEqual([
      'my-own.tar.gz',
      'postern-20260101T120200Z-before-migration-0002.tar.gz',
      'postern-20260101T120300Z-before-migration-0002.tar.gz',
    ]);
  });
});
