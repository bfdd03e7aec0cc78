import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../harness/ports.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { canRun, SERVER_ENTRY } from '../../apps/server/src/test/requirements.js';

// The built gateway, booting on the database of an older release (every migration but the last), backs the data
// directory up into <data>/backups/ before it migrates. The data plane is off: only the boot is tested.

const MIGRATIONS = fileURLToPath(new URL('../../apps/server/dist/drizzle', import.meta.url));
// The server's own copies of SQLite and drizzle, to make the older database the way that release made it.
const serverRequire = createRequire(fileURLToPath(new URL('../../apps/server/package.json', import.meta.url)));

interface Sqlite {
  prepare(sql: string): { get(): unknown };
  close(): void;
}

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A data dir whose database has every migration but the newest. */
function olderReleaseDataDir(): string {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS, 'meta', '_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  const older = join(dir, 'drizzle-older');
  mkdirSync(join(older, 'meta'), { recursive: true });
  const kept = journal.entries.slice(0, -1);
  for (const entry of kept) copyFileSync(join(MIGRATIONS, `${entry.tag}.sql`), join(older, `${entry.tag}.sql`));
  writeFileSync(join(older, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: kept }));
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  const Database = serverRequire('better-sqlite3') as new (file: string) => Sqlite;
  const { drizzle } = serverRequire('drizzle-orm/better-sqlite3') as { drizzle: (db: Sqlite) => unknown };
  const { migrate } = serverRequire('drizzle-orm/better-sqlite3/migrator') as {
    migrate: (db: unknown, config: { migrationsFolder: string }) => void;
  };
  const sqlite = new Database(join(dataDir, 'postern.db'));
  migrate(drizzle(sqlite), { migrationsFolder: older });
  sqlite.close();
  return dataDir;
}

describe.skipIf(!canRun('server-build'))('boot after an upgrade', () => {
  it('leaves a backup of the data directory behind before migrating the database', async () => {
    dir = mkdtempSync(join(tmpdir(), 'postern-boot-backup-'));
    const dataDir = olderReleaseDataDir();
    const port = await freePort();
    let output = '';
    const child = spawn(process.execPath, [SERVER_ENTRY], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        POSTERN_DATA_DIR: dataDir,
        POSTERN_PORT: String(port),
        POSTERN_ADMIN_PASSWORD: 'boot-backup-password',
        POSTERN_DATAPLANE: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => null))?.ok === true, {
        timeoutMs: 20_000,
        intervalMs: 100,
        what: 'the gateway to boot',
      }).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${output}`);
      });
      const archives = readdirSync(join(dataDir, 'backups'));
      expect(archives).toHaveLength(1);
      expect(archives[0]).toMatch(/^postern-\d{8}T\d{6}Z-before-migration-\d{4}\.tar\.gz$/);
      expect(output).toContain('backed up the data directory before migrating the database');
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  }, 60_000);
});
