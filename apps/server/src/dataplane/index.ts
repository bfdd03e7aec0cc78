import { mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { AcmeConfig, ChallengeStore } from './certs/acme.js';
import { createCertificateManager, type CertificateManager, type CertificateStore } from './certs/manager.js';
import type { SharedCertificates, SharedChallenges } from '../model/certificates.js';
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
import { createStaticHosts, planDataPlane, readResolvers } from './plan.js';
import { createProxy } from './proxy.js';
import { createGatewayReach } from './reach.js';
import { createNetworkGuard } from './reconcile/network-guard.js';
import { createReconciler } from './reconciler.js';
import { applyProblems, noRoomLine } from './reconcile/problems.js';
import { countOpenSessions, createStreamTrafficCounter } from './traffic.js';
import { lookupUser } from './system-user.js';
import type { DataPlane, DataPlaneLogger, DesiredState, DriftReport, TrafficCounters } from './types.js';
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
  logger: DataPlaneLogger;
  /** Certificate state per domain (the `certificates` table), so a restart neither re-issues nor forgets back-off. */
  certificateStore: CertificateStore;
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

/** How often an apply that failed as a whole is retried by the heal loop. */
const RETRY_BEHIND_MS = 5000;
/** Drift is looked for this long after a change (a burst shares one check), and this often anyway. */
const DRIFT_AFTER_CHANGE_MS = 3000;
const DRIFT_EVERY_MS = 60_000;

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

const describeError = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The real data plane: WireGuard, nginx and certificates on this host. Needs root. */
export function createDataPlane(config: DataPlaneConfig, deps: DataPlaneDeps): RealDataPlane {
  const { logger } = deps;
  const prefixDir = join(config.dataDir, 'nginx');
  const certsDir = join(config.dataDir, 'certs');
  const renderOptions = renderOptionsFor(config);
  const luaSource = readLuaModule();
  const staticHosts = createStaticHosts();
  const nginxBin = config.nginxBin === undefined ? {} : { nginxBin: config.nginxBin };
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
  const listenerLimits = createListenerLimits(
    {
      maxConnectionsPerAddress: config.listener?.maxConnectionsPerAddress ?? 0,
      exempt: config.listener?.exempt ?? [],
      webPorts: [config.httpPort, config.httpsPort, config.noDomainHttpsPort],
      tcpPortRange: config.tcpPortRange,
    },
    logger,
  );
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
  const proxy = createProxy({ prefixDir, certsDir, http, streams, cutter: createConnectionCutter(logger), logger });
  const shared = deps.shared;
  // Several gateways: the answer goes into the database first (an apply meanwhile would otherwise take it out of this
  // nginx again), then to this nginx at once; the CA is told once every other live gateway said it serves it too
  // (cluster/acme-answers.ts).
  const challenges: ChallengeStore = {
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
  let stopTaken: (() => void) | null = null;
  let certs: CertificateManager | null = null;
  const status = createStatusPoller({
    dump: () => wireguard.dump(),
    intervalMs: config.statusPollMs ?? 2000,
    onError: (err) =>
      logger.warn({ err }, 'WireGuard status poll failed: every node shows offline until the tunnel is back'),
  });
  const streamTraffic = createStreamTrafficCounter();
  const logs = createAccessLogSource(
    [join(prefixDir, 'logs', HTTP_ACCESS_LOG), join(prefixDir, 'logs', STREAM_ACCESS_LOG)],
    {
      onLines: (lines) => streamTraffic.record(lines),
    },
  );
  const plan = (state: DesiredState) => planDataPlane(state, renderOptions, staticHosts());
  const hostNetworks = () => readHostNetworks(config.wgInterface);
  const reach = createGatewayReach({
    resolvers: renderOptions.resolvers,
    databaseHost: config.databaseHost,
    acmeDirectoryUrl: config.acme.directoryUrl,
    staticHosts,
  });
  const guardNetworks = createNetworkGuard({
    vpnSubnet: config.vpnSubnet,
    minPrefix: config.nodeNetworkMinPrefix ?? DEFAULT_NODE_NETWORK_MIN_PREFIX,
    hostNetworks,
    underlayOf: (publicKey) => status.get(publicKey)?.clientIp ?? null,
    reach,
  });
  const reconciler = createReconciler({
    loadDesiredState: deps.loadDesiredState,
    guardNetworks,
    plan,
    // The status poll starts once the interface exists: on a first boot it does not before the first apply.
    wireguard: {
      ...wireguard,
      async ensureInterface(gateway) {
        await wireguard.ensureInterface(gateway);
        if (healTimer) status.start();
      },
    },
    proxy,
    certs: {
      ensure: (domain) => requireCerts().ensure(domain),
      remove: (domain) => requireCerts().remove(domain),
      info: (domain) => certs?.info(domain) ?? null,
      pruneExcept: (keep) => requireCerts().pruneExcept(keep),
    },
    logger,
  });

  function requireCerts(): CertificateManager {
    if (!certs) throw new Error('data plane not started');
    return certs;
  }

  // Self-healing: a dead nginx (HTTP or a service's instance) or a vanished tunnel is brought back within about a
  // second, with no API call, and then everything is applied again from the DB.
  let healTimer: NodeJS.Timeout | null = null;
  let isHealing = false;
  let lastHealError = '';
  /** Whether the last apply failed as a whole (nginx or the tunnel down): the heal loop then applies again. */
  let isBehind = false;
  let lastRetryAt = 0;

  /** nginx must answer HTTPS for the console's host; if its workers cannot, say so loudly and say what to do. */
  async function selfCheck(): Promise<void> {
    const problem = await checkHttps(config.listenAddress ?? '127.0.0.1', config.httpsPort, config.publicHost);
    if (problem === null) return;
    logger.error(
      { problem, errorLog: join(prefixDir, 'logs', 'error.log'), workerUser: renderOptions.workerUser },
      'nginx does not answer HTTPS on this host: its workers run as an unprivileged user and need the nginx modules, ' +
        '/etc/nginx/mime.types and /usr/share/lua readable (they read nothing from the data directory); see the error log',
    );
  }

  async function apply(): ReturnType<DataPlane['apply']> {
    const result = await reconciler.apply();
    isBehind = !result.ok;
    const problems = applyProblems(result);
    if (problems.length > 0) reportProblems(problems);
    scheduleDriftCheck(DRIFT_AFTER_CHANGE_MS);
    return result;
  }

  /**
   * What the system status shows at once when an apply failed or a drift check could not run, instead of the last
   * check's "no differences" until the next one: the next check reports again what it finds.
   */
  function reportProblems(differences: string[]): void {
    if (lastDrift && !lastDrift.repaired && lastDrift.differences.join('\n') === differences.join('\n')) return;
    publishDrift({ checkedAt: new Date().toISOString(), differences, repaired: false });
  }

  function publishDrift(report: DriftReport): void {
    lastDrift = report;
    for (const listener of driftListeners) listener(report);
  }

  // Drift: read back what nginx and WireGuard hold, compare it with the DB, repair what differs. A few seconds after
  // every change (bursts share one check) and every minute.
  let driftTimer: NodeJS.Timeout | null = null;
  let lastDrift: DriftReport | null = null;
  let markBooted: () => void = () => undefined;
  const bootedPromise = new Promise<void>((resolve) => {
    markBooted = resolve;
  });
  const driftListeners = new Set<(report: DriftReport) => void>();
  function scheduleDriftCheck(delayMs: number): void {
    if (driftTimer) clearTimeout(driftTimer);
    driftTimer = setTimeout(() => {
      driftTimer = null;
      checkDrift()
        .catch((err: unknown) => {
          logger.warn({ err }, 'data plane: drift check failed');
          reportProblems([`the drift check could not read what is served: ${describeError(err)}`]);
        })
        .finally(() => {
          if (!driftTimer && healTimer) scheduleDriftCheck(config.driftCheckIntervalMs ?? DRIFT_EVERY_MS);
        });
    }, delayMs);
    driftTimer.unref();
  }

  async function checkDrift(): Promise<DriftReport> {
    // What is served is the guarded state: a subnet set aside is not drift.
    const { state } = await guardNetworks(await deps.loadDesiredState());
    const { routes, streams, access } = plan(state);
    const domainNames = state.domains.map((d) => d.domain);
    const stale = shared && certs ? await certs.differsFromStored(state.domains) : [];
    const served = [
      ...(await proxy.drift(routes.hosts, domainNames, streams.wanted, shared ? state.challenges : undefined, access)),
      ...stale.map((name) => `the certificate of ${name} is not the one stored for every gateway`),
      ...(await wireguard.drift(state.peers)),
    ];
    // The listener's firewall rules depend on settings only: repaired by themselves, without a full push.
    const limits = await listenerLimits.drift();
    const differences = [...served, ...limits];
    let repaired = differences.length > 0;
    if (served.length > 0) {
      logger.warn({ differences }, 'data plane: what nginx or WireGuard serve differs from the database; repairing');
      reconciler.forgetApplied();
      proxy.forget();
      wireguard.forget();
      repaired = (await reconciler.apply()).ok;
    }
    if (limits.length > 0) {
      if (served.length === 0) logger.warn({ differences }, 'data plane: the listener limits differ; repairing');
      listenerLimits.forget();
      repaired = (await listenerLimits.ensure()) && repaired;
    }
    // Services set aside for lack of room are reported, not repaired: they are tried again once there is room.
    const crowded = proxy.crowdedServices();
    if (crowded.length > 0) differences.unshift(noRoomLine(crowded));
    const report: DriftReport = { checkedAt: new Date().toISOString(), differences, repaired };
    publishDrift(report);
    return report;
  }

  async function traffic(): Promise<TrafficCounters> {
    const { streams } = plan(await deps.loadDesiredState());
    const tcpPorts = [...streams.wanted.values()].filter((w) => w.proto === 'tcp').map((w) => w.port);
    const [http, open] = await Promise.all([proxy.httpTraffic(), countOpenSessions(tcpPorts)]);
    const tcp = streamTraffic.snapshot();
    for (const [key, want] of streams.wanted) {
      const serviceId = streams.serviceOf.get(key);
      if (serviceId === undefined) continue;
      const row = tcp.get(serviceId) ?? { sessions: 0, failed: 0, bytesIn: 0, bytesOut: 0, secondsSum: 0, open: 0 };
      row.open = want.proto === 'tcp' ? (open.get(want.port) ?? 0) : 0;
      tcp.set(serviceId, row);
    }
    return { httpEpoch: http.epoch, streamEpoch: streamTraffic.epoch, http: http.services, tcp };
  }

  async function healOnce(): Promise<void> {
    if (isHealing) return;
    isHealing = true;
    try {
      const restored = await proxy.heal();
      const isTunnelRestored = await wireguard.heal().catch((err: unknown) => {
        isBehind = true;
        throw err;
      });
      if (restored.http) reconciler.forgetApplied();
      if (restored.http || restored.streams.length > 0 || isTunnelRestored) {
        const result = await apply();
        logger.info(
          { nginx: restored.http, services: restored.streams, tunnel: isTunnelRestored, ok: result.ok },
          'data plane: restored what had died',
        );
      } else if (isBehind && Date.now() - lastRetryAt > RETRY_BEHIND_MS) {
        lastRetryAt = Date.now();
        await apply();
      }
      lastHealError = '';
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      if (text !== lastHealError) logger.error({ err }, 'data plane: could not restore nginx or the tunnel; retrying');
      lastHealError = text;
    } finally {
      isHealing = false;
    }
  }

  return {
    challenges,
    async start() {
      renderOptions.workerUser = await resolveWorkerUser(config.nginxWorkerUser ?? DEFAULT_WORKER_USER, logger);
      certs = createCertificateManager({
        dataDir: config.dataDir,
        certsDir,
        fallbackHost: config.publicHost,
        logger,
        challenges,
        store: deps.certificateStore,
        acme: config.acme,
        onInstalled: (name) => void proxy.certificateInstalled(name),
        ...(shared ? { shared: shared.certificates, isHolder: shared.isHolder } : {}),
      });
      // Taking the lease over: what the previous holder left due (a pending order, a renewal) is issued now.
      stopTaken = shared?.onTaken(() => void certs?.checkRenewals()) ?? null;
      await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
      await certs.ensureFallback();
      // Before nginx listens (a fresh master), or at once for the one adopted: logs its own failure, and the drift
      // check reports it until it is fixed.
      await listenerLimits.ensure();
      // nginx refusing to start (a port taken by another program) must not keep the control plane down: the
      // console still answers on its own port, and the heal loop keeps trying.
      await proxy.start().then(
        () => selfCheck(),
        (err: unknown) => logger.error({ err }, 'nginx could not be started; retrying in the background'),
      );
      // nginx (adopted, or fresh with its snapshot) and WireGuard already serve what they served: the rebuild from the
      // DB runs in the background, so the console and API answer at once (changes made meanwhile queue behind it).
      // Issuance may start now: nginx answers ACME challenges from the moment it runs.
      certs.start();
      healTimer = setInterval(() => void healOnce(), config.healIntervalMs ?? 1000);
      healTimer.unref();
      const convergeStarted = performance.now();
      void apply()
        .then((result) => {
          const convergeMs = Math.round(performance.now() - convergeStarted);
          if (result.ok) logger.info({ convergeMs }, 'data plane rebuilt from the database');
          else
            logger.error(
              { convergeMs, message: result.message },
              'data plane could not converge at boot; retrying in the background',
            );
        })
        .finally(markBooted);
    },
    async stop({ keepServing }) {
      if (healTimer) clearInterval(healTimer);
      healTimer = null;
      if (driftTimer) clearTimeout(driftTimer);
      driftTimer = null;
      status.stop();
      stopTaken?.();
      certs?.stop();
      logs.close();
      await proxy.stop({ keepServing });
      await wireguard.close({ keepServing });
    },
    apply,
    traffic,
    checkDrift,
    async dictionaries() {
      if (!(await http.isUp())) return null;
      return proxy.dictionaries().catch((err: unknown) => {
        logger.warn({ err }, 'nginx: could not read how full its shared dictionaries are');
        return null;
      });
    },
    lastDrift: () => lastDrift,
    booted: () => bootedPromise,
    onDrift(listener) {
      driftListeners.add(listener);
      return () => {
        driftListeners.delete(listener);
      };
    },
    status,
    logs,
    certificates: { info: (domain) => certs?.info(domain) ?? null },
    hostNetworks,
    reachedAddresses: () => reach.destinations(),
    resolveHost: (name) => reach.resolve(name),
  };
}
