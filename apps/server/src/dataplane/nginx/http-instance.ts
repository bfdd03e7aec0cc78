import { chmod, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CommandError, runCommand } from '../exec.js';
import { NginxRejectedError, type ConfigFiles, type DataPlaneLogger } from '../types.js';
import { createControlClient, type ControlClient } from './control-client.js';
import {
  chooseSizes,
  DEFAULT_DICT_LIMITS,
  parseDicts,
  sameSizes,
  type DictLimits,
  type DictNeeds,
  type DictSizes,
} from './dict-sizes.js';
import {
  CURRENT_LINK,
  generationDir,
  listGenerations,
  pruneGenerations,
  readCurrentGeneration,
  switchCurrent,
  writeGeneration,
} from './generations.js';
import {
  describeRejection,
  findMaster,
  findOrphanWorkers,
  isRunning,
  isWorkerAlive,
  killOrphanWorkers,
  masterArgs,
  reloadMaster,
  startMaster,
  stopMaster,
  type Master,
  type MasterPaths,
  type OrphanWorker,
} from './master-process.js';
import { controlDir, controlSocket, logsDir, snapshotFile } from './options.js';
import { waitFor } from './process-info.js';

// The HTTP instance's lifecycle. Its config changes only with the gateway's own settings, an upgrade, or a shared
// dictionary that must grow, so almost every start of the control plane ADOPTS the running master: nothing is
// reloaded, no connection is touched. A master that died (or was never started) is started from the newest
// generation; its Lua module loads the last pushed routes and certificates from disk before its first request, and
// the control plane pushes the rest. A master killed alone leaves its workers serving: the new one binds beside them
// (reuseport) and they finish their connections.

export interface HttpInstanceOptions {
  prefixDir: string;
  /** Renders the generation that lives in `generationDir` (the Lua module is loaded from there). */
  render: (generationDir: string, dicts: DictSizes) => ConfigFiles;
  logger: DataPlaneLogger;
  nginxBin?: string;
  keepGenerations?: number;
  /** Floors and ceilings of the shared dictionaries (default DEFAULT_DICT_LIMITS; tests make them small). */
  dictLimits?: DictLimits;
  /** What a fresh master's dictionaries must hold (the snapshot on disk it loads); default nothing. */
  snapshotNeeds?: () => Promise<DictNeeds>;
}

export type StartOutcome = 'adopted' | 'reloaded' | 'started';

export interface HttpInstance {
  start(): Promise<StartOutcome>;
  /** Starts the master again if it died; true when it did (everything must then be pushed again). */
  heal(): Promise<boolean>;
  isUp(): Promise<boolean>;
  readonly control: ControlClient;
  /** `keepServing`: leave nginx running for the next control plane (a restart); otherwise stop it (shutdown). */
  stop(options: { keepServing: boolean }): Promise<void>;
  /** The master's pid, for tests and diagnostics. */
  pid(): number | null;
  /** The shared dictionaries' sizes in the config nginx runs (or will run). */
  dictSizes(): DictSizes;
  /**
   * Grows the shared dictionaries that `needs` would fill (dict-sizes.ts `chooseSizes`): a new generation, loaded
   * gracefully. The grown dictionaries start empty and load the snapshot on disk: `beforeReload` writes it. True when
   * nginx was reloaded (what it holds must then be read back). `growAt`: the share of a dictionary its data may take
   * before it grows (dict-sizes.ts GROW_AT; BOOT_GROW_AT at boot).
   */
  fit(needs: DictNeeds, beforeReload: () => Promise<void>, growAt?: number): Promise<boolean>;
  /**
   * Requests still in flight on the workers of a master that was killed (GET /live entries read from them when they
   * were told to finish): the cut-off must reach them too. Empty once those workers have ended.
   */
  drainingRequests(): unknown[];
}

function sameFiles(a: ConfigFiles, b: ConfigFiles): boolean {
  const keys = Object.keys(b);
  return keys.length === Object.keys(a).length && keys.every((key) => a[key] === b[key]);
}

/** Workers of a killed master finishing their connections, and the requests they carried. */
interface Draining {
  workers: OrphanWorker[];
  live: unknown[];
}

