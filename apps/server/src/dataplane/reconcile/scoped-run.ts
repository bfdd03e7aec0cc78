import type { ScopedPlan } from '../plan.js';
import type { ReconcilerDeps } from '../reconciler.js';
import { NoRoomError, noRejections, type ApplyResult, type ApplyScope, type ScopedState } from '../types.js';
import type { CertificateSync } from './certificates.js';
import type { CutOff } from './cut-off.js';
import { describeError } from './full-run.js';
import { logRejections } from './rejections.js';

/**
 * A scoped run (dataplane/README.md "Scoped applies"): a scope's hosts loaded, planned and pushed alone. null: it
 * cannot go alone, nothing was changed, and the caller runs a full apply instead.
 */
export async function runScoped(
  deps: ReconcilerDeps,
  parts: { certificates: CertificateSync; cutOff: CutOff },
  scope: ApplyScope,
): Promise<ApplyResult | null> {
  const { loadScopedState, planScoped, logger, proxy } = deps;
  if (loadScopedState === undefined || planScoped === undefined) return null;
  const started = Date.now();
  let scoped: ScopedState;
  let plan: ScopedPlan;
  try {
    scoped = await loadScopedState(scope);
    plan = planScoped(scoped);
  } catch (err) {
    logger.error({ err }, 'data plane: cannot read the desired state');
    return { ok: false, message: describeError(err), rejected: noRejections(), scopedHttp: new Set(scope.http) };
  }
  const rejected = noRejections();
  for (const [id, message] of plan.routes.rejected) rejected.http.set(id, message);
  const touched = new Set([...scope.http, ...scoped.http.map((route) => route.serviceId)]);
  const loadedAt = Date.now();
  let certificatesMs = 0;
  try {
    await parts.certificates.ensureChanged(scoped.domains);
    certificatesMs = Date.now() - loadedAt;
    await proxy.syncAccess(plan.access);
    const names = scoped.domains.map((d) => d.domain);
    if (!(await proxy.patchRoutes(plan.routes.hosts, scoped.hosts, names))) return null;
    await proxy.cutStale(plan.routes.revisions, touched);
    // The full run's memory of what was cut no longer holds: its next run looks again.
    parts.cutOff.forget();
  } catch (err) {
    // No room for a certificate: the full run sets the domain's services aside as it always does.
    if (err instanceof NoRoomError) return null;
    logger.error({ err }, 'data plane: nginx apply failed');
    return { ok: false, message: `nginx: ${describeError(err)}`, rejected, scopedHttp: touched };
  }
  logRejections(logger, rejected);
  const hosts = scoped.hosts.length;
  const ms = Date.now() - started;
  logger.debug(
    { ms, loadMs: loadedAt - started, certificatesMs, hosts, services: scoped.http.length },
    'data plane converged (scoped)',
  );
  return { ok: true, rejected, scopedHttp: touched };
}
