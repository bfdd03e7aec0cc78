import { eq, isNotNull } from 'drizzle-orm';
import type { ServiceType } from '@postern/contract';
import type { AppDeps } from './deps.js';
import { httpServices, tcpServices } from './db/schema.js';
import { AppError } from './errors.js';

export interface ServiceRef {
  type: ServiceType;
  id: number;
}

type ApplyDeps = Pick<AppDeps, 'db' | 'dataPlane' | 'now'>;

/**
 * Asks the data plane to converge on what the DB now says. Call it after the DB change has committed (SQLite
 * transactions never wait on I/O). A rejection is stored on the service that caused it, so the console can show
 * why it is not served, and reaches the caller as a 400 with the data plane's reason.
 */
export async function applyChanges(deps: ApplyDeps, cause?: ServiceRef): Promise<void> {
  const result = await deps.dataPlane.apply();
  if (result.ok) {
    // The whole generation is live, so no service is rejected any more: clear every stale error at once.
    deps.db.update(httpServices).set({ applyError: null }).where(isNotNull(httpServices.applyError)).run();
    deps.db.update(tcpServices).set({ applyError: null }).where(isNotNull(tcpServices.applyError)).run();
    return;
  }
  if (cause) recordApplyError(deps, cause, result.message);
  throw new AppError('dataplane_rejected', result.message);
}

function recordApplyError(deps: ApplyDeps, cause: ServiceRef, message: string): void {
  const patch = { applyError: message, updatedAt: deps.now().toISOString() };
  if (cause.type === 'http') {
    deps.db.update(httpServices).set(patch).where(eq(httpServices.id, cause.id)).run();
  } else {
    deps.db.update(tcpServices).set(patch).where(eq(tcpServices.id, cause.id)).run();
  }
}