class NginxHttpInstance implements HttpInstance {
  readonly control: ControlClient;
  private readonly paths: MasterPaths;
  private readonly limits: DictLimits;
  private master: Master | null = null;
  private sizes: DictSizes;
  private draining: Draining | null = null;
  /** start, heal, stop and fit run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: HttpInstanceOptions) {
    const { prefixDir } = options;
    this.paths = {
      bin: options.nginxBin ?? 'nginx',
      prefixDir,
      confPath: join(prefixDir, CURRENT_LINK, 'nginx.conf'),
      pidFile: join(prefixDir, 'nginx.pid'),
      errorLog: join(logsDir({ prefixDir }), 'error.log'),
      outputLog: join(logsDir({ prefixDir }), 'nginx.out'),
    };
    this.control = createControlClient(controlSocket(prefixDir));
    this.limits = options.dictLimits ?? DEFAULT_DICT_LIMITS;
    this.sizes = this.limits.floors;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async readGeneration(generation: number, names: string[]): Promise<ConfigFiles | null> {
    const files: ConfigFiles = {};
    for (const name of names) {
      const text = await readFile(join(generationDir(this.options.prefixDir, generation), name), 'utf8').catch(
        () => null,
      );
      if (text === null) return null;
      files[name] = text;
    }
    return files;
  }

  /** Makes `current` hold what this control plane renders; returns whether it had to write a new generation. */
  private async ensureGeneration(): Promise<{ changed: boolean; previous: number | null }> {
    const { prefixDir, render, keepGenerations = 3 } = this.options;
    const previous = await readCurrentGeneration(prefixDir);
    if (previous !== null) {
      const wanted = render(generationDir(prefixDir, previous), this.sizes);
      const onDisk = await this.readGeneration(previous, Object.keys(wanted));
      if (onDisk && sameFiles(onDisk, wanted)) return { changed: false, previous };
    }
    const next = ((await listGenerations(prefixDir)).at(-1) ?? 0) + 1;
    await writeGeneration(prefixDir, next, render(generationDir(prefixDir, next), this.sizes));
    try {
      await this.testConfig(join(generationDir(prefixDir, next), 'nginx.conf'));
    } catch (err) {
      await pruneGenerations(prefixDir, keepGenerations, [previous]);
      throw err;
    }
    await switchCurrent(prefixDir, next);
    await pruneGenerations(prefixDir, keepGenerations, [next, previous]);
    return { changed: true, previous };
  }

  private async testConfig(confPath: string): Promise<void> {
    try {
      await runCommand(this.paths.bin, ['-t', '-q', ...masterArgs({ ...this.paths, confPath })]);
    } catch (err) {
      if (err instanceof CommandError) throw new NginxRejectedError(describeRejection(err.stderr));
      throw err;
    }
  }

  /** Up = the master runs and its workers answer the control socket (the Lua module loaded). */
  private async waitForControl(): Promise<void> {
    let lastError = '';
    const isUp = await waitFor(
      async () => {
        try {
          await this.control.get('/state');
          return true;
        } catch (err) {
          lastError = err instanceof Error ? err.message : String(err);
          return false;
        }
      },
      10_000,
      25,
    );
    if (!isUp) throw new Error(`nginx started but its control socket does not answer: ${lastError}`);
  }

  /** Reloads the running master with the generation just written; on failure `current` goes back to `previous`. */
  private async reload(running: Master, previous: number | null): Promise<void> {
    try {
      await reloadMaster(running, this.paths.errorLog);
    } catch (err) {
      if (previous !== null) await switchCurrent(this.options.prefixDir, previous);
      throw err;
    }
    await this.waitForControl();
  }

  /**
   * Starts a master where none runs. A master killed alone (SIGKILL, the OOM killer) leaves its workers serving
   * open connections on the listening sockets: the new master binds beside them (every listener has reuseport), and
   * once it answers they are told to finish (SIGQUIT: they stop accepting, end their requests, and exit), so nobody's
   * open stream is cut. Their in-flight requests are read first (GET /live through their control socket, moved aside),
   * so the cut-off still reaches them. Workers whose sockets lack reuseport (an older config) are killed instead.
   */
  private async startFresh(): Promise<void> {
    const { prefixDir, logger } = this.options;
    const stale = Number((await readFile(this.paths.pidFile, 'utf8').catch(() => '')).trim());
    const orphans = Number.isInteger(stale) && stale > 1 ? await findOrphanWorkers(stale) : [];
    // A master that died without shutting down leaves its socket file, and nginx refuses to bind over it. Moved, it
    // still reaches the orphans.
    const orphanSocket = join(controlDir(prefixDir), 'orphans.sock');
    await rm(orphanSocket, { force: true });
    if (orphans.length > 0) await rename(controlSocket(prefixDir), orphanSocket).catch(() => undefined);
    await rm(controlSocket(prefixDir), { force: true });
    await this.testConfig(this.paths.confPath);
    let master: Master;
    try {
      master = await startMaster(this.paths);
    } catch (err) {
      if (orphans.length === 0 || !(err instanceof NginxRejectedError) || !/already in use/.test(err.message))
        throw err;
      logger.warn(
        { workers: orphans.map((w) => w.pid) },
        'nginx: the killed master’s workers hold the ports without reuseport; ending them',
      );
      await killOrphanWorkers(stale);
      master = await startMaster(this.paths);
    }
    this.master = master;
    await this.waitForControl();
    logger.info({ pid: master.pid }, 'nginx: started');
    await this.finishOrphans(orphans.filter(isWorkerAlive), orphanSocket);
    await rm(orphanSocket, { force: true });
  }

