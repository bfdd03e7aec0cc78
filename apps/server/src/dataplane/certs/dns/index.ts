import type { DnsProviderConfig } from '../../../model/certificates.js';
import { createAcmeDnsSolver } from './acme-dns.js';
import { createCloudflareSolver } from './cloudflare.js';
import { createRfc2136Solver, type Rfc2136Deps } from './rfc2136.js';
import { createRoute53Solver } from './route53.js';
import type { DnsSolver } from './solver.js';

export { challengeRecordName, type DnsSolver } from './solver.js';
export { findZone, waitForTxt } from './propagation.js';

/** The solver of a provider's kind. */
export function createDnsSolver(config: DnsProviderConfig, deps: Rfc2136Deps): DnsSolver {
  switch (config.kind) {
    case 'rfc2136':
      return createRfc2136Solver(config, deps);
    case 'cloudflare':
      return createCloudflareSolver(config, deps);
    case 'route53':
      return createRoute53Solver(config, deps);
    case 'acme-dns':
      return createAcmeDnsSolver(config, deps);
  }
}
