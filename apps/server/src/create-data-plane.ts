import type { Logger } from 'pino';
import { createDataPlane } from './dataplane/index.js';
import { createFakeDataPlane } from './dataplane/fakes.js';
import type { DataPlane, DesiredState } from './dataplane/types.js';
import type { Config } from './env.js';

/**
 * `POSTERN_DATAPLANE=real` drives WireGuard and nginx on this host; `off` runs the control plane alone (no root
 * needed): the same reconciler against in-memory adapters, so configs are still rendered and validated.
 */
export function createDataPlaneFor(config: Config, opts: { loadDesiredState: () => DesiredState; logger: Logger }): DataPlane {
  if (config.dataPlane === 'real') return createDataPlane(config, opts);
  opts.logger.warn('data plane is off: nothing is served to nodes or the internet (POSTERN_DATAPLANE=off)');
  return createFakeDataPlane({ loadDesiredState: opts.loadDesiredState });
}
