import { appendFileSync, chownSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { run, runAllowingFailure, runInAllowingFailure } from './exec.js';
import type { Lab } from './lab.js';
import type { ManagedProcess } from './processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';

// A private PostgreSQL inside one of the lab's namespaces (a gateway in a namespace cannot reach the machine's
// cluster), in a fresh data directory of the lab. Debian's server binaries (install-deps installs postgresql); they
// refuse to run as root, so initdb and the server run as the `postgres` OS user. Trust authentication, by default on
// 127.0.0.1 of the namespace only (a gateway in the same namespace); `listen` puts it on a lab address instead, for
// several gateways in their own namespaces, and trusts only the lab network it names.

const POSTGRES_ROOT = '/usr/lib/postgresql';
const POSTGRES_USER = 'postgres';
/** The namespace's own loopback: no other PostgreSQL listens there. */
export const LAB_POSTGRES_PORT = 5432;

/** Debian's newest installed server version's bin directory, or null when PostgreSQL is not installed. */
export function postgresBinDir(): string | null {
  let versions: number[];
  try {
    versions = readdirSync(POSTGRES_ROOT)
      .map(Number)
      .filter((version) => Number.isInteger(version));
  } catch {
    return null;
  }
  const newest = Math.max(...versions);
  return Number.isFinite(newest) ? join(POSTGRES_ROOT, String(newest), 'bin') : null;
}

export interface LabPostgresOptions {
  /** Listen on this lab address (default 127.0.0.1: only the namespace itself connects). */
  listen?: { address: string; /** Clients trusted (pg_hba), e.g. the lab bridge's "10.213.8.0/24". */ trust: string };
}

export interface LabPostgres {
  /** What POSTERN_DATABASE_URL is set to. */
  url: string;
  dataDir: string;
  readonly process: ManagedProcess;
  readonly isRunning: boolean;
  /** Fast shutdown (SIGINT: open sessions are ended) and wait for the exit; SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** Starts the server again on the same data directory and waits until it accepts connections. */
  start(): Promise<void>;
}

async function userIds(user: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', user]), run('id', ['-g', user])]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/** initdb into a new directory of the lab, then the server in `ns` at 127.0.0.1 (or `listen`):LAB_POSTGRES_PORT. */
export async function startLabPostgres(lab: Lab, ns: string, options: LabPostgresOptions = {}): Promise<LabPostgres> {
  const host = options.listen?.address ?? '127.0.0.1';
  const bin = postgresBinDir();
  if (bin === null) throw new Error(`PostgreSQL is not installed (no ${POSTGRES_ROOT}/<version>/bin)`);
  // The lab removes the directory with everything else; the server's socket lives there too, not in /run.
  const root = lab.makeTempDir('pg');
  const { uid, gid } = await userIds(POSTGRES_USER);
  chownSync(root, uid, gid);
  const dataDir = join(root, 'data');
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, LC_ALL: 'C' };
  const initdb = await runAllowingFailure(
    'runuser',
    [
      '-u',
      POSTGRES_USER,
      '--',
      join(bin, 'initdb'),
      '--pgdata',
      dataDir,
      '--auth=trust',
      '--username',
      POSTGRES_USER,
      '--encoding=UTF8',
      '--no-locale',
      '--no-sync',
    ],
    { env, timeoutMs: 60_000 },
  );
  if (initdb.code !== 0) throw new Error(`initdb failed (${String(initdb.code)}): ${initdb.stderr || initdb.stdout}`);
  // initdb trusts loopback only; the lab network's gateways connect over the bridge.
  if (options.listen !== undefined)
    appendFileSync(join(dataDir, 'pg_hba.conf'), `host all all ${options.listen.trust} trust\n`);

  const port = String(LAB_POSTGRES_PORT);
  let current: ManagedProcess;
  const start = async (): Promise<void> => {
    // setpriv execs the server, so the pid is the postmaster's own and a signal reaches it (runuser would fork).
    current = lab.spawn(
      ns,
      'postgres',
      'setpriv',
      [
        `--reuid=${POSTGRES_USER}`,
        `--regid=${POSTGRES_USER}`,
        '--init-groups',
        '--',
        join(bin, 'postgres'),
        '-D',
        dataDir,
        '-k',
        root,
        '-p',
        port,
        '-c',
        `listen_addresses=${host}`,
        '-c',
        'fsync=off',
      ],
      { env },
    );
    const child = current;
    await waitFor(
      async () => {
        if (!child.isRunning) throw new Error(`postgres exited; output:\n${child.text.slice(-4000)}`);
        // Over TCP, as the gateway connects; exit 0 = accepting connections.
        const ready = await runInAllowingFailure(ns, join(bin, 'pg_isready'), ['-q', '-h', host, '-p', port], {
          env,
          timeoutMs: 5000,
        });
        return ready.code === 0;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `PostgreSQL at ${host}:${port} in ${ns}` },
    ).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${child.text.slice(-4000)}`);
    });
  };

  const stop = async (graceMs = 10_000): Promise<void> => {
    const child = current;
    if (!child.isRunning) return;
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await child.exited;
    clearTimeout(timer);
  };

  await start();
  return {
    url: `postgres://${POSTGRES_USER}@${host}:${port}/postgres`,
    dataDir,
    get process() {
      return current;
    },
    get isRunning() {
      return current.isRunning;
    },
    stop,
    start,
  };
}
