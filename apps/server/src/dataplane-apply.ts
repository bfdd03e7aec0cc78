import type { AppDeps } from './deps.js';
import { AppError } from './errors.js';

/**
 * Asks the data plane to converge on the DB after a change. A rejected config is reported as a 400 with the
 * data plane's reason (the change stays stored; the previous config keeps serving).
 */
export async function applyDataPlane(deps: AppDeps): Promise<void> {
  const result = await deps.dataPlane.apply();
  if (!result.ok) throw new AppError('dataplane_rejected', result.message);
}
