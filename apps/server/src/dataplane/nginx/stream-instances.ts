import { createServer as createTcpServer } from 'node:net';
import { createSocket } from 'node:dgram';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import type { DataPlaneLogger } from '../types.js';
import {
  findMaster,
  isRunning,
  killOrphanWorkers,
  reloadMaster,
  startMaster,
  stopMaster,
  type Master,
  type MasterPaths,
} from './master-process.js';
import { logsDir, streamRoot } from './options.js';
import { streamInstanceDir } from './render-stream.js';

// One nginx per TCP/UDP service (render-stream.ts). The instance's nginx.conf on disk is always the config its
// running master was started with (it is rewritten only while no master runs), so a restarted control plane can
// tell, by comparing text, which instances it may adopt and which it must replace.

export interface WantedInstance {
  conf: string;
  /** The certificate it serves (TLS termination), so a renewal reloads exactly the instances that use it. */
  certName: string | null;
  port: number;
  proto: 'tcp' | 'udp';
}

export interface StreamInstances {
  /** Adopts the instances a previous control plane left running (before the first sync). */
  adopt(): Promise<void>;
  /** Makes the running instances exactly `wanted` (by key); returns why some could not start, by key. */
  sync(wanted: ReadonlyMap<string, WantedInstance>): Promise<Map<string, string>>;
  /**
   * A scoped run's instances: those of `keys` made exactly `wanted` (a key of `keys` not in `wanted` stops), every
   * other instance left alone; returns why some could not start, by key.
   */
  patch(wanted: ReadonlyMap<string, WantedInstance>, keys: readonly string[]): Promise<Map<string, string>>;
  /** Restarts instances that died; returns their keys. */
  heal(): Promise<string[]>;
  /** A certificate was renewed: reload (gracefully) the instances that serve it. */
  reloadServing(certName: string): Promise<void>;
  stop(options: { keepServing: boolean }): Promise<void>;
  /** Keys of the running instances, for tests and diagnostics. */
  running(): Map<string, number>;
}

interface Running {
  master: Master;
  wanted: WantedInstance;
}

const START_CONCURRENCY = 8;

/** A port some other program holds: say so at once (nginx would retry bind() for 2.5 s and then fail anyway). */
function isPortFree(proto: 'tcp' | 'udp', port: number, address: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (proto === 'tcp') {
      const server = createTcpServer();
      server.once('error', () => resolve(false));
      server.listen({ port, host: address ?? '0.0.0.0', exclusive: true }, () => server.close(() => resolve(true)));
    } else {
      const socket = createSocket('udp4');
      socket.once('error', () => resolve(false));
      socket.bind({ port, address: address ?? '0.0.0.0', exclusive: true }, () => socket.close(() => resolve(true)));
    }
  });
}

/** Where instance `key` keeps its config, pid file and logs. */
function instancePaths(prefixDir: string, bin: string, key: string): MasterPaths {
  const dir = streamInstanceDir(prefixDir, key);
  return {
    bin,
    prefixDir: dir,
    confPath: join(dir, 'nginx.conf'),
    pidFile: join(dir, 'nginx.pid'),
    errorLog: join(dir, 'error.log'),
    outputLog: join(dir, 'nginx.out'),
  };
}

/** Runs `work` for each item, a few at a time (boot may start a hundred instances). */
async function each<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let item = items[next++]; item !== undefined; item = items[next++]) await work(item);
  };
  await Promise.all(Array.from({ length: Math.min(START_CONCURRENCY, items.length) }, worker));
}

/** Directories of instances that are neither running nor wanted (left by a crash) go. */
async function removeLeftovers(prefixDir: string, keep: (name: string) => boolean): Promise<void> {
  for (const name of await readdir(streamRoot(prefixDir)).catch(() => [])) {
    if (/^(tcp|udp)-\d{1,5}$/.test(name) && !keep(name)) {
      await rm(streamInstanceDir(prefixDir, name), { recursive: true, force: true });
    }
  }
}

/**
 * Starts (or replaces, with `replace`) the instances of `wanted` that do not run as wanted; returns why some could
 * not start, by key.
 */
async function convergeInstances(
  instances: Map<string, Running>,
  wanted: ReadonlyMap<string, WantedInstance>,
  replace: (key: string, want: WantedInstance) => Promise<void>,
): Promise<Map<string, string>> {
  const failures = new Map<string, string>();
  const todo: [string, WantedInstance][] = [];
  for (const [key, want] of wanted) {
    const running = instances.get(key);
    if (running && running.wanted.conf === want.conf && (await isRunning(running.master))) {
      running.wanted = want;
      continue;
    }
    todo.push([key, want]);
  }
  await each(todo, async ([key, want]) => {
    try {
      await replace(key, want);
    } catch (err) {
      failures.set(key, err instanceof Error ? err.message : String(err));
    }
  });
  return failures;
}

