import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, sqliteClientOf, type Store } from './client.js';
import { resolveMigrationsDir } from './migrations-dir.js';
import { narrowByAddressText, narrowByText } from './service-search.js';

// The trigram search indexes (drizzle/0020_services_search.sql) are kept by triggers on the services' tables. A
// later migration that rebuilds one of those tables (drizzle-kit's "create new, copy, drop, rename" for some column
// changes) drops its triggers with it, and searches would then miss new and changed services: this file fails first.

let dir: string;
let store: Store;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'postern-search-'));
  store = openSqliteStore(join(dir, 'postern.db'), resolveMigrationsDir());
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the services search indexes', () => {
  it('have their triggers after every migration and agree with the tables after inserts, updates and deletes', () => {
    const db = sqliteClientOf(store);
    const triggers = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%services_search_%' ORDER BY name")
      .pluck()
      .all();
    expect(triggers).toEqual(
      ['http', 'tcp'].flatMap((type) => ['delete', 'insert', 'update'].map((op) => `${type}_services_search_${op}`)),
    );
    db.exec(`
      INSERT INTO nodes (id, name, address, public_key, private_key_enc) VALUES (2, 'n', '10.44.0.2', 'k', 'x');
      INSERT INTO http_services (node_id, name, domain, path_location, backend_host) VALUES
        (2, 'Grafana', 'metrics.example.com', '/grafana', 'h'), (2, 'wiki', '', '/wiki', 'h');
      INSERT INTO tcp_services (node_id, name, port, backend_host, backend_port) VALUES (2, 'mqtt', 30083, 'h', 1883);
      UPDATE http_services SET name = 'Dashboards', path_location = '/boards' WHERE name = 'Grafana';
      UPDATE tcp_services SET port = 30084;
      DELETE FROM http_services WHERE name = 'wiki';
    `);
    // FTS5's own check: the index holds exactly what the content tables hold.
    db.exec(`INSERT INTO http_services_search (http_services_search) VALUES ('integrity-check')`);
    db.exec(`INSERT INTO tcp_services_search (tcp_services_search) VALUES ('integrity-check')`);
    const ids = (table: string, text: string) =>
      db.prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ?`).pluck().all(`"${text}"`);
    expect(ids('http_services_search', 'BOARDS')).toHaveLength(1);
    expect(ids('http_services_search', 'grafana')).toEqual([]);
    expect(ids('http_services_search', 'wiki')).toEqual([]);
    expect(ids('tcp_services_search', '30084')).toHaveLength(1);
  });

  it('narrows only where a match is certain to hold the text: 3 characters or more, outside the fixed address texts', () => {
    expect(narrowByText('sqlite', 'ab')).toEqual({ http: undefined, tcp: undefined });
    expect(narrowByText('postgres', 'grafana')).toEqual({ http: undefined, tcp: undefined });
    expect(narrowByText('sqlite', 'gra').http).toBeDefined();
    const fixed = ['https', 'tcp', 'udp', 'gw.example.test', '443', '8443'];
    // Every part lies in a fixed text (scheme, the gateway's host, its port): any service's address may hold it.
    expect(narrowByAddressText('sqlite', 'https://gw.example.test:8443/', fixed).http).toBeUndefined();
    expect(narrowByAddressText('sqlite', 'ttps://gw.exam', fixed).http).toBeUndefined();
    // The domain part narrows; the scheme and port around it do not stop it.
    expect(narrowByAddressText('sqlite', 'https://metrics.example.com:8443/gr', fixed).http).toBeDefined();
  });
});
