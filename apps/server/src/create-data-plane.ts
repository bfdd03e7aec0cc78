import type { Logger } from 'pino';
import type { ChallengeStore } from './dataplane/certs/acme.js';
import { checkDomainPointsHere } from './dataplane/certs/domain-check.js';
import type { CertificateStore } from './dataplane/certs/manager.js';
import {
  createDataPlane,
  parseSubnet,
  renderOptionsFor,
  type DataPlaneConfig,
  type DataPlaneDeps,
} from './dataplane/index.js';
import { createOfflineDataPlane, type OfflineNetworkOptions } from './dataplane/offline.js';
import { urlHost } from './dataplane/reach.js';
import type { ApplyScope, DataPlane, DesiredState, ScopedState } from './dataplane/types.js';
import type { GatewaySettings } from './db/desired-state.js';
import type { Config } from './env.js';
import type { DomainCheck } from './modules/domains/service.js';
import type { GatewayIdentity } from './modules/gateways/registry.js';
import { isIPv4 } from '@postern/contract';

/** Where nginx reaches the control plane: its own address, or loopback when it listens on every address. */
function consoleUpstreamFor(config: Pick<Config, 'host' | 'port'>): string {
  const host = isIPv4(config.host) && config.host !== '0.0.0.0' ? config.host : '127.0.0.1';
  return `http://${host}:${config.port}`;
}

/** This gateway's end of the tunnel: its registered address and key (modules/gateways), its WireGuard port. */
export function gatewaySettingsFor(
  config: Pick<Config, 'vpnSubnet' | 'wgPort' | 'publicHost'>,
  gateway: Pick<GatewayIdentity, 'id' | 'address'>,
): GatewaySettings {
  return {
    gatewayId: gateway.id,
    address: `${gateway.address}/${parseSubnet(config.vpnSubnet).prefix}`,
    listenPort: config.wgPort,
    publicHost: config.publicHost,
  };
}

export function dataPlaneConfigFor(config: Config, gateway?: Pick<GatewayIdentity, 'address'>): DataPlaneConfig {
  return {
    ...config,
    ...(gateway ? { tunnelAddress: gateway.address } : {}),
    // Only the host: the URL's password stays with the database client.
    databaseHost: urlHost(config.databaseUrl),
    consoleUpstream: consoleUpstreamFor(config),
    acme: {
      directoryUrl: config.acmeDirectory,
      skipPrecheck: config.acmeSkipPrecheck,
      ...(config.acmeEmail ? { email: config.acmeEmail } : {}),
      ...(config.acmeCaFile ? { caFile: config.acmeCaFile } : {}),
    },
  };
}

/**
 * `POSTERN_DATAPLANE=real` drives WireGuard and nginx on this host; `off` runs the control plane alone (no root
 * needed): the same reconciler, planner and renderers in front of adapters that do no I/O.
 */
export function createDataPlaneFor(
  config: Config,
  opts: {
    gateway: Pick<GatewayIdentity, 'address'>;
    loadDesiredState: () => Promise<DesiredState>;
    loadScopedState?: (scope: ApplyScope) => Promise<ScopedState>;
    loadStreamRoutes: DataPlaneDeps['loadStreamRoutes'];
    logger: Logger;
    certificateStore: CertificateStore;
    acmeSettings?: DataPlaneDeps['acmeSettings'];
    shared?: DataPlaneDeps['shared'];
  },
): DataPlane & { challenges: ChallengeStore } {
  const dataPlaneConfig = dataPlaneConfigFor(config, opts.gateway);
  if (config.dataPlane === 'real') return createDataPlane(dataPlaneConfig, opts);
  opts.logger.warn('data plane is off: nothing is served to nodes or the internet (POSTERN_DATAPLANE=off)');
  return createOfflineDataPlane({
    loadDesiredState: opts.loadDesiredState,
    ...(opts.loadScopedState ? { loadScopedState: opts.loadScopedState } : {}),
    render: renderOptionsFor(dataPlaneConfig),
    network: offlineNetworkOptionsFor(config),
  });
}

/** The settings the offline data plane re-checks nodes' subnets against (no DNS: names resolve through /etc/hosts). */
export function offlineNetworkOptionsFor(config: Config): OfflineNetworkOptions {
  return {
    vpnSubnet: config.vpnSubnet,
    minPrefix: config.nodeNetworkMinPrefix,
    resolvers: config.resolvers,
    databaseHost: urlHost(config.databaseUrl),
    acmeDirectoryUrl: config.acmeDirectory,
  };
}

/** The real "does this domain point here?" check for certbot domains (DNS answer, or a token fetched back). */
export function domainCheckFor(config: Config, challenges: ChallengeStore): DomainCheck {
  const options = { publicHost: config.publicHost, httpPort: config.httpPort, challenges };
  return (domain) => checkDomainPointsHere(domain, options);
}
