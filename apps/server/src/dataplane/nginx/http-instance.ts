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
   * nginx was reloaded (what it holds must then be read back).
   */
  fit(needs: DictNeeds, beforeReload: () => Promise<void>): Promise<boolean>;
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

export function createHttpInstance(options: HttpInstanceOptions): HttpInstance {
  const { prefixDir, logger } = options;
  const bin = options.nginxBin ?? 'nginx';
  const paths: MasterPaths = {
    bin,
    prefixDir,
    confPath: join(prefixDir, CURRENT_LINK, 'nginx.conf'),
    pidFile: join(prefixDir, 'nginx.pid'),
    errorLog: join(logsDir({ prefixDir }), 'error.log'),
    outputLog: join(logsDir({ prefixDir }), 'nginx.out'),
  };
  const control = createControlClient(controlSocket(prefixDir));
  const limits = options.dictLimits ?? DEFAULT_DICT_LIMITS;
  let master: Master | null = null;
  let sizes: DictSizes = limits.floors;
  /** Workers of a killed master finishing their connections, and the requests they carried. */
  let draining: { workers: OrphanWorker[]; live: unknown[] } | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  };

  async function readGeneration(generation: number, names: string[]): Promise<ConfigFiles | null> {
    const files: ConfigFiles = {};
    for (const name of names) {
      const text = await readFile(join(generationDir(prefixDir, generation), name), 'utf8').catch(() => null);
      if (text === null) return null;
      files[name] = text;
    }
    return files;
  }

  /** Makes `current` hold what this control plane renders; returns whether it had to write a new generation. */
  async function ensureGeneration(): Promise<{ changed: boolean; previous: number | null }> {
    const previous = await readCurrentGeneration(prefixDir);
    if (previous !== null) {
      const wanted = options.render(generationDir(prefixDir, previous), sizes);
      const onDisk = await readGeneration(previous, Object.keys(wanted));
      if (onDisk && sameFiles(onDisk, wanted)) return { changed: false, previous };
    }
    const next = ((await listGenerations(prefixDir)).at(-1) ?? 0) + 1;
    await writeGeneration(prefixDir, next, options.render(generationDir(prefixDir, next), sizes));
    try {
      await testConfig(join(generationDir(prefixDir, next), 'nginx.conf'));
    } catch (err) {
      await pruneGenerations(prefixDir, options.keepGenerations ?? 3, [previous]);
      throw err;
    }
    await switchCurrent(prefixDir, next);
    await pruneGenerations(prefixDir, options.keepGenerations ?? 3, [next, previous]);
    return { changed: true, previous };
  }

  async function testConfig(confPath: string): Promise<void> {
    try {
      await runCommand(bin, ['-t', '-q', ...masterArgs({ ...paths, confPath })]);
    } catch (err) {
      if (err instanceof CommandError) throw new NginxRejectedError(describeRejection(err.stderr));
      throw err;
    }
  }

  /** Up = the master runs and its workers answer the control socket (the Lua module loaded). */
  async function waitForControl(): Promise<void> {
    let lastError = '';
    const isUp = await waitFor(
      async () => {
        try {
          await control.get('/state');
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

  /**
   * Starts a master where none runs. A master killed alone (SIGKILL, the OOM killer) leaves its workers serving
   * open connections on the listening sockets: the new master binds beside them (every listener has reuseport), and
   * once it answers they are told to finish (SIGQUIT: they stop accepting, end their requests, and exit), so nobody's
   * open stream is cut. Their in-flight requests are read first (GET /live through their control socket, moved aside),
   * so the cut-off still reaches them. Workers whose sockets lack reuseport (an older config) are killed instead.
   */
  async function startFresh(): Promise<void> {
    const stale = Number((await readFile(paths.pidFile, 'utf8').catch(() => '')).trim());
    const orphans = Number.isInteger(stale) && stale > 1 ? await findOrphanWorkers(stale) : [];
    // A master that died without shutting down leaves its socket file, and nginx refuses to bind over it. Moved, it
    // still reaches the orphans.
    const orphanSocket = join(controlDir(prefixDir), 'orphans.sock');
    await rm(orphanSocket, { force: true });
    if (orphans.length > 0) await rename(controlSocket(prefixDir), orphanSocket).catch(() => undefined);
    await rm(controlSocket(prefixDir), { force: true });
    await testConfig(paths.confPath);
    try {
      master = await startMaster(paths);
    } catch (err) {
      if (orphans.length === 0 || !(err instanceof NginxRejectedError) || !/already in use/.test(err.message))
        throw err;
      logger.warn(
        { workers: orphans.map((w) => w.pid) },
        'nginx: the killed master’s workers hold the ports without reuseport; ending them',
      );
      await killOrphanWorkers(stale);
      master = await startMaster(paths);
    }
    await waitForControl();
    logger.info({ pid: master.pid }, 'nginx: started');
    const left = orphans.filter(isWorkerAlive);
    if (left.length > 0) {
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
      draining = { workers: left, live: Array.isArray(live) ? live : [] };
      logger.info(
        { workers: left.map((w) => w.pid), requests: draining.live.length },
        'nginx: the killed master’s workers finish their open connections',
      );
    }
    await rm(orphanSocket, { force: true });
  }

  /** The sizes for a start: the running master's (adopted as they are, at least the floors), else the snapshot's. */
  async function initialSizes(running: Master | null): Promise<DictSizes> {
    const needs = (await options.snapshotNeeds?.()) ?? { gw_routes: 0, gw_certs: 0, gw_stats: 0 };
    if (running === null) return chooseSizes(needs, null, limits);
    const conf = await readFile(paths.confPath, 'utf8').catch(() => '');
    const current = { ...limits.floors, ...parseDicts(conf) };
    return chooseSizes(needs, current, limits);
  }

  async function prepareDirs(): Promise<void> {
    for (const dir of ['logs', 'temp', 'gen', 'state'])
      await mkdir(join(prefixDir, dir), { recursive: true, mode: 0o755 });
    await mkdir(controlDir(prefixDir), { recursive: true, mode: 0o700 });
    await chmod(controlDir(prefixDir), 0o700);
    await mkdir(join(snapshotFile(prefixDir), '..'), { recursive: true, mode: 0o700 });
  }

  return {
    control,
    start: () =>
      serial(async () => {
        await prepareDirs();
        const running = await findMaster(paths);
        sizes = await initialSizes(running);
        const { changed, previous } = await ensureGeneration();
        if (running) {
          master = running;
          if (!changed) {
            await waitForControl();
            logger.info({ pid: running.pid }, 'nginx: adopted the running master');
            return 'adopted';
          }
          try {
            await reloadMaster(running, paths.errorLog);
          } catch (err) {
            if (previous !== null) await switchCurrent(prefixDir, previous);
            throw err;
          }
          await waitForControl();
          logger.info(
            { pid: running.pid },
            'nginx: adopted the running master and reloaded it with the new configuration',
          );
          return 'reloaded';
        }
        await startFresh();
        return 'started';
      }),
    heal: () =>
      serial(async () => {
        if (master && (await isRunning(master))) return false;
        const found = await findMaster(paths);
        if (found) {
          master = found;
          return false;
        }
        logger.error({ pid: master?.pid ?? null }, 'nginx: the master is not running; starting it');
        await prepareDirs();
        await ensureGeneration();
        await startFresh();
        return true;
      }),
    async isUp() {
      return master !== null && (await isRunning(master));
    },
    stop: ({ keepServing }) =>
      serial(async () => {
        const running = master;
        master = null;
        if (keepServing) return;
        // The workers of a killed master still finishing their connections stop with the gateway too.
        for (const worker of draining?.workers.filter(isWorkerAlive) ?? []) {
          try {
            process.kill(worker.pid, 'SIGTERM');
          } catch {
            // Gone meanwhile.
          }
        }
        draining = null;
        if (!running) return;
        await stopMaster(running);
        logger.info({ pid: running.pid }, 'nginx: stopped');
      }),
    pid: () => master?.pid ?? null,
    dictSizes: () => sizes,
    fit: (needs, beforeReload) =>
      serial(async () => {
        const next = chooseSizes(needs, sizes, limits);
        if (sameSizes(next, sizes)) return false;
        const before = sizes;
        sizes = next;
        try {
          const running = master !== null && (await isRunning(master)) ? master : null;
          if (running) await beforeReload();
          const { changed, previous } = await ensureGeneration();
          if (!changed || !running) return false;
          try {
            await reloadMaster(running, paths.errorLog);
          } catch (err) {
            if (previous !== null) await switchCurrent(prefixDir, previous);
            throw err;
          }
          await waitForControl();
          logger.info({ pid: running.pid, sizes }, 'nginx: grew its shared dictionaries (reloaded gracefully)');
          return true;
        } catch (err) {
          sizes = before;
          throw err;
        }
      }),
    drainingRequests() {
      if (draining && !draining.workers.some(isWorkerAlive)) draining = null;
      return draining?.live ?? [];
    },
  };
}
