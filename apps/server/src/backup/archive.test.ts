import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore, sqliteClientOf } from '../db/client.js';
import { resolveMigrationsDir } from '../db/migrations-dir.js';
import { createBackup, restoreBackup } from './archive.js';

let dir: string;
let dataDir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'postern-backup-'));
  dataDir = join(dir, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mode = (path: string): number => statSync(path).mode & 0o777;

/** A data dir as a running gateway has it: database, secret key, certificates, WireGuard state and runtime files. */
function seedDataDir() {
  const db = openSqliteStore(join(dataDir, 'postern.db'), resolveMigrationsDir());
  sqliteClientOf(db).exec("INSERT INTO settings (key, value) VALUES ('marker', 'before')");
  writeFileSync(join(dataDir, 'secret.key'), 'a'.repeat(44), { mode: 0o600 });
  mkdirSync(join(dataDir, 'certs'), { mode: 0o700 });
  writeFileSync(join(dataDir, 'certs', 'example.test.pem'), 'KEY AND CHAIN', { mode: 0o600 });
  mkdirSync(join(dataDir, 'wireguard'), { mode: 0o700 });
  writeFileSync(join(dataDir, 'wireguard', 'pg0.key'), 'wg private key', { mode: 0o600 });
  writeFileSync(join(dataDir, 'wireguard', 'pg0.wireguard-go.pid'), '123');
  writeFileSync(join(dataDir, 'wireguard', 'pg0.wireguard-go.log'), 'noise');
  mkdirSync(join(dataDir, 'nginx', 'current'), { recursive: true });
  writeFileSync(join(dataDir, 'nginx', 'current', 'nginx.conf'), 'rendered at boot');
  mkdirSync(join(dataDir, 'backups'));
  writeFileSync(join(dataDir, 'backups', 'old.tar.gz'), 'an earlier backup');
  return db;
}

describe('backup and restore', () => {
  it('restores the database, secrets and certificates with their modes, leaving runtime files and old backups out', async () => {
    const db = seedDataDir();
    const archive = join(dir, 'backup.tar.gz');
    // Writes keep landing while the backup runs: the copy is still one consistent database.
    let writes = 0;
    const writer = setInterval(() => {
      sqliteClientOf(db).prepare('INSERT INTO settings (key, value) VALUES (?, ?)').run(`w${writes}`, 'x');
      writes += 1;
    }, 1);
    try {
      await createBackup(dataDir, archive);
    } finally {
      clearInterval(writer);
    }
    sqliteClientOf(db).close();
    expect(mode(archive)).toBe(0o600);

    const target = join(dir, 'restored');
    await restoreBackup(archive, target);
    expect(readdirSync(target).sort()).toEqual(['certs', 'postern.db', 'secret.key', 'wireguard']);
    expect(readdirSync(join(target, 'wireguard'))).toEqual(['pg0.key']);
    expect(readFileSync(join(target, 'certs', 'example.test.pem'), 'utf8')).toBe('KEY AND CHAIN');
    for (const secret of ['secret.key', 'certs/example.test.pem', 'wireguard/pg0.key', 'postern.db'])
      expect(mode(join(target, secret))).toBe(0o600);
    expect(mode(target)).toBe(0o700);
    expect(mode(join(target, 'certs'))).toBe(0o700);
    const restored = openSqliteStore(join(target, 'postern.db'), resolveMigrationsDir());
    expect(sqliteClientOf(restored).prepare("SELECT value FROM settings WHERE key = 'marker'").get()).toEqual({
      value: 'before',
    });
    expect(sqliteClientOf(restored).pragma('integrity_check', { simple: true })).toBe('ok');
    sqliteClientOf(restored).close();
  });

  it('streams to a writable and reads back from a readable (stdout/stdin)', async () => {
    sqliteClientOf(seedDataDir()).close();
    const chunks: Buffer[] = [];
    const { PassThrough } = await import('node:stream');
    const out = new PassThrough();
    out.on('data', (chunk: Buffer) => chunks.push(chunk));
    await createBackup(dataDir, '-', { out });
    const input = new PassThrough();
    input.end(Buffer.concat(chunks));
    await restoreBackup('-', join(dir, 'from-stdin'), { input });
    expect(readFileSync(join(dir, 'from-stdin', 'secret.key'), 'utf8')).toBe('a'.repeat(44));
  });

  it('refuses a data directory that is not empty, and changes nothing in it', async () => {
    sqliteClientOf(seedDataDir()).close();
    const archive = join(dir, 'backup.tar.gz');
    await createBackup(dataDir, archive);
    const busy = join(dir, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'secret.key'), 'other gateway');
    await expect(restoreBackup(archive, busy)).rejects.toThrow(/not empty/);
    expect(readdirSync(busy)).toEqual(['secret.key']);
    expect(readFileSync(join(busy, 'secret.key'), 'utf8')).toBe('other gateway');
  });

  it('refuses an archive that is not a Postern backup, leaving the data directory empty', async () => {
    const foreign = join(dir, 'foreign');
    mkdirSync(foreign);
    writeFileSync(join(foreign, 'notes.txt'), 'hello');
    const archive = join(dir, 'foreign.tar.gz');
    execFileSync('tar', ['-czf', archive, '-C', foreign, '.']);
    const target = join(dir, 'target');
    await expect(restoreBackup(archive, target)).rejects.toThrow(/not a Postern backup/);
    expect(readdirSync(target)).toEqual([]);
  });

  it('refuses an archive holding a symlink (it could point anywhere on the host)', async () => {
    sqliteClientOf(seedDataDir()).close();
    const staged = join(dir, 'staged');
    mkdirSync(staged);
    execFileSync('tar', ['-xzf', await backupOf(dataDir), '-C', staged]);
    execFileSync('ln', ['-s', '/etc/passwd', join(staged, 'certs', 'evil.pem')]);
    const archive = join(dir, 'evil.tar.gz');
    execFileSync('tar', ['-czf', archive, '-C', staged, '.']);
    const target = join(dir, 'target');
    await expect(restoreBackup(archive, target)).rejects.toThrow(/not a regular file/);
    expect(existsSync(join(target, 'certs'))).toBe(false);
  });

  it('drops setuid, setgid, sticky and world-writable modes an archive carries', async () => {
    sqliteClientOf(seedDataDir()).close();
    const staged = join(dir, 'staged');
    mkdirSync(staged);
    execFileSync('tar', ['-xzf', await backupOf(dataDir), '-C', staged]);
    // A crafted archive: a setuid-root program, a setgid world-writable directory, a sticky world-writable one and a
    // world-writable secret, all restored by root into the data directory.
    writeFileSync(join(staged, 'certs', 'helper'), '#!/bin/sh\nid\n');
    chmodSync(join(staged, 'certs', 'helper'), 0o4755);
    mkdirSync(join(staged, 'drop'));
    chmodSync(join(staged, 'drop'), 0o2777);
    mkdirSync(join(staged, 'wireguard', 'shared'));
    chmodSync(join(staged, 'wireguard', 'shared'), 0o1777);
    chmodSync(join(staged, 'secret.key'), 0o666);
    chmodSync(join(staged, 'certs', 'example.test.pem'), 0o6640);
    const archive = join(dir, 'crafted.tar.gz');
    execFileSync('tar', ['-czf', archive, '-C', staged, '.']);
    const target = join(dir, 'target');
    await restoreBackup(archive, target);
    const modes = Object.fromEntries(
      ['certs/helper', 'drop', 'wireguard/shared', 'secret.key', 'certs/example.test.pem', 'certs', 'postern.db'].map(
        (path) => [path, (statSync(join(target, path)).mode & 0o7777).toString(8)],
      ),
    );
    expect(modes).toEqual({
      'certs/helper': '755',
      drop: '775',
      'wireguard/shared': '775',
      'secret.key': '664',
      'certs/example.test.pem': '640',
      certs: '700',
      'postern.db': '600',
    });
  });
});

async function backupOf(source: string): Promise<string> {
  const archive = join(dir, `b-${Math.random().toString(36).slice(2)}.tar.gz`);
  await createBackup(source, archive);
  chmodSync(archive, 0o600);
  return archive;
}
