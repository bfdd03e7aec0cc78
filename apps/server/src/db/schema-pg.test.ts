import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { is } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { afterAll, describe, expect, it } from 'vitest';
import * as pgSchema from './schema-pg.js';
import * as sqliteSchema from './schema.js';

const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const work = mkdtempSync(join(tmpdir(), 'postern-drizzle-kit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * Runs `drizzle-kit generate` for one dialect on a copy of the committed migrations: its report, and the files it
 * added (none when the migrations are up to date with schema.ts). drizzle-kit exits 0 even when it fails, so the
 * caller also checks what it said.
 */
function generateAgainst(dialect: 'sqlite' | 'postgresql', folder: string, schema: string) {
  cpSync(join(serverDir, folder), join(work, folder), { recursive: true });
  const config = join(work, `${folder}.config.mjs`);
  // drizzle-kit takes `out` relative to the working directory only.
  writeFileSync(
    config,
    `export default ${JSON.stringify({ dialect, schema: join(serverDir, schema), out: folder })};\n`,
  );
  const before = new Set(readdirSync(join(work, folder)));
  const report = execFileSync(join(serverDir, 'node_modules/.bin/drizzle-kit'), ['generate', '--config', config], {
    cwd: work,
    encoding: 'utf8',
    stdio: 'pipe',
  });
  return { report, added: readdirSync(join(work, folder)).filter((file) => !before.has(file)) };
}

describe('the committed migrations', () => {
  // Both run drizzle-kit (~3 s each); a forgotten `drizzle-kit generate` fails here, not on an operator's upgrade.
  it('of SQLite are up to date with schema.ts', () => {
    const { report, added } = generateAgainst('sqlite', 'drizzle', 'src/db/schema.ts');
    expect(added).toEqual([]);
    expect(report).toContain('No schema changes');
  }, 20_000);

  it('of PostgreSQL are up to date with schema.ts (drizzle-kit generate --config drizzle.pg.config.ts)', () => {
    const { report, added } = generateAgainst('postgresql', 'drizzle-pg', 'src/db/schema-pg.ts');
    expect(added).toEqual([]);
    expect(report).toContain('No schema changes');
  }, 20_000);
});

describe('schema-pg', () => {
  it('exports every table of schema.ts, under the same name', () => {
    const sqliteTables = Object.entries(sqliteSchema as Record<string, unknown>)
      .filter(([, value]) => is(value, SQLiteTable))
      .map(([name]) => name)
      .sort();
    const pgTables = Object.entries(pgSchema as Record<string, unknown>)
      .filter(([, value]) => is(value, PgTable))
      .map(([name]) => name)
      .sort();
    expect(pgTables).toEqual(sqliteTables);
  });
});
