import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { NginxRejectedError } from '../types.js';
import { waitUntil } from '../../lib/wait.js';
import { isAlive, readChildPids, readCmdline } from './process-info.js';

// An nginx master the control plane started, or found running and adopted. Masters are started detached (own
// session and process group, output to a log file, no pipe to us), so they outlive the control plane: a restart of
// the control plane adopts them instead of replacing them, and cuts no connection.

export interface Master {
  pid: number;
  /** Start time from /proc/<pid>/stat: a recycled pid is not our master. */
  startTime: string;
  /** Set when this process started it (then its exit is seen at once, not at the next check). */
  child: ChildProcess | null;
}

export interface MasterPaths {
  bin: string;
  prefixDir: string;
  /** The config the master runs (for the HTTP instance the `current` link's nginx.conf). */
  confPath: string;
  pidFile: string;
  errorLog: string;
  /** nginx's own stdout/stderr (start-up messages before the error log is open). */
  outputLog: string;
}

/** Process group and start time from /proc/<pid>/stat. Synchronous: a /proc read never blocks, and a scan of every
 * process costs ~3 ms this way against ~170 ms through the async file API. */
function readStat(pid: number): { pgrp: number; startTime: string } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: fields after its last ')' are fixed.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { pgrp: Number(fields[2]), startTime: fields[19] ?? '' };
}

export const masterArgs = (paths: MasterPaths): string[] => [
  '-p',
  `${paths.prefixDir}/`,
  '-c',
  paths.confPath,
  '-e',
  paths.errorLog,
];

