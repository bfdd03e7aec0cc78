import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CommandError, runCommand } from '../exec.js';
import { NginxRejectedError, type ConfigFiles, type DataPlaneLogger, type NginxAdapter } from '../types.js';
import {
  CURRENT_LINK, generationDir, listGenerations, pruneGenerations, readCurrentGeneration, switchCurrent, writeGeneration,
} from './generations.js';
import { isAlive, readChildPids, readCmdline, waitFor } from './process-info.js';

export interface NginxDriverOptions {
  /** nginx prefix, e.g. `<dataDir>/nginx`. */
  prefixDir: string;
  logger: DataPlaneLogger;
  nginxBin?: string;
  /** Generations kept on disk besides the serving one. */
  keepGenerations?: number;
  /** How long a reload or first start may take before it counts as failed. */
  reloadDeadlineMs?: number;
}

const MAX_BACKOFF_MS = 30_000;
const STABLE_AFTER_MS = 30_000;

function killGroup(pgid: number | undefined, signal: NodeJS.Signals): void {
  if (pgid === undefined || pgid <= 1) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // Group already gone.
  }
}

/** nginx's own words for why it refused a config, without the noise lines. */
function describeRejection(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => /\[(emerg|alert|crit|error)\]/.test(l));
  return (lines.length > 0 ? lines.join('\n') : text.trim()) || 'nginx rejected the configuration';
}

/**
 * nginx as a supervised child: own prefix, `daemon off`, restarted with back-off when it dies. A new config
 * becomes a new generation; it is switched in only after `nginx -t` accepted it and is live once the master
 * has started workers on it. Otherwise the previous generation keeps serving and NginxRejectedError is thrown.
 */
