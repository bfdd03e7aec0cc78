import { join } from 'node:path';
import type { Logger } from 'pino';
import { ACME_WEBROOT_DIR } from './dataplane/certs/acme.js';
import { checkDomainPointsHere } from './dataplane/certs/domain-check.js';
import type { CertificateStore } from './dataplane/certs/manager.js';
import { createDataPlane } from './dataplane/index.js';
import { createFakeDataPlane } from './dataplane/fakes.js';
import type { DataPlane, DesiredState } from './dataplane/types.js';
import type { Config } from './env.js';
import type { DomainCheck } from './modules/domains/service.js';

/**
 * `POSTERN_DATAPLANE=real` drives WireGuard and nginx on this host; `off` runs the control plane alone (no root
 * needed): the same reconciler against in-memory adapters, so configs are still rendered and validated.
 */
export function createDataPlaneFor(
  config: Config,
  opts: { loadDesiredState: () => DesiredState; logger: Logger; certificateStore: CertificateStore },
): DataPlane {
  if (config.dataPlane === 'real') {
    const acme = {
      directoryUrl: config.acmeDirectory,
      skipPrecheck: config.acmeSkipPrecheck,
      ...(config.acmeEmail ? { email: config.acmeEmail } : {}),
      ...(config.acmeCaFile ? { caFile: config.acmeCaFile } : {}),
    };
    return createDataPlane({ ...config, acme }, opts);
  }
  opts.logger.warn('data plane is off: nothing is served to nodes or the internet (POSTERN_DATAPLANE=off)');
  return createFakeDataPlane({ loadDesiredState: opts.loadDesiredState });
}

/** The real "does this domain point here?" check for certbot domains (DNS answer, or a token fetched back). */
export function domainCheckFor(config: Config): DomainCheck {
  const options = { publicHost: config.publicHost, httpPort: config.httpPort, webroot: join(config.dataDir, ACME_WEBROOT_DIR) };
  return (domain) => checkDomainPointsHere(domain, options);
}
