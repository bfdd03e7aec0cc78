import { fileURLToPath } from 'node:url';
import { ApiClient } from './api.js';
import type { Lab } from './lab.js';
import type { ManagedProcess } from './processes.js';
import { recordGateway } from './gateway-logs.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { SERVER_ENTRY } from '../../apps/server/src/test/requirements.js';

// The real gateway (apps/server/dist/main.js, with nginx and wireguard-go under it) inside the gateway
// namespace, with a fresh data directory. restart() reuses the data directory: that is the crash-recovery test.

/** The start command's supervisor (what `scripts/run.sh`, the image and the systemd unit run). */
export const START_COMMAND_ENTRY = fileURLToPath(new URL('../../apps/server/dist/supervisor.js', import.meta.url));

export const ADMIN = { username: 'admin', password: 'e2e-admin-password' } as const;
export const API_PORT = 3000;
export const WG_PORT = 51820;
export const VPN_SUBNET = '10.44.0.0/16';
export const TCP_PORT_RANGE = [30000, 30100] as const;

export interface GatewayOptions {
  ns: string;
  /** Address in the namespace where the tests reach the API. */
  apiIp: string;
  /** POSTERN_PUBLIC_HOST: what nodes dial and public URLs show. */
  publicHost: string;
  /** Unique on the machine (WireGuard control sockets are shared by all namespaces). */
  wgInterface: string;
  /** Extra or overriding environment (e.g. POSTERN_DATAPLANE=off). */
  env?: Record<string, string>;
  /** Run the start command's supervisor instead of the control plane itself. */
  entry?: 'control-plane' | 'start-command';
  /** Data directory (default: a fresh temp dir of the lab). */
  dataDir?: string;
  bootTimeoutMs?: number;
}

export interface Gateway {
  baseUrl: string;
  dataDir: string;
  readonly process: ManagedProcess;
  /** A client signed in as the bootstrap admin. */
  login(): Promise<ApiClient>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash: no shutdown code runs. */
  kill(): Promise<void>;
  /** Starts the server again on the same data directory and waits until it answers. */
  restart(): Promise<void>;
}

export async function startGateway(lab: Lab, options: GatewayOptions): Promise<Gateway> {
  const dataDir = options.dataDir ?? lab.makeTempDir('data');
  const entry = options.entry === 'start-command' ? START_COMMAND_ENTRY : SERVER_ENTRY;
  const baseUrl = `http://${options.apiIp}:${API_PORT}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    POSTERN_DATA_DIR: dataDir,
    POSTERN_HOST: '0.0.0.0',
    POSTERN_PORT: String(API_PORT),
    POSTERN_PUBLIC_HOST: options.publicHost,
    POSTERN_ADMIN_USERNAME: ADMIN.username,
    POSTERN_ADMIN_PASSWORD: ADMIN.password,
    POSTERN_VPN_SUBNET: VPN_SUBNET,
    POSTERN_TCP_PORT_RANGE: TCP_PORT_RANGE.join('-'),
    POSTERN_WG_INTERFACE: options.wgInterface,
    POSTERN_WG_PORT: String(WG_PORT),
    POSTERN_HTTP_PORT: '80',
    POSTERN_HTTPS_PORT: '443',
    POSTERN_DATAPLANE: 'real',
    // Backends given by DNS name are resolved inside the lab only (nothing answers there: a name never resolves).
    POSTERN_RESOLVERS: '127.0.0.1',
    ...options.env,
  };
  const anonymous = new ApiClient(baseUrl);
  let current: ManagedProcess;
  // A failed test saves what this gateway wrote (harness/failure-evidence.ts); its logs are read before the lab goes.
  const evidence = recordGateway(options.ns, dataDir);
  lab.beforeRemove(evidence.snapshot);

  const boot = async (): Promise<void> => {
    // POSTERN_E2E_CPU_PROF=<dir>: V8 CPU profiles of the supervisor and control plane (bench/README.md, profiling).
    const profile = process.env.POSTERN_E2E_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.POSTERN_E2E_CPU_PROF}`]
      : [];
    current = lab.spawn(options.ns, 'gateway server', process.execPath, [...profile, entry], { env, cwd: dataDir });
    evidence.addRun(current);
    const child = current;
    await waitFor(
      async () => {
        if (!child.isRunning) throw new Error(`the server exited; output:\n${child.text.slice(-4000)}`);
        // Resolves only with the contract's { status: 'ok' }: anything else is thrown, and waited past.
        await anonymous.health();
        return true;
      },
      { timeoutMs: options.bootTimeoutMs ?? 30_000, intervalMs: 100, what: `the gateway API at ${baseUrl}` },
    ).catch((error: unknown) => {
      throw new Error(
        `${error instanceof Error ? error.message : String(error)}\nserver output:\n${child.text.slice(-4000)}`,
      );
    });
  };
  await boot();

  return {
    baseUrl,
    dataDir,
    get process() {
      return current;
    },
    login: () => anonymous.login(ADMIN.username, ADMIN.password),
    stop: () => current.stop(),
    async kill() {
      current.kill('SIGKILL');
      await current.exited;
    },
    async restart() {
      await current.stop();
      await boot();
    },
  };
}
