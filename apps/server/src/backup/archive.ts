import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, copyFile, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';

// A backup is one tar.gz of the data directory as a restore needs it: the database (a consistent copy made with
// SQLite's online backup API, so the gateway keeps writing meanwhile), the secret key, certificates and their keys,
// the ACME account and WireGuard's state. What the gateway rebuilds from the database at boot (nginx's rendered
// config, pid files, logs, sockets) and earlier backups are left out. File modes are kept (secrets stay 0600; a
// restore drops setuid, setgid, sticky and world-writable bits) and the archive itself is 0600: it holds the secret
// key.

const run = promisify(execFile);

export const DB_FILE = 'postern.db';
export const MANIFEST_FILE = 'postern-backup.json';
export const BACKUPS_DIR = 'backups';
const FORMAT = 1;

/** Top-level entries never copied: rebuilt at boot, the live database (copied through SQLite), earlier backups. */
const SKIPPED_TOP = new Set(['nginx', BACKUPS_DIR, DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, `${DB_FILE}-journal`]);
/** Runtime files anywhere below (a process's pid and output, our own staging dirs). */
const isRuntimeName = (name: string): boolean =>
  /\.(pid|log|sock)$/.test(name) || name.startsWith('.backup-') || name.startsWith('.restore-');

export interface BackupManifest {
  format: number;
  createdAt: string;
  /** Migrations applied to the database copy (drizzle's count), for the operator's information. */
  migrations: number;
}

async function copyTree(from: string, to: string, top: boolean): Promise<void> {
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if ((top && SKIPPED_TOP.has(entry.name)) || isRuntimeName(entry.name)) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      const { mode } = await stat(source);
      await mkdir(target, { mode: mode & 0o777 });
      await copyTree(source, target, false);
      await chmod(target, mode & 0o777);
    } else if (entry.isFile()) {
      // copyFile keeps the content only; the mode is set before anything else could open the copy.
      const { mode } = await stat(source);
      await copyFile(source, target);
      await chmod(target, mode & 0o777);
    }
    // Sockets, fifos and symlinks are runtime artefacts or not ours: never archived.
  }
}

/**
 * Copies the live database through SQLite's online backup (consistent even while the gateway writes) and returns
 * how many migrations the copy has. The copy is switched out of WAL so the archive holds one self-contained file.
 */
async function copyDatabase(source: string, target: string): Promise<number> {
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(target);
  } finally {
    db.close();
  }
  await chmod(target, 0o600);
  const copy = new Database(target, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
    const table = copy
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'")
      .get();
    return table ? (copy.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n : 0;
  } finally {
    copy.close();
  }
}

