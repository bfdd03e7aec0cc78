import { chmod, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CommandError, runCommand } from '../exec.js';
import { NginxRejectedError, type ConfigFiles, type DataPlaneLogger } from '../types.js';
import { createControlClient, type ControlClient } from './control-client.js';
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
  isRunning,
  killOrphanWorkers,
  masterArgs,
  reloadMaster,
  startMaster,
  stopMaster,
  type Master,
  type MasterPaths,
} from './master-process.js';
import { controlDir, controlSocket, logsDir, snapshotFile } from './options.js';
import { waitFor } from './process-info.js';

// The HTTP instance's lifecycle. Its config changes only with the gateway's own settings or an upgrade, so almost
// every start of the control plane ADOPTS the running master: nothing is reloaded, no connection is touched. A
// master that died (or was never started) is started from the newest generation; its Lua module loads the last
// pushed routes and certificates from disk before its first request, and the control plane pushes the rest.

export interface HttpInstanceOptions {
  prefixDir: string;
  /** Renders the generation that lives in `generationDir` (the Lua module is loaded from there). */
  render: (generationDir: string) => ConfigFiles;
  logger: DataPlaneLogger;
  nginxBin?: string;
  keepGenerations?: number;
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
  let master: Master | null = null;
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
      const wanted = options.render(generationDir(prefixDir, previous));
      const onDisk = await readGeneration(previous, Object.keys(wanted));
      if (onDisk && sameFiles(onDisk, wanted)) return { changed: false, previous };
    }
    const next = ((await listGenerations(prefixDir)).at(-1) ?? 0) + 1;
    await writeGeneration(prefixDir, next, options.render(generationDir(prefixDir, next)));
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

  async function startFresh(): Promise<void> {
    // A master killed with SIGKILL leaves its workers serving on the old sockets: they must go first.
    const stale = Number((await readFile(paths.pidFile, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(stale) && stale > 1) await killOrphanWorkers(stale);
    // A master that died without shutting down leaves its socket file, and nginx refuses to bind over it.
    await rm(controlSocket(prefixDir), { force: true });
    await testConfig(paths.confPath);
    master = await startMaster(paths);
    await waitForControl();
    logger.info({ pid: master.pid }, 'nginx: started');
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
        if (!running || keepServing) return;
        await stopMaster(running);
        logger.info({ pid: running.pid }, 'nginx: stopped');
      }),
    pid: () => master?.pid ?? null,
  };
}