export function createNginxDriver(options: NginxDriverOptions): NginxAdapter {
  const { prefixDir, logger } = options;
  const bin = options.nginxBin ?? 'nginx';
  const keep = options.keepGenerations ?? 3;
  const reloadDeadlineMs = options.reloadDeadlineMs ?? 10_000;
  const errorLog = join(prefixDir, 'logs', 'error.log');
  const pidFile = join(prefixDir, 'nginx.pid');
  let master: ChildProcess | null = null;
  let isStopping = false;
  let restartTimer: NodeJS.Timeout | null = null;
  let failures = 0;
  let nextGeneration = 1;
  let queue: Promise<unknown> = Promise.resolve();

  const baseArgs = (conf: string): string[] => ['-p', `${prefixDir}/`, '-c', conf, '-e', errorLog];

  async function errorLogSize(): Promise<number> {
    return stat(errorLog).then((s) => s.size, () => 0);
  }

  async function readErrorLogFrom(offset: number): Promise<string> {
    const handle = await open(errorLog, 'r').catch(() => null);
    if (!handle) return '';
    try {
      const { size } = await handle.stat();
      const buffer = Buffer.alloc(Math.max(0, Math.min(size - offset, 64 * 1024)));
      await handle.read(buffer, 0, buffer.length, offset);
      return buffer.toString('utf8');
    } finally {
      await handle.close();
    }
  }

  /** A master left over from a crashed server would hold the ports: stop it (only if it is really nginx). */
  async function stopStaleMaster(): Promise<void> {
    const text = await readFile(pidFile, 'utf8').catch(() => null);
    const pid = Number(text?.trim());
    if (!Number.isInteger(pid) || pid <= 1 || pid === master?.pid || !isAlive(pid)) return;
    const cmdline = await readCmdline(pid);
    if (!cmdline?.startsWith('nginx: master process')) return;
    logger.warn({ pid }, 'nginx: stopping a master left over from a previous run');
    process.kill(pid, 'SIGTERM');
    if (!(await waitFor(() => !isAlive(pid), 5000))) process.kill(pid, 'SIGKILL');
    await waitFor(() => !isAlive(pid), 2000);
    killGroup(pid, 'SIGKILL');
  }

  function spawnMaster(): ChildProcess {
    if (restartTimer) clearTimeout(restartTimer);
    restartTimer = null;
    // Own process group (pgid = master pid): if the master dies, its orphaned workers still hold the ports, and
    // killing the group is the one reliable way to reach them.
    const child = spawn(bin, baseArgs(join(prefixDir, CURRENT_LINK, 'nginx.conf')), { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    const startedAt = Date.now();
    master = child;
    child.stderr?.on('data', (chunk: Buffer) => logger.warn({ nginx: chunk.toString().trim() }, 'nginx stderr'));
    child.on('error', (err) => logger.error({ err }, 'nginx: cannot run'));
    child.on('exit', (code, signal) => {
      if (master !== child) return;
      master = null;
      killGroup(child.pid, 'SIGKILL');
      if (isStopping) return;
      failures = Date.now() - startedAt > STABLE_AFTER_MS ? 1 : failures + 1;
      const delay = Math.min(MAX_BACKOFF_MS, 250 * 2 ** (failures - 1));
      logger.error({ code, signal, restartInMs: delay }, 'nginx exited unexpectedly; restarting');
      restartTimer = setTimeout(() => {
        restartTimer = null;
        if (!isStopping && !master) spawnMaster();
      }, delay);
    });
    return child;
  }

  /**
   * Resolves true once the master runs workers that did not exist in `before` and every worker of `before` has
   * stopped accepting (it is gone or titled "shutting down"): from then on every new connection gets the new
   * config. False if the master died or the deadline passed (a reload nginx refused starts no workers).
   */
  async function waitForNewWorkers(child: ChildProcess, before: number[], errorLogOffset: number): Promise<boolean> {
    const pid = child.pid;
    if (pid === undefined) return false;
    const isDead = (): boolean => child.exitCode !== null || child.signalCode !== null;
    let isRefused = false;
    const isLive = await waitFor(async () => {
      if (isDead()) return true;
      // A refused reload only shows in the error log: fail fast instead of waiting for the deadline.
      if (/\[emerg\]/.test(await readErrorLogFrom(errorLogOffset))) return (isRefused = true);
      const children = await readChildPids(pid);
      // Without /proc children support we cannot observe the reload; nginx applies it within milliseconds.
      if (children === null) return true;
      if (!children.some((c) => !before.includes(c))) return false;
      const titles = await Promise.all(before.map(readCmdline));
      return titles.every((title) => title === null || title.includes('shutting down'));
    }, reloadDeadlineMs);
    if (isRefused) await waitForQuietErrorLog();
    return isLive && !isRefused && !isDead();
  }

  /**
   * A refused reload may still be in progress: nginx retries a failed bind() 5 times, 500 ms apart, logging each
   * time. Wait until the log is quiet so those lines are not blamed on the next apply.
   */
  async function waitForQuietErrorLog(): Promise<void> {
    let size = await errorLogSize();
    let quietSince = Date.now();
    await waitFor(async () => {
      const now = await errorLogSize();
      if (now !== size) {
        size = now;
        quietSince = Date.now();
      }
      return Date.now() - quietSince >= 700;
    }, 5000, 50);
  }

  async function testGeneration(generation: number): Promise<void> {
    try {
      await runCommand(bin, ['-t', '-q', ...baseArgs(join(generationDir(prefixDir, generation), 'nginx.conf'))]);
    } catch (err) {
      if (err instanceof CommandError) throw new NginxRejectedError(describeRejection(err.stderr));
      throw err;
    }
  }

  async function goLive(generation: number, previous: number | null): Promise<void> {
    await switchCurrent(prefixDir, generation);
    const offset = await errorLogSize();
    const running = master;
    const ok = running
      ? await (async () => {
        const before = (await readChildPids(running.pid ?? 0)) ?? [];
        running.kill('SIGHUP');
        return waitForNewWorkers(running, before, offset);
      })()
      : await waitForNewWorkers(spawnMaster(), [], offset);
    if (ok) return;
    // Runtime failure the test cannot see (e.g. a port taken by another program): put the old one back.
    const reason = describeRejection(await readErrorLogFrom(offset));
    // A master that refused a reload keeps its old config in memory; the link must say the same for restarts.
    if (previous !== null) await switchCurrent(prefixDir, previous);
    throw new NginxRejectedError(reason);
  }

  async function applyNow(files: ConfigFiles): Promise<{ generation: number }> {
    const generation = nextGeneration++;
    const writeStarted = performance.now();
    await writeGeneration(prefixDir, generation, files);
    const written = performance.now();
    const previous = await readCurrentGeneration(prefixDir);
    try {
      // A running master parses the whole new config on SIGHUP before any worker switches, refuses a bad one
      // (detected from its error log, and the link goes back) and keeps serving the old: that parse is the
      // validation, and a separate `nginx -t` would only pay for the same parse twice (~120 ms at 10,000
      // domains). A fresh master has no old config to fall back to, so it is tested first.
      if (!master || master.exitCode !== null) await testGeneration(generation);
      await goLive(generation, previous);
    } catch (err) {
      await rm(generationDir(prefixDir, generation), { recursive: true, force: true });
      throw err;
    }
    const isLive = performance.now();
    await pruneGenerations(prefixDir, keep, [generation, previous]);
    logger.info({ generation, writeMs: Math.round(written - writeStarted), reloadMs: Math.round(isLive - written) }, 'nginx: configuration live');
    return { generation };
  }

  return {
    async start() {
      isStopping = false;
      for (const dir of ['logs', 'temp', 'gen', 'empty']) await mkdir(join(prefixDir, dir), { recursive: true, mode: 0o755 });
      await stopStaleMaster();
      const existing = await listGenerations(prefixDir);
      nextGeneration = (existing.at(-1) ?? 0) + 1;
    },

    apply(files) {
      // One apply at a time: generations are numbered and switched in order.
      const run = queue.then(() => applyNow(files));
      queue = run.catch(() => undefined);
      return run;
    },

    async stop() {
      isStopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      restartTimer = null;
      const child = master;
      master = null;
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      killGroup(child.pid, 'SIGKILL');
    },
  };
}
