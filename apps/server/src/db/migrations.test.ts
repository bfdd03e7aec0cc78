import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, sqliteClientOf } from './client.js';
import { resolveMigrationsDir } from './migrations-dir.js';

// An upgrade from a database made by the first release: only 0000_init applied, with rows in it.

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'postern-migrate-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A migrations folder holding only the first migration. */
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

describe('0001_domain_owner', () => {
  it('makes existing domains the admin’s, lets deleted nodes hand theirs back, and disables services on reserved paths', () => {
    const file = join(dir, 'postern.db');
    const old = sqliteClientOf(openSqliteStore(file, firstReleaseMigrations()));
    old.exec(`
      INSERT INTO nodes (id, name, address, public_key, private_key_enc) VALUES (2, 'n', '10.44.0.2', 'k', 'x');
      INSERT INTO domains (domain) VALUES ('old.example.com');
      INSERT INTO http_services (node_id, name, domain, path_location, backend_host) VALUES
        (2, 'login-thief', '', '/api/auth/login', '10.44.0.2'),
        (2, 'acme', 'old.example.com', '/.well-known/acme-challenge', '10.44.0.2'),
        (2, 'api-on-domain', 'old.example.com', '/api', '10.44.0.2'),
        (2, 'apis', '', '/apis', '10.44.0.2');
    `);
    old.close();

    const db = sqliteClientOf(openSqliteStore(file, resolveMigrationsDir()));
    expect(db.prepare('SELECT domain, owner_node_id AS owner FROM domains').all()).toEqual([
      { domain: 'old.example.com', owner: null },
    ]);
    expect(db.prepare('SELECT name, enabled FROM http_services ORDER BY id').all()).toEqual([
      { name: 'login-thief', enabled: 0 },
      { name: 'acme', enabled: 0 },
      { name: 'api-on-domain', enabled: 1 },
      { name: 'apis', enabled: 1 },
    ]);

    db.exec(`INSERT INTO domains (domain, owner_node_id) VALUES ('mine.example.com', 2)`);
    db.exec('DELETE FROM nodes WHERE id = 2');
    expect(db.prepare(`SELECT owner_node_id AS owner FROM domains WHERE domain = 'mine.example.com'`).get()).toEqual({
      owner: null,
    });
    db.close();
  });
});