/** Makes a staging copy of what the archive holds, in a 0700 dir inside the data dir (secrets never leave it). */
async function stage(dataDir: string, now: Date): Promise<string> {
  const staging = join(dataDir, `.backup-${randomBytes(6).toString('hex')}`);
  await mkdir(staging, { mode: 0o700 });
  try {
    const migrations = await copyDatabase(join(dataDir, DB_FILE), join(staging, DB_FILE));
    await copyTree(dataDir, staging, true);
    const manifest: BackupManifest = { format: FORMAT, createdAt: now.toISOString(), migrations };
    await writeFile(join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    return staging;
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Writes a backup of the (running or stopped) gateway whose data dir is `dataDir` to `target`, atomically (a
 * partial archive never carries the final name); `target` '-' writes it to `out` (stdout).
 */
export async function createBackup(
  dataDir: string,
  target: string,
  options: { now?: Date; out?: NodeJS.WritableStream } = {},
): Promise<void> {
  const staging = await stage(dataDir, options.now ?? new Date());
  try {
    if (target === '-') {
      await tarTo(staging, options.out ?? process.stdout);
      return;
    }
    const partial = join(dirname(target), `.${basename(target)}.${randomBytes(4).toString('hex')}.partial`);
    try {
      // Created 0600 before tar writes a byte: the archive holds the secret key.
      await writeFile(partial, '', { mode: 0o600 });
      await run('tar', ['--create', '--gzip', '--file', partial, '--directory', staging, '--numeric-owner', '.']);
      await rename(partial, target);
    } finally {
      await rm(partial, { force: true });
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

function tarTo(staging: string, out: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('tar', ['--create', '--gzip', '--file', '-', '--directory', staging, '--numeric-owner', '.'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.pipe(out, { end: false });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar exited with ${String(code)}`))));
  });
}

/** Entries a data dir may hold and still count as empty (a fresh filesystem's lost+found on a volume). */
const IGNORED_IN_EMPTY_DIR = new Set(['lost+found']);

export class RestoreRefusedError extends Error {
  override name = 'RestoreRefusedError';
}

/**
 * The mode bits a restored entry may keep: the owner's and group's, and reading and entering for others. An archive is
 * input like any other: setuid, setgid and sticky bits and world-writable entries in it are dropped, so a crafted
 * backup restored by root cannot leave a setuid-root program or a directory anyone may write to in the data dir.
 */
const RESTORED_MODE_MASK = 0o775;

/** Refuses anything but regular files and directories, and takes every mode down to RESTORED_MODE_MASK. */
async function checkRestoredTree(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (!entry.isDirectory() && !entry.isFile())
      throw new RestoreRefusedError(
        `the archive holds ${relative(dir, path)}, which is not a regular file or directory`,
      );
    const { mode } = await lstat(path);
    if ((mode & 0o7777 & ~RESTORED_MODE_MASK) !== 0) await chmod(path, mode & RESTORED_MODE_MASK);
    if (entry.isDirectory()) await checkRestoredTree(path);
  }
}

/**
 * Restores `archive` ('-': read from `input`, stdin) into `dataDir`, which must be missing or empty: a restore never
 * mixes two gateways' state. Extracted into a staging dir first and checked (manifest, database, secret key, only
 * regular files), then moved in, so a bad archive leaves the data dir as it was.
 */
export async function restoreBackup(
  archive: string,
  dataDir: string,
  options: { input?: NodeJS.ReadableStream } = {},
): Promise<BackupManifest> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const present = (await readdir(dataDir)).filter((name) => !IGNORED_IN_EMPTY_DIR.has(name));
  if (present.length > 0)
    throw new RestoreRefusedError(
      `${dataDir} is not empty (it holds ${present.slice(0, 5).join(', ')}); restore only into an empty data directory`,
    );
  const staging = join(dataDir, `.restore-${randomBytes(6).toString('hex')}`);
  await mkdir(staging, { mode: 0o700 });
  try {
    // GNU tar refuses members with `..` and strips leading `/`; ownership becomes the restorer's, modes are kept
    // (secrets stay 0600) and then checked (checkRestoredTree).
    const args = ['--extract', '--gzip', '--directory', staging, '--no-same-owner', '--preserve-permissions', '--file'];
    if (archive === '-') await tarFrom(args, options.input ?? process.stdin);
    else {
      await stat(archive);
      await run('tar', [...args, archive]);
    }
    await checkRestoredTree(staging);
    const manifest = await readManifest(staging);
    for (const required of [DB_FILE, 'secret.key']) {
      if (!(await lstat(join(staging, required)).catch(() => null))?.isFile())
        throw new RestoreRefusedError(`the archive holds no ${required}: not a Postern backup`);
    }
    for (const name of await readdir(staging)) {
      if (name === MANIFEST_FILE) continue;
      await rename(join(staging, name), join(dataDir, name));
    }
    await chmod(dataDir, 0o700);
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function readManifest(dir: string): Promise<BackupManifest> {
  const text = await readFile(join(dir, MANIFEST_FILE), 'utf8').catch(() => null);
  if (text === null) throw new RestoreRefusedError(`the archive holds no ${MANIFEST_FILE}: not a Postern backup`);
  const manifest = JSON.parse(text) as BackupManifest;
  if (manifest.format !== FORMAT)
    throw new RestoreRefusedError(`backup format ${String(manifest.format)} is not supported (expected ${FORMAT})`);
  return manifest;
}

function tarFrom(args: string[], input: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('tar', [...args, '-'], { stdio: ['pipe', 'ignore', 'inherit'] });
    input.pipe(child.stdin);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar exited with ${String(code)}`))));
  });
}