export function createStreamInstances(options: {
  prefixDir: string;
  logger: DataPlaneLogger;
  nginxBin?: string;
  listenAddress?: string;
}): StreamInstances {
  const { prefixDir, logger } = options;
  const bin = options.nginxBin ?? 'nginx';
  const pathsOf = (key: string): MasterPaths => instancePaths(prefixDir, bin, key);
  const instances = new Map<string, Running>();
  let queue: Promise<unknown> = Promise.resolve();

  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  };

  async function startInstance(key: string, wanted: WantedInstance): Promise<void> {
    const paths = pathsOf(key);
    await mkdir(paths.prefixDir, { recursive: true, mode: 0o755 });
    await mkdir(logsDir({ prefixDir }), { recursive: true, mode: 0o755 });
    const stale = Number((await readFile(paths.pidFile, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(stale) && stale > 1) await killOrphanWorkers(stale);
    if (!(await isPortFree(wanted.proto, wanted.port, options.listenAddress))) {
      throw new Error(`port ${wanted.port}/${wanted.proto} is in use by another program on the gateway`);
    }
    await writeFileAtomic(paths.confPath, wanted.conf);
    const master = await startMaster(paths);
    instances.set(key, { master, wanted });
  }

  async function stopInstance(key: string, running: Running): Promise<void> {
    instances.delete(key);
    // Fast shutdown: the service's connections close now (a disabled or deleted service is cut at once).
    await stopMaster(running.master);
  }

  const converge = (wanted: ReadonlyMap<string, WantedInstance>) =>
    convergeInstances(instances, wanted, async (key, want) => {
      const running = instances.get(key);
      // An edit replaces the instance: the edited service's own connections end, nobody else's.
      if (running) await stopInstance(key, running);
      await startInstance(key, want);
    });

  return {
    adopt: () =>
      serial(async () => {
        const keys = (await readdir(streamRoot(prefixDir)).catch(() => [])).filter((name) =>
          /^(tcp|udp)-\d{1,5}$/.test(name),
        );
        for (const key of keys) {
          const paths = pathsOf(key);
          const master = await findMaster(paths);
          if (!master) continue;
          const conf = await readFile(paths.confPath, 'utf8').catch(() => '');
          const [proto, port] = key.split('-') as ['tcp' | 'udp', string];
          // The cert name is unknown until the first sync compares the wanted config; the text decides adoption.
          instances.set(key, { master, wanted: { conf, certName: null, proto, port: Number(port) } });
        }
        if (instances.size > 0)
          logger.info({ count: instances.size }, 'nginx: adopted running TCP/UDP service instances');
      }),

    sync: (wanted) =>
      serial(async () => {
        const gone = [...instances].filter(([key]) => !wanted.has(key));
        await each(gone, async ([key, running]) => stopInstance(key, running));
        const failures = await converge(wanted);
        await removeLeftovers(prefixDir, (name) => wanted.has(name) || instances.has(name));
        return failures;
      }),

    patch: (wanted, keys) =>
      serial(async () => {
        const gone = keys.filter((key) => !wanted.has(key));
        await each(gone, async (key) => {
          const running = instances.get(key);
          if (running) await stopInstance(key, running);
        });
        const failures = await converge(new Map([...wanted].filter(([key]) => keys.includes(key))));
        // Their directories go, as the full sync's leftovers do (only these keys: no walk over every instance).
        for (const key of gone) await rm(streamInstanceDir(prefixDir, key), { recursive: true, force: true });
        return failures;
      }),

    heal: () =>
      serial(async () => {
        const healed: string[] = [];
        for (const [key, running] of [...instances]) {
          if (await isRunning(running.master)) continue;
          logger.error({ instance: key }, 'nginx: a TCP/UDP service instance died; starting it again');
          instances.delete(key);
          try {
            await startInstance(key, running.wanted);
            healed.push(key);
          } catch (err) {
            logger.error({ err, instance: key }, 'nginx: could not restart a TCP/UDP service instance');
          }
        }
        return healed;
      }),

    reloadServing: (certName) =>
      serial(async () => {
        for (const [key, running] of instances) {
          if (running.wanted.certName !== certName) continue;
          // Graceful: open sessions finish on the old certificate, new ones get the new one.
          await reloadMaster(running.master, pathsOf(key).errorLog).catch((err: unknown) =>
            logger.error({ err, instance: key }, 'nginx: reload for a renewed certificate failed'),
          );
        }
      }),

    stop: ({ keepServing }) =>
      serial(async () => {
        const all = [...instances];
        instances.clear();
        if (keepServing) return;
        await each(all, async ([, running]) => stopMaster(running.master));
      }),

    running: () => new Map([...instances].map(([key, running]) => [key, running.master.pid])),
  };
}
