import { chmod, mkdir, stat } from 'node:fs/promises';
import type { FileOwner } from './atomic-write.js';
import { join } from 'node:path';
import { createCertificateManager, type CertificateManager, type CertificateStore } from './certs/manager.js';
import type { AcmeConfig } from './certs/acme.js';
import { createAccessLogSource } from './logs/log-source.js';
import { createNginxDriver } from './nginx/driver.js';
import { DEFAULT_WORKER_USER, HTTP_ACCESS_LOG, STREAM_ACCESS_LOG, overlayRouterSocket, type NginxRenderOptions } from './nginx/options.js';
import { indexRoutes } from './nginx/overlay.js';
import { createOverlayRouter, type OverlayRouter } from './nginx/overlay-router.js';
import { createOverlayStore } from './nginx/overlay-store.js';
import { overlayConfFor, renderNginxConfig } from './nginx/render.js';
import { renderStreamConfig } from './nginx/render-stream.js';
import { createReconciler } from './reconciler.js';
import { lookupUser } from './system-user.js';
import type { DataPlane, DataPlaneLogger, DesiredState } from './types.js';
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
  /** Validated by the control plane when it allocates ports; nginx only listens on what it is given. */
  tcpPortRange: readonly [number, number];
  publicHost: string;
  statusPollMs?: number;
  nginxBin?: string;
  /** Bind nginx to one address only (tests). */
  listenAddress?: string;
  nginxWorkerUser?: string;
  /** How long connections of a removed service may survive a reload (default 10 s). */
  workerShutdownTimeoutSeconds?: number;
  acme: AcmeConfig;
}

export interface DataPlaneDeps {
  loadDesiredState: () => DesiredState;
  logger: DataPlaneLogger;
  /** Certificate state per domain (the `certificates` table), so a restart neither re-issues nor forgets back-off. */
  certificateStore: CertificateStore;
}

/** Directories nginx workers (unprivileged) must traverse to open certificates: add o+x, never o+r. */
async function makeTraversable(dir: string): Promise<void> {
  const { mode } = await stat(dir);
  if ((mode & 0o001) === 0) await chmod(dir, (mode & 0o7777) | 0o111);
}

/** nginx workers need a real unprivileged user; Debian has www-data, other images at least nobody. */
async function resolveWorkerUser(wanted: string, logger: DataPlaneLogger): Promise<{ user: string; owner: FileOwner }> {
  const owner = await lookupUser(wanted);
  if (owner) return { user: wanted, owner };
  const nobody = await lookupUser('nobody');
  if (!nobody) throw new Error(`nginx worker user ${wanted} does not exist, and neither does nobody`);
  logger.warn({ wanted }, 'nginx worker user not found; workers run as nobody');
  return { user: 'nobody', owner: nobody };
}

/** The real data plane: WireGuard, nginx and certificates on this host. Needs root. */
export function createDataPlane(config: DataPlaneConfig, deps: DataPlaneDeps): DataPlane {
  const { logger } = deps;
  const prefixDir = join(config.dataDir, 'nginx');
  const certsDir = join(config.dataDir, 'certs');
  const acmeWebroot = join(config.dataDir, 'acme-webroot');
  const renderOptions: NginxRenderOptions = {
    prefixDir, certsDir, acmeWebroot, httpPort: config.httpPort, httpsPort: config.httpsPort, defaultHostName: config.publicHost,
    ...(config.listenAddress === undefined ? {} : { listenAddress: config.listenAddress }),
    ...(config.workerShutdownTimeoutSeconds === undefined ? {} : { workerShutdownTimeoutSeconds: config.workerShutdownTimeoutSeconds }),
  };
  const wireguard = createWireGuardDriver({ wgInterface: config.wgInterface, stateDir: join(config.dataDir, 'wireguard'), logger });
  const nginx = createNginxDriver({ prefixDir, logger, ...(config.nginxBin === undefined ? {} : { nginxBin: config.nginxBin }) });
  let certs: CertificateManager | null = null;
  const status = createStatusPoller({
    dump: () => wireguard.dump(),
    intervalMs: config.statusPollMs ?? 2000,
    onError: (err) => logger.warn({ err }, 'WireGuard status poll failed'),
  });
  const logs = createAccessLogSource([join(prefixDir, 'logs', HTTP_ACCESS_LOG), join(prefixDir, 'logs', STREAM_ACCESS_LOG)]);

  const overlayStore = createOverlayStore(prefixDir);
  let router: OverlayRouter | null = null;
  const reconciler = createReconciler({
    loadDesiredState: deps.loadDesiredState,
    renderNginx: (state) => renderNginxConfig(state, renderOptions),
    overlay: {
      snapshot: (state) => ({ routes: indexRoutes(state.http, state.domains), reloadKey: renderStreamConfig(state.stream, renderOptions) }),
      configFor: (epoch) => overlayConfFor(renderOptions, epoch),
      store: overlayStore,
      publish: (routes) => router?.setRoutes(routes),
    },
    wireguard,
    nginx,
    certs: {
      ensure: (domain) => requireCerts().ensure(domain),
      remove: (domain) => requireCerts().remove(domain),
      info: (domain) => certs?.info(domain) ?? null,
      pruneExcept: (keep) => requireCerts().pruneExcept(keep),
    },
    logger,
  });

  function requireCerts(): NonNullable<typeof certs> {
    if (!certs) throw new Error('data plane not started');
    return certs;
  }

  return {
    async start() {
      const { user, owner } = await resolveWorkerUser(config.nginxWorkerUser ?? DEFAULT_WORKER_USER, logger);
      renderOptions.workerUser = user;
      certs = createCertificateManager({
        dataDir: config.dataDir, certsDir, webroot: acmeWebroot, fallbackHost: config.publicHost, logger, owner,
        store: deps.certificateStore, acme: config.acme,
      });
      await mkdir(config.dataDir, { recursive: true });
      await makeTraversable(config.dataDir);
      await mkdir(join(acmeWebroot, '.well-known', 'acme-challenge'), { recursive: true, mode: 0o755 });
      await certs.ensureFallback();
      await nginx.start();
      await overlayStore.reset();
      router = createOverlayRouter({ socketPath: overlayRouterSocket(renderOptions), owner, logger });
      await router.listen();
      const convergeStarted = performance.now();
      const result = await reconciler.runAtBoot();
      if (!result.ok) logger.error({ message: result.message }, 'data plane could not converge at boot');
      const converged = performance.now();
      // Issuance only now: a CA asked before nginx serves the ACME webroot would fail the challenge.
      certs.start();
      status.start();
      logger.info({ convergeMs: Math.round(converged - convergeStarted), startMs: Math.round(performance.now() - converged) }, 'data plane started');
    },
    async stop() {
      status.stop();
      certs?.stop();
      logs.close();
      await reconciler.stop();
      await nginx.stop();
      await router?.close();
      await wireguard.close();
    },
    apply: () => reconciler.apply(),
    status,
    logs,
    certificates: { info: (domain) => certs?.info(domain) ?? null },
    hostNetworks: () => readHostNetworks(config.wgInterface),
  };
}
