import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, sqliteClientOf } from './client.js';
import { resolveMigrationsDir } from './migrations-dir.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'postern-0006-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The committed migrations before `tag`. */
function migrationsBefore(tag: string): string {
  const source = resolveMigrationsDir();
  const target = join(dir, 'before');
  mkdirSync(join(target, 'meta'), { recursive: true });
  const journal = JSON.parse(readFileSync(join(source, 'meta', '_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  const entries = journal.entries.slice(
    0,
    journal.entries.findIndex((e) => e.tag === tag),
  );
  for (const file of readdirSync(source).filter((f) => entries.some((e) => f === `${e.tag}.sql`))) {
    copyFileSync(join(source, file), join(target, file));
  }
  writeFileSync(join(target, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }));
  return target;
}

describe('0006_timestamps_in_code', () => {
  it('keeps every row, and the foreign keys, of a database made before it', async () => {
    const file = join(dir, 'postern.db');
    const old = new Database(file);
    old.pragma('foreign_keys = ON');
    migrate(drizzle(old), { migrationsFolder: migrationsBefore('0006_timestamps_in_code') });
    old.exec(`
      INSERT INTO users (id, username, password_hash) VALUES (1, 'admin', 'h');
      INSERT INTO sessions (id, user_id, expires_at) VALUES ('s', 1, '2030-01-01T00:00:00.000Z');
      INSERT INTO nodes (id, name, address, public_key, private_key_enc) VALUES (2, 'n', '10.44.0.2', 'k', 'x');
      INSERT INTO personal_access_tokens (node_id, name, token_hash) VALUES (2, 't', 'th');
      INSERT INTO domains (id, domain, owner_node_id) VALUES (5, 'a.example.com', 2);
      INSERT INTO certificates (domain_id, state) VALUES (5, 'valid');
      INSERT INTO http_services (node_id, name, backend_host) VALUES (2, 'h', 'b');
      INSERT INTO tcp_services (node_id, name, port, backend_host, backend_port) VALUES (2, 't', 30001, 'b', 22);
    `);
    old.close();

    const store = openSqliteStore(file, resolveMigrationsDir());
    const db = sqliteClientOf(store);
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    expect(
      [
        'users',
        'sessions',
        'nodes',
        'personal_access_tokens',
        'domains',
        'certificates',
        'http_services',
        'tcp_services',
      ].map(count),
    ).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    expect(db.prepare('SELECT owner_node_id AS owner FROM domains').get()).toEqual({ owner: 2 });
    expect(db.pragma('foreign_key_check')).toEqual([]);
    db.exec('DELETE FROM nodes');
    expect(['personal_access_tokens', 'http_services', 'tcp_services'].map(count)).toEqual([0, 0, 0]);
    await store.close();
  });
});