  /** Reads the in-flight requests of a killed master's workers (for the cut-off), then tells them to finish. */
  private async finishOrphans(left: OrphanWorker[], orphanSocket: string): Promise<void> {
    if (left.length === 0) return;
    const live = await createControlClient(orphanSocket, 2000)
      .get<unknown[]>('/live')
      .catch(() => []);
    for (const { pid } of left) {
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        // Gone meanwhile.
      }
    }
    this.draining = { workers: left, live: Array.isArray(live) ? live : [] };
    this.options.logger.info(
      { workers: left.map((w) => w.pid), requests: this.draining.live.length },
      'nginx: the killed master’s workers finish their open connections',
    );
  }

  /** The sizes for a start: the running master's (adopted as they are, at least the floors), else the snapshot's. */
  private async initialSizes(running: Master | null): Promise<DictSizes> {
    const needs = (await this.options.snapshotNeeds?.()) ?? { gw_routes: 0, gw_certs: 0, gw_stats: 0 };
    if (running === null) return chooseSizes(needs, null, this.limits);
    const conf = await readFile(this.paths.confPath, 'utf8').catch(() => '');
    const current = { ...this.limits.floors, ...parseDicts(conf) };
    return chooseSizes(needs, current, this.limits);
  }

  private async prepareDirs(): Promise<void> {
    const { prefixDir } = this.options;
    for (const dir of ['logs', 'temp', 'gen', 'state'])
      await mkdir(join(prefixDir, dir), { recursive: true, mode: 0o755 });
    await mkdir(controlDir(prefixDir), { recursive: true, mode: 0o700 });
    await chmod(controlDir(prefixDir), 0o700);
    await mkdir(join(snapshotFile(prefixDir), '..'), { recursive: true, mode: 0o700 });
  }

  start(): Promise<StartOutcome> {
    return this.serial(async () => {
      const { logger } = this.options;
      await this.prepareDirs();
      const running = await findMaster(this.paths);
      this.sizes = await this.initialSizes(running);
      const { changed, previous } = await this.ensureGeneration();
      if (!running) {
        await this.startFresh();
        return 'started';
      }
      this.master = running;
      if (!changed) {
        await this.waitForControl();
        logger.info({ pid: running.pid }, 'nginx: adopted the running master');
        return 'adopted';
      }
      await this.reload(running, previous);
      logger.info({ pid: running.pid }, 'nginx: adopted the running master and reloaded it with the new configuration');
      return 'reloaded';
    });
  }

  heal(): Promise<boolean> {
    return this.serial(async () => {
      if (this.master && (await isRunning(this.master))) return false;
      const found = await findMaster(this.paths);
      if (found) {
        this.master = found;
        return false;
      }
      this.options.logger.error({ pid: this.master?.pid ?? null }, 'nginx: the master is not running; starting it');
      await this.prepareDirs();
      await this.ensureGeneration();
      await this.startFresh();
      return true;
    });
  }

  async isUp(): Promise<boolean> {
    return this.master !== null && (await isRunning(this.master));
  }

  stop({ keepServing }: { keepServing: boolean }): Promise<void> {
    return this.serial(async () => {
      const running = this.master;
      this.master = null;
      if (keepServing) return;
      // The workers of a killed master still finishing their connections stop with the gateway too.
      for (const worker of this.draining?.workers.filter(isWorkerAlive) ?? []) {
        try {
          process.kill(worker.pid, 'SIGTERM');
        } catch {
          // Gone meanwhile.
        }
      }
      this.draining = null;
      if (!running) return;
      await stopMaster(running);
      this.options.logger.info({ pid: running.pid }, 'nginx: stopped');
    });
  }

  pid(): number | null {
    return this.master?.pid ?? null;
  }

  dictSizes(): DictSizes {
    return this.sizes;
  }

  fit(needs: DictNeeds, beforeReload: () => Promise<void>, growAt?: number): Promise<boolean> {
    return this.serial(async () => {
      const next = chooseSizes(needs, this.sizes, this.limits, growAt);
      if (sameSizes(next, this.sizes)) return false;
      const before = this.sizes;
      this.sizes = next;
      try {
        const running = this.master !== null && (await isRunning(this.master)) ? this.master : null;
        if (running) await beforeReload();
        const { changed, previous } = await this.ensureGeneration();
        if (!changed || !running) return false;
        await this.reload(running, previous);
        this.options.logger.info(
          { pid: running.pid, sizes: this.sizes },
          'nginx: grew its shared dictionaries (reloaded gracefully)',
        );
        return true;
      } catch (err) {
        this.sizes = before;
        throw err;
      }
    });
  }

  drainingRequests(): unknown[] {
    if (this.draining && !this.draining.workers.some(isWorkerAlive)) this.draining = null;
    return this.draining?.live ?? [];
  }
}

export function createHttpInstance(options: HttpInstanceOptions): HttpInstance {
  return new NginxHttpInstance(options);
}