/** The master named by the pid file, if it is alive and is nginx running exactly this config. */
export async function findMaster(paths: MasterPaths): Promise<Master | null> {
  const pid = Number((await readFile(paths.pidFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 1 || !isAlive(pid)) return null;
  const cmdline = await readCmdline(pid);
  if (!cmdline?.startsWith('nginx: master process') || !cmdline.includes(` -c ${paths.confPath}`)) return null;
  const info = readStat(pid);
  return info ? { pid, startTime: info.startTime, child: null } : null;
}

export async function isRunning(master: Master): Promise<boolean> {
  if (master.child && (master.child.exitCode !== null || master.child.signalCode !== null)) return false;
  const info = readStat(master.pid);
  return info !== null && info.startTime === master.startTime;
}

/** A worker of a master that died without it: its pid and start time (a recycled pid is not it). */
export interface OrphanWorker {
  pid: number;
  startTime: string;
}

/** Workers of a master that died without them (SIGKILL): they still hold the ports. Found by process group. */
export async function findOrphanWorkers(pgrp: number): Promise<OrphanWorker[]> {
  if (!Number.isInteger(pgrp) || pgrp <= 1) return [];
  const found: OrphanWorker[] = [];
  for (const name of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const info = readStat(pid);
    if (info?.pgrp !== pgrp || isZombie(pid)) continue;
    const cmdline = await readCmdline(pid);
    if (cmdline?.startsWith('nginx: ')) found.push({ pid, startTime: info.startTime });
  }
  return found;
}

/** Whether the worker still runs (not exited, not a zombie, not a recycled pid). */
export function isWorkerAlive(worker: OrphanWorker): boolean {
  return readStat(worker.pid)?.startTime === worker.startTime && !isZombie(worker.pid);
}

/** Kills orphaned workers (by process group) and waits until their sockets are closed. */
export async function killOrphanWorkers(pgrp: number): Promise<void> {
  const killed: number[] = [];
  for (const { pid } of await findOrphanWorkers(pgrp)) {
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  // Their sockets close only once they are gone: a new master binding the same ports must wait for that.
  await waitUntil(() => killed.every((pid) => readStat(pid) === null || isZombie(pid)), 3000, 5);
}

function isZombie(pid: number): boolean {
  try {
    return /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

export async function fileSize(path: string): Promise<number> {
  return stat(path).then(
    (s) => s.size,
    () => 0,
  );
}

export async function readFrom(path: string, offset: number, max = 64 * 1024): Promise<string> {
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return '';
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.alloc(Math.max(0, Math.min(size - offset, max)));
    await handle.read(buffer, 0, buffer.length, offset);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

/** nginx's own words for why it refused, without the noise lines. */
export function describeRejection(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /\[(emerg|alert|crit)\]/.test(l));
  return (
    (lines.length > 0 ? lines.map((l) => l.replace(/^\S+ \S+ \[\w+\] \d+#\d+: /, '')).join('\n') : text.trim()) ||
    'nginx refused to start'
  );
}

/**
 * Starts a master, detached, and resolves once it has written its pid file (nginx does that after binding its
 * listening sockets): from then on it serves. A master that exits first throws NginxRejectedError with nginx's reason.
 */
export async function startMaster(paths: MasterPaths, deadlineMs = 15_000): Promise<Master> {
  const logOffset = await fileSize(paths.errorLog);
  const outOffset = await fileSize(paths.outputLog);
  const out = openSync(paths.outputLog, 'a', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(paths.bin, masterArgs(paths), { detached: true, stdio: ['ignore', out, out] });
  } finally {
    closeSync(out);
  }
  child.unref();
  const spawned = child;
  const failed = new Promise<void>((resolve) => {
    spawned.once('exit', () => resolve());
    spawned.once('error', () => resolve());
  });
  let isUp = false;
  await Promise.race([
    failed,
    waitUntil(async () => {
      const pid = Number((await readFile(paths.pidFile, 'utf8').catch(() => '')).trim());
      isUp = pid === spawned.pid;
      return isUp || spawned.exitCode !== null;
    }, deadlineMs),
  ]);
  const info = spawned.pid === undefined ? null : readStat(spawned.pid);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by the polling callback above, which TypeScript does not follow
  if (isUp && info && spawned.exitCode === null)
    return { pid: spawned.pid as number, startTime: info.startTime, child: spawned };
  if (spawned.exitCode === null) spawned.kill('SIGKILL');
  const reason = describeRejection(
    `${await readFrom(paths.errorLog, logOffset)}\n${await readFrom(paths.outputLog, outOffset)}`,
  );
  throw new NginxRejectedError(reason);
}

/** SIGTERM (fast: open connections close at once) or SIGQUIT (graceful), then the whole group if it lingers. */
export async function stopMaster(master: Master, graceful = false, deadlineMs = 5000): Promise<void> {
  try {
    process.kill(master.pid, graceful ? 'SIGQUIT' : 'SIGTERM');
  } catch {
    // Already gone.
  }
  if (await waitUntil(async () => !(await isRunning(master)), deadlineMs, 5)) return;
  try {
    process.kill(master.pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
  // A master killed outright leaves its workers behind.
  await killOrphanWorkers(master.pid);
}

/**
 * SIGHUP and wait until the master runs workers that were not there before and every old worker has stopped
 * accepting (gone, or "shutting down"). nginx parses the new config before any worker changes and keeps the old one
 * when it refuses: that shows only in the error log, which is read from `errorLogOffset`.
 */
export async function reloadMaster(master: Master, errorLog: string, deadlineMs = 10_000): Promise<void> {
  const offset = await fileSize(errorLog);
  const before = (await readChildPids(master.pid)) ?? [];
  process.kill(master.pid, 'SIGHUP');
  let isRefused = false;
  const isLive = await waitUntil(async () => {
    if (!(await isRunning(master))) return true;
    if (/\[emerg\]/.test(await readFrom(errorLog, offset))) return (isRefused = true);
    const children = await readChildPids(master.pid);
    if (children === null) return true;
    if (!children.some((c) => !before.includes(c))) return false;
    const titles = await Promise.all(before.map(readCmdline));
    return titles.every((title) => title === null || title.includes('shutting down'));
  }, deadlineMs);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by the polling callback above, which TypeScript does not follow
  if (isRefused || !isLive || !(await isRunning(master))) {
    throw new NginxRejectedError(
      describeRejection(await readFrom(errorLog, offset)) || 'nginx did not take the new configuration',
    );
  }
}
