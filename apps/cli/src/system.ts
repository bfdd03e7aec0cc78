import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { isSea } from 'node:sea';
import { setTimeout as delay } from 'node:timers/promises';

// Every OS effect of the CLI goes through this object, so the tunnel logic runs in tests without root:
// tests pass a fake that records commands and answers like `ip`/`wg` would.

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface System {
  /**
   * Runs a program with an argv array (never a shell). Resolves with the exit code; rejects only if it cannot start.
   */
  run(command: string, args: readonly string[]): Promise<RunResult>;
  /** Absolute path of an executable found on PATH, or null. */
  which(command: string): Promise<string | null>;
  /** Creates the directory (and parents) and makes it 0700: it holds a private key and a token. */
  ensurePrivateDir(dir: string): Promise<void>;
  /** Writes a file with mode 0600 atomically (temp file + rename), so a crash never leaves half a config. */
  writePrivateFile(file: string, text: string): Promise<void>;
  /** File content, or null when the file does not exist. */
  readText(file: string): Promise<string | null>;
  exists(file: string): Promise<boolean>;
  removeFile(file: string): Promise<void>;
  /** Removes a directory and everything in it (nothing when it does not exist). */
  removeTree(dir: string): Promise<void>;
  /**
   * The path of this program when it runs as the single executable install.sh installs, null when it runs on a
   * Node.js of its own (the node image, a checkout): then `uninstall` must not delete Node.
   */
  singleExecutable(): string | null;
  /** Waits `ms`; rejects with an AbortError when `signal` fires first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  now(): number;
}

export function createSystem(searchPath: string): System {
  return {
    run: runProgram,
    which: (command) => findOnPath(command, searchPath),
    async ensurePrivateDir(dir) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chmod(dir, 0o700);
    },
    writePrivateFile,
    async readText(file) {
      try {
        return await readFile(file, 'utf8');
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },
    async exists(file) {
      try {
        await access(file);
        return true;
      } catch {
        return false;
      }
    },
    removeFile: (file) => rm(file, { force: true }),
    removeTree: (dir) => rm(dir, { recursive: true, force: true }),
    singleExecutable: () => (isSea() ? process.execPath : null),
    sleep: (ms, signal) => delay(ms, undefined, { signal }),
    now: () => Date.now(),
  };
}

function runProgram(command: string, args: readonly string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
}

async function findOnPath(command: string, searchPath: string): Promise<string | null> {
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, command);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

async function writePrivateFile(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  // 'w' with mode only applies the mode on creation: remove a stale temp file first so it cannot keep wider rights.
  await rm(temp, { force: true });
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
}
