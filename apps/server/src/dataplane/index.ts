import { mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { AcmeConfig, ChallengeStore } from './certs/acme.js';
import { createCertificateManager, type CertificateManager, type CertificateStore } from './certs/manager.js';
import type { AcmeSettingsSource, SharedCertificates, SharedChallenges } from '../model/certificates.js';
import { createConnectionCutter } from './connections.js';
import { createListenerLimits } from './listener-limits.js';
import { createAccessLogSource } from './logs/log-source.js';
import { createHttpInstance } from './nginx/http-instance.js';
import { DEFAULT_DICT_LIMITS, readSnapshotNeeds, withLiveFor, type DictLimits } from './nginx/dict-sizes.js';
import { readLuaModule } from './nginx/lua-source.js';
import { checkHttps } from './nginx/self-check.js';
import {
  DEFAULT_HANDSHAKE_TIMEOUT_SECONDS,
  DEFAULT_WORKER_CONNECTIONS,
  DEFAULT_WORKER_USER,
  HTTP_ACCESS_LOG,
  STREAM_ACCESS_LOG,
  type NginxRenderOptions,
} from './nginx/options.js';
import { machineWorkerConnections, openFilesFor, openFilesHardLimit } from './nginx/sizing.js';
import { renderHttpInstance } from './nginx/render-main.js';
import { createStreamInstances } from './nginx/stream-instances.js';
import {
  createStaticHosts,
  planDataPlaneSliced,
  planStreams,
  planScoped as planScopedState,
  readResolvers,
  type DataPlanePlan,
  type ScopedPlan,
} from './plan.js';
import { PemDigests } from './proxy/pem-digests.js';
import { createProxy, type Proxy } from './proxy.js';
import { createGatewayReach, type GatewayReach } from './reach.js';
import { createNetworkGuard } from './reconcile/network-guard.js';
import { createReconciler } from './reconciler.js';
import { createSupervisor, type SelfRepairing, type Supervisor } from './supervisor.js';
import { createStreamTrafficCounter, readTraffic } from './traffic.js';
import { lookupUser } from './system-user.js';
import type { ApplyScope, DataPlane, DataPlaneLogger, DesiredState, DesiredStreamRoute, ScopedState } from './types.js';
import { gatewayAddress } from './wireguard/addresses.js';
import { createWireGuardDriver } from './wireguard/driver.js';
import { readHostNetworks } from './wireguard/host-routes.js';
import { createStatusPoller } from './wireguard/status.js';

export { renderNodeConfig } from './wireguard/render.js';
export { statusFromHandshake, ONLINE_THRESHOLD_SECONDS, IDLE_THRESHOLD_SECONDS } from './wireguard/status.js';
export { allocateAddress, gatewayAddress, parseSubnet } from './wireguard/addresses.js';
export type * from './types.js';

export interface DataPlaneConfig {
  dataDir: string;
  wgInterface: string;
  wgPort: number;
  httpPort: number;
  httpsPort: number;
  noDomainHttpsPort: number;
  vpnSubnet: string;
  tcpPortRange: readonly [number, number];
  publicHost: string;
  /** This gateway's tunnel address (no prefix): nginx answers the tunnel health check there. Default: first host. */
  tunnelAddress?: string;
  /** Where nginx reaches the control plane (the console and API it publishes). */
  consoleUpstream: string;
  /** Name servers for backends given by DNS name; undefined: /etc/resolv.conf's. */
  resolvers?: readonly string[] | undefined;
  /** The database's host (a name or an address; undefined: SQLite), which no gateway node's subnet may take. */
  databaseHost?: string | undefined;
  /** The shortest prefix of a subnet a node's token may route (POSTERN_NODE_NETWORK_MIN_PREFIX); default 16. */
  nodeNetworkMinPrefix?: number;
  statusPollMs?: number;
  /** How often dead processes and a vanished interface are looked for (default 1 s). */
  healIntervalMs?: number;
  /** How often what nginx and WireGuard serve is compared with the DB (default 60 s; POSTERN_DRIFT_CHECK_INTERVAL). */
  driftCheckIntervalMs?: number;
  nginxBin?: string;
  /** Bind nginx to one address only (tests). */
  listenAddress?: string;
  nginxWorkerUser?: string;
  /** Floors and ceilings of nginx's shared dictionaries (default DEFAULT_DICT_LIMITS; tests make them small). */
  dictLimits?: DictLimits;
  acme: AcmeConfig;
  /** The public listeners against one abusive client (README, "The public listeners"); absent: no per-address limit. */
  listener?: ListenerSettings;
}

export interface ListenerSettings {
  /** Connections one IPv4 address may hold at once to the web ports, and apart to the TCP service ports; 0: none. */
  maxConnectionsPerAddress: number;
  /** Sources the limit leaves alone. */
  exempt: readonly string[];
  /** Seconds for a TLS handshake and, again, for a request's headers. */
  handshakeTimeoutSeconds: number;
  /** Connections per nginx worker; undefined: sized to the machine (nginx/sizing.ts). */
  workerConnections?: number | undefined;
}

export interface DataPlaneDeps {
  loadDesiredState: () => Promise<DesiredState>;
  /** The rows of a change's scope (db/desired-state.ts `loadScopedState`); absent: every apply reads everything. */
  loadScopedState?: (scope: ApplyScope) => Promise<ScopedState>;
  /** The TCP/UDP services alone (db/desired-state.ts `loadStreamState`): what the traffic counters need. */
  loadStreamRoutes: () => Promise<DesiredStreamRoute[]>;
  logger: DataPlaneLogger;
  /** Certificate state per domain (the `certificates` table), so a restart neither re-issues nor forgets back-off. */
  certificateStore: CertificateStore;
  /** Each domain's CA, challenge and DNS provider, and the ACME accounts every gateway shares. Absent: env defaults. */
  acmeSettings?: AcmeSettingsSource | undefined;
  /**
   * Several gateways on one database: the certificates and HTTP-01 answers every gateway serves, and the lease
   * deciding which gateway runs ACME. Absent: this gateway alone.
   */
  shared?:
    | {
        certificates: SharedCertificates;
        challenges: SharedChallenges;
        /** Whether this gateway holds the `certificates` lease now. */
        isHolder: () => boolean;
        /** `listener` runs when this gateway takes the lease (the holder before it died or left); returns the stop. */
        onTaken: (listener: () => void) => () => void;
      }
    | undefined;
}

/** The real data plane plus the ACME answers nginx serves (the domain check puts its probe token there too). */
export type RealDataPlane = DataPlane & { challenges: ChallengeStore };

/** POSTERN_NODE_NETWORK_MIN_PREFIX's default. */
export const DEFAULT_NODE_NETWORK_MIN_PREFIX = 16;

/** What the renderers need to know, from the data plane's config (the offline data plane renders the same). */
export function renderOptionsFor(config: DataPlaneConfig): NginxRenderOptions {
  const workerConnections = config.listener?.workerConnections ?? machineWorkerConnections();
  return {
    prefixDir: join(config.dataDir, 'nginx'),
    certsDir: join(config.dataDir, 'certs'),
    httpPort: config.httpPort,
    httpsPort: config.httpsPort,
    noDomainHttpsPort: config.noDomainHttpsPort,
    consoleHost: config.publicHost,
    consoleUpstream: config.consoleUpstream,
    tunnelAddress: config.tunnelAddress ?? gatewayAddress(config.vpnSubnet),
    resolvers: config.resolvers ?? readResolvers(),
    workerConnections,
    workerOpenFiles: openFilesFor(workerConnections, openFilesHardLimit()),
    handshakeTimeoutSeconds: config.listener?.handshakeTimeoutSeconds ?? DEFAULT_HANDSHAKE_TIMEOUT_SECONDS,
    ...(config.listenAddress === undefined ? {} : { listenAddress: config.listenAddress }),
  };
}

/** nginx workers need a real unprivileged user; Debian has www-data, other images at least nobody. */
async function resolveWorkerUser(wanted: string, logger: DataPlaneLogger): Promise<string> {
  if (await lookupUser(wanted)) return wanted;
  if (!(await lookupUser('nobody')))
    throw new Error(`nginx worker user ${wanted} does not exist, and neither does nobody`);
  logger.warn({ wanted }, 'nginx worker user not found; workers run as nobody');
  return 'nobody';
}

/** nginx's side: the HTTP instance, one instance per TCP/UDP service, and the proxy that feeds them. */
function createNginxSide(
  config: DataPlaneConfig,
  logger: DataPlaneLogger,
  renderOptions: NginxRenderOptions,
  pemDigests: PemDigests,
) {
  const prefixDir = join(config.dataDir, 'nginx');
  const certsDir = join(config.dataDir, 'certs');
  const luaSource = readLuaModule();
  const nginxBin = config.nginxBin === undefined ? {} : { nginxBin: config.nginxBin };
  const http = createHttpInstance({
    prefixDir,
    logger,
    render: (dir, dicts) => renderHttpInstance(renderOptions, dir, luaSource, dicts),
    snapshotNeeds: () => readSnapshotNeeds(prefixDir, certsDir),
    dictLimits: withLiveFor(
      config.dictLimits ?? DEFAULT_DICT_LIMITS,
      renderOptions.workerConnections ?? DEFAULT_WORKER_CONNECTIONS,
      availableParallelism(),
    ),
    ...nginxBin,
  });
  const streams = createStreamInstances({
    prefixDir,
    logger,
    ...nginxBin,
    ...(config.listenAddress === undefined ? {} : { listenAddress: config.listenAddress }),
  });
  const cutter = createConnectionCutter(logger);
  const proxy = createProxy({ prefixDir, certsDir, http, streams, cutter, logger, pemDigests });
  return { http, proxy };
}

function createListenerLimitsFor(config: DataPlaneConfig, logger: DataPlaneLogger) {
  return createListenerLimits(
    {
      maxConnectionsPerAddress: config.listener?.maxConnectionsPerAddress ?? 0,
      exempt: config.listener?.exempt ?? [],
      webPorts: [config.httpPort, config.httpsPort, config.noDomainHttpsPort],
      tcpPortRange: config.tcpPortRange,
    },
    logger,
  );
}

/**
 * The ACME answers nginx serves. Several gateways: the answer goes into the database first (an apply meanwhile would
 * otherwise take it out of this nginx again), then to this nginx at once; the CA is told once every other live
 * gateway said it serves it too (cluster/acme-answers.ts).
 */
function createChallengeHandOff(proxy: Proxy, shared: DataPlaneDeps['shared']): ChallengeStore {
  return {
    async set(token, answer) {
      await shared?.challenges.set(token, answer);
      await proxy.setChallenge(token, answer);
      await shared?.challenges.served(token);
    },
    async remove(token) {
      await shared?.challenges.remove(token);
      await proxy.removeChallenge(token);
    },
  };
}

/** nginx must answer HTTPS for the console's host; if its workers cannot, say so loudly and say what to do. */
async function selfCheck(config: DataPlaneConfig, renderOptions: NginxRenderOptions, logger: DataPlaneLogger) {
  const problem = await checkHttps(config.listenAddress ?? '127.0.0.1', config.httpsPort, config.publicHost);
  if (problem === null) return;
  logger.error(
    {
      problem,
      errorLog: join(config.dataDir, 'nginx', 'logs', 'error.log'),
      workerUser: renderOptions.workerUser,
    },
    'nginx does not answer HTTPS on this host: its workers run as an unprivileged user and need the nginx modules, ' +
      '/etc/nginx/mime.types and /usr/share/lua readable (they read nothing from the data directory); see the error log',
  );
}

/** A promise settled once, from outside: the boot's rebuild has run. */
class BootSignal {
  readonly settled: Promise<void>;
  private resolve: () => void = () => undefined;
  constructor() {
    this.settled = new Promise<void>((resolve) => {
      this.resolve = resolve;
    });
  }
  mark(): void {
    this.resolve();
  }
}

/** The tunnel: the WireGuard driver and the poll of what it sees of each node. */
function createTunnel(config: DataPlaneConfig, logger: DataPlaneLogger) {
  const wireguard = createWireGuardDriver({
    wgInterface: config.wgInterface,
    stateDir: join(config.dataDir, 'wireguard'),
    logger,
    ports: {
      httpPort: config.httpPort,
      httpsPorts: [config.httpsPort, config.noDomainHttpsPort],
      tcpPortRange: config.tcpPortRange,
    },
  });
  const status = createStatusPoller({
    dump: () => wireguard.dump(),
    intervalMs: config.statusPollMs ?? 2000,
    onError: (err) =>
      logger.warn({ err }, 'WireGuard status poll failed: every node shows offline until the tunnel is back'),
  });
  return { wireguard, status };
}

/** nginx's access logs, tailed for the console and counted for TCP/UDP traffic. */
function createAccessLogs(config: DataPlaneConfig) {
  const streamTraffic = createStreamTrafficCounter();
  const logsDir = join(config.dataDir, 'nginx', 'logs');
  const logs = createAccessLogSource([join(logsDir, HTTP_ACCESS_LOG), join(logsDir, STREAM_ACCESS_LOG)], {
    onLines: (lines) => streamTraffic.record(lines),
  });
  return { logs, streamTraffic };
}

interface ConvergenceParts {
  config: DataPlaneConfig;
  deps: DataPlaneDeps;
  plan: (state: DesiredState) => Promise<DataPlanePlan>;
  planScoped: (scoped: ScopedState) => ScopedPlan;
  tunnel: ReturnType<typeof createTunnel>;
  proxy: Proxy;
  certs: CertificateManager;
  reach: GatewayReach;
  listenerLimits: SelfRepairing;
}

/** The reconciler and its supervisor (heal, retry, drift), both reading the guarded desired state. */
function createConvergence(parts: ConvergenceParts) {
  const { config, deps, plan, planScoped, tunnel, proxy, certs, reach, listenerLimits } = parts;
  const { wireguard, status } = tunnel;
  const guardNetworks = createNetworkGuard({
    vpnSubnet: config.vpnSubnet,
    minPrefix: config.nodeNetworkMinPrefix ?? DEFAULT_NODE_NETWORK_MIN_PREFIX,
    hostNetworks: () => readHostNetworks(config.wgInterface),
    underlayOf: (publicKey) => status.get(publicKey)?.clientIp ?? null,
    reach,
  });
  const reconciler = createReconciler({
    loadDesiredState: deps.loadDesiredState,
    guardNetworks,
    plan,
    ...(deps.loadScopedState ? { loadScopedState: deps.loadScopedState, planScoped } : {}),
    // The status poll starts once the interface exists: on a first boot it does not before the first apply.
    wireguard: {
      ...wireguard,
      async ensureInterface(gateway) {
        await wireguard.ensureInterface(gateway);
        if (supervisor.isRunning()) status.start();
      },
    },
    proxy,
    certs,
    logger: deps.logger,
  });
  const supervisor = createSupervisor({
    reconciler,
    loadPlanned: async () => {
      const { state } = await guardNetworks(await deps.loadDesiredState());
      return { state, plan: await plan(state) };
    },
    proxy,
    wireguard,
    isShared: deps.shared !== undefined,
    certificatesDiffering: (domains) => certs.differsFromStored(domains),
    listenerLimits,
    logger: deps.logger,
    timing: {
      ...(config.healIntervalMs === undefined ? {} : { healIntervalMs: config.healIntervalMs }),
      ...(config.driftCheckIntervalMs === undefined ? {} : { driftEveryMs: config.driftCheckIntervalMs }),
    },
  });
  return supervisor;
}

interface BootParts {
  config: DataPlaneConfig;
  deps: DataPlaneDeps;
  renderOptions: NginxRenderOptions;
  proxy: Proxy;
  certs: CertificateManager;
  listenerLimits: SelfRepairing;
  supervisor: Supervisor;
  boot: BootSignal;
}

/**
 * Adopts or starts nginx and the tunnel, then rebuilds from the DB in the background (serving first). Returns the
 * stop of the lease listener.
 */
async function bootDataPlane(parts: BootParts): Promise<(() => void) | null> {
  const { config, deps, renderOptions, proxy, certs, listenerLimits, supervisor, boot } = parts;
  const { logger } = deps;
  renderOptions.workerUser = await resolveWorkerUser(config.nginxWorkerUser ?? DEFAULT_WORKER_USER, logger);
  // Taking the lease over: what the previous holder left due (a pending order, a renewal) is issued now.
  const stopTaken = deps.shared?.onTaken(() => void certs.checkRenewals()) ?? null;
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await certs.ensureFallback();
  // Before nginx listens (a fresh master), or at once for the one adopted: logs its own failure, and the drift
  // check reports it until it is fixed.
  await listenerLimits.ensure();
  // nginx refusing to start (a port taken by another program) must not keep the control plane down: the
  // console still answers on its own port, and the heal loop keeps trying.
  await proxy.start().then(
    () => selfCheck(config, renderOptions, logger),
    (err: unknown) => logger.error({ err }, 'nginx could not be started; retrying in the background'),
  );
  // nginx (adopted, or fresh with its snapshot) and WireGuard already serve what they served: the rebuild from the
  // DB runs in the background, so the console and API answer at once (changes made meanwhile queue behind it).
  // Issuance may start now: nginx answers ACME challenges from the moment it runs.
  certs.start(boot.settled);
  supervisor.start();
  const convergeStarted = performance.now();
  void supervisor
    .rebuild()
    .then((result) => {
      const convergeMs = Math.round(performance.now() - convergeStarted);
      if (result.ok) logger.info({ convergeMs }, 'data plane rebuilt from the database');
      else
        logger.error(
          { convergeMs, message: result.message },
          'data plane could not converge at boot; retrying in the background',
        );
    })
    .finally(() => boot.mark());
  return stopTaken;
}

/** The real data plane: WireGuard, nginx and certificates on this host. Needs root. */
export function createDataPlane(config: DataPlaneConfig, deps: DataPlaneDeps): RealDataPlane {
  const { logger, shared } = deps;
  const renderOptions = renderOptionsFor(config);
  const staticHosts = createStaticHosts();
  // One cache of the PEMs' digests for both looks of a drift check (nginx's MD5s, the shared store's fingerprints): the
  // first check after a start reads each file once, not twice.
  const pemDigests = new PemDigests();
  const { http, proxy } = createNginxSide(config, logger, renderOptions, pemDigests);
  const tunnel = createTunnel(config, logger);
  const { wireguard, status } = tunnel;
  const listenerLimits = createListenerLimitsFor(config, logger);
  const challenges = createChallengeHandOff(proxy, shared);
  const certs = createCertificateManager({
    dataDir: config.dataDir,
    certsDir: join(config.dataDir, 'certs'),
    fallbackHost: config.publicHost,
    logger,
    challenges,
    store: deps.certificateStore,
    acme: config.acme,
    acmeSettings: deps.acmeSettings,
    resolvers: renderOptions.resolvers,
    onInstalled: (name) => void proxy.certificateInstalled(name),
    pemDigests,
    ...(shared ? { shared: shared.certificates, isHolder: shared.isHolder } : {}),
  });
  const { logs, streamTraffic } = createAccessLogs(config);
  // A full run and a drift check plan every row: in slices, between which the event loop serves requests and changes.
  const plan = (state: DesiredState) => planDataPlaneSliced(state, renderOptions, staticHosts());
  const planScoped = (scoped: ScopedState) => planScopedState(scoped, renderOptions, staticHosts());
  const reach = createGatewayReach({
    resolvers: renderOptions.resolvers,
    databaseHost: config.databaseHost,
    acmeDirectoryUrl: config.acme.directoryUrl,
    staticHosts,
  });
  const supervisor = createConvergence({ config, deps, plan, planScoped, tunnel, proxy, certs, reach, listenerLimits });
  const boot = new BootSignal();
  let stopTaken: (() => void) | null = null;

  return {
    challenges,
    async start() {
      const parts = { config, deps, renderOptions, proxy, certs, listenerLimits, supervisor, boot };
      stopTaken = await bootDataPlane(parts);
    },
    async stop({ keepServing }) {
      supervisor.stop();
      status.stop();
      stopTaken?.();
      certs.stop();
      logs.close();
      await proxy.stop({ keepServing });
      await wireguard.close({ keepServing });
    },
    apply: (scope) => supervisor.apply(scope),
    async traffic() {
      // Every minute and at start (beside the boot's rebuild): the stream services only, not every HTTP service too.
      const streams = planStreams(await deps.loadStreamRoutes(), renderOptions, staticHosts());
      return readTraffic({ streams, httpTraffic: () => proxy.httpTraffic(), streamTraffic });
    },
    checkDrift: () => supervisor.checkDrift(),
    async dictionaries() {
      if (!(await http.isUp())) return null;
      return proxy.dictionaries().catch((err: unknown) => {
        logger.warn({ err }, 'nginx: could not read how full its shared dictionaries are');
        return null;
      });
    },
    lastDrift: () => supervisor.lastDrift(),
    booted: () => boot.settled,
    onDrift: (listener) => supervisor.onDrift(listener),
    status,
    logs,
    certificates: { info: (domain) => certs.info(domain), renew: (domain) => certs.renew(domain) },
    hostNetworks: () => readHostNetworks(config.wgInterface),
    reachedAddresses: () => reach.destinations(),
    resolveHost: (name) => reach.resolve(name),
  };
}
