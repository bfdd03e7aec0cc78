import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, sqliteClientOf } from './client.js';
import { resolveMigrationsDir } from './migrations-dir.js';

// The migration that gave accounts a role (its number changes when branches merge: found by its name). The admin of
// a gateway from before roles must stay able to do everything: it becomes an owner, while the column's default for
// rows made later without a role is the least privileged one.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'postern-accounts-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The committed migrations before the first whose tag ends with `suffix`. */
function migrationsBefore(suffix: string): string {
  const source = resolveMigrationsDir();
  const target = join(dir, 'before');
  mkdirSync(join(target, 'meta'), { recursive: true });
  const journal = JSON.parse(readFileSync(join(source, 'meta', '_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  const index = journal.entries.findIndex((e) => e.tag.endsWith(suffix));
  expect(index).toBeGreaterThan(0);
  const entries = journal.entries.slice(0, index);
  for (const file of readdirSync(source).filter((f) => entries.some((e) => f === `${e.tag}.sql`))) {
    copyFileSync(join(source, file), join(target, file));
  }
  writeFileSync(join(target, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }));
  return target;
}

describe('the accounts migration', () => {
  it('makes the admin of before an owner, keeps its session, and defaults later rows to viewer', async () => {
    const file = join(dir, 'postern.db');
    const old = new Database(file);
    migrate(drizzle(old), { migrationsFolder: migrationsBefore('_accounts') });
    old.exec(`
      INSERT INTO users (id, username, password_hash, created_at, updated_at) VALUES (1, 'admin', 'h', 'x', 'x');
      INSERT INTO sessions (id, user_id, expires_at, created_at, updated_at) VALUES ('s', 1, '2030-01-01', 'x', 'x');
    `);
    old.close();

    const store = openSqliteStore(file, resolveMigrationsDir());
    const db = sqliteClientOf(store);
    expect(db.prepare('SELECT role, enabled, password_sign_in AS pw FROM users').get()).toEqual({
      role: 'owner',
      enabled: 1,
      pw: 1,
    });
    expect(db.prepare('SELECT via FROM sessions').get()).toEqual({ via: 'password' });
    db.exec(`INSERT INTO users (username, password_hash, created_at, updated_at) VALUES ('later', 'h', 'x', 'x')`);
    expect(db.prepare(`SELECT role FROM users WHERE username = 'later'`).get()).toEqual({ role: 'viewer' });
    await store.close();
  });
});
