import { readFile } from 'node:fs/promises';

// Small /proc readers used to supervise nginx: which workers a master has (a reload is live once new workers
// exist) and whether a pid from a pid file is really an nginx master.

export async function readChildPids(pid: number): Promise<number[] | null> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => null);
  return text === null
    ? null
    : text
        .trim()
        .split(/\s+/)
        .filter((s) => s !== '')
        .map(Number);
}

export async function readCmdline(pid: number): Promise<string | null> {
  const text = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => null);
  return text === null ? null : text.replace(/\0/g, ' ').trim();
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// The one polling loop is lib/wait.ts; this name stays for http-instance.ts and its integration tests, which another
// branch is changing.
export { waitUntil as waitFor } from '../../lib/wait.js';
