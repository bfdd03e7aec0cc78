import { noRejections, type ApplyResult, type CertificateAdapter, type DataPlaneLogger, type DesiredState, type Rejections, type WireGuardAdapter } from './types.js';
import type { DataPlanePlan } from './plan.js';
import type { WantedInstance } from './nginx/stream-instances.js';

// Level-triggered: every run reads the whole desired state from the DB and makes the host match it, so a run is
// idempotent and a missed or crashed run is repaired by the next one (or by the boot run). Nothing here reloads
// nginx: HTTP routes and certificates are data pushed into the running nginx, TCP/UDP services are instances of
// their own, and a row that cannot be applied is set aside (Rejections) while every other row is served.

/** The proxy side (nginx) as the reconciler needs it; `proxy.ts` is the real one, `fakes.ts` records calls. */
export interface ProxyAdapter {
  /** Makes nginx route exactly these hosts; `certNames` are the certificates a fresh master must load. */
  syncRoutes(hosts: ReadonlyMap<string, string>, certNames: readonly string[]): Promise<void>;
  /** Hands nginx the current PEMs of these names (read from disk). */
  publishCertificates(names: readonly string[]): Promise<void>;
  unpublishCertificates(names: readonly string[]): Promise<void>;
  /** Makes the TCP/UDP service instances exactly `wanted`; returns why some could not start, by instance key. */
  syncStreams(wanted: ReadonlyMap<string, WantedInstance>): Promise<Map<string, string>>;
  /** Cuts the open HTTP connections of services not in `revisions` or served differently; returns how many. */
  cutStale(revisions: ReadonlyMap<number, string>): Promise<number>;
}

export interface ReconcilerDeps {
  loadDesiredState: () => DesiredState;
  /** Pure: desired state → route table and instance configs (every value through the validators). */
  plan: (state: DesiredState) => DataPlanePlan;
  wireguard: WireGuardAdapter;
  proxy: ProxyAdapter;
  certs: CertificateAdapter;
  logger: DataPlaneLogger;
}

export interface Reconciler {
  /** Converge now; callers arriving while a run is in flight share the next run. */
  apply(): Promise<ApplyResult>;
  /** The next run pushes everything again (nginx or the tunnel was restarted, or nothing is known yet). */
  forgetApplied(): void;
}

/** Certificates ensured side by side (file reads, and openssl for missing ones). */
const CERTIFICATE_CONCURRENCY = 16;

function sameRevisions(a: ReadonlyMap<number, string> | null, b: ReadonlyMap<number, string>): boolean {
  if (a === null || a.size !== b.size) return false;
  for (const [id, revision] of b) if (a.get(id) !== revision) return false;
  return true;
}

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const { logger } = deps;
  /** Domains whose certificate was ensured (and handed to nginx), with the mode it was ensured for. */
  const ensuredDomains = new Map<string, DesiredState['domains'][number]['ssl']>();
  /** Revisions of what nginx was last told to serve: a change means some connections may need cutting. */
  let pushedRevisions: ReadonlyMap<number, string> | null = null;
  let inFlight: Promise<ApplyResult> | null = null;
  let queued: Promise<ApplyResult> | null = null;

  const describe = (err: unknown): string => (err instanceof Error ? err.message : String(err));

  /** Only domains that are new or changed mode: renewals and retries are the certificate manager's own timers. */
  async function ensureCertificates(state: DesiredState): Promise<string[]> {
    const todo = state.domains.filter((domain) => ensuredDomains.get(domain.domain) !== domain.ssl);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let domain = todo[next++]; domain !== undefined; domain = todo[next++]) await deps.certs.ensure(domain);
    };
    await Promise.all(Array.from({ length: Math.min(CERTIFICATE_CONCURRENCY, todo.length) }, worker));
    await deps.proxy.publishCertificates(todo.map((d) => d.domain));
    for (const domain of todo) ensuredDomains.set(domain.domain, domain.ssl);
    return todo.map((d) => d.domain);
  }

  async function applyWireGuard(state: DesiredState, rejected: Rejections): Promise<void> {
    await deps.wireguard.ensureInterface(state.gateway);
    for (const [nodeId, message] of await deps.wireguard.syncPeers(state.peers)) rejected.nodes.set(nodeId, message);
  }

  async function applyProxy(state: DesiredState, plan: DataPlanePlan, rejected: Rejections): Promise<void> {
    // Certificates first: a route or a TLS instance may name a certificate that must exist.
    await ensureCertificates(state);
    const domainNames = state.domains.map((d) => d.domain);
    await deps.proxy.syncRoutes(plan.routes.hosts, domainNames);
    const failures = await deps.proxy.syncStreams(plan.streams.wanted);
    for (const [key, message] of failures) {
      const serviceId = plan.streams.serviceOf.get(key);
      if (serviceId !== undefined) rejected.tcp.set(serviceId, message);
    }
    if (!sameRevisions(pushedRevisions, plan.routes.revisions)) {
      await deps.proxy.cutStale(plan.routes.revisions);
      pushedRevisions = plan.routes.revisions;
    }
    // Certificates of deleted domains, once nginx no longer routes them.
    if (deps.certs.pruneExcept) {
      const removed = await deps.certs.pruneExcept(domainNames);
      if (removed.length > 0) await deps.proxy.unpublishCertificates(removed);
    }
    const current = new Set(domainNames);
    for (const name of ensuredDomains.keys()) if (!current.has(name)) ensuredDomains.delete(name);
  }

  /** WireGuard and nginx converge independently: a broken tunnel must not keep the console's route from nginx. */
  async function runOnce(): Promise<ApplyResult> {
    const started = Date.now();
    const rejected = noRejections();
    let state: DesiredState;
    let plan: DataPlanePlan;
    try {
      state = deps.loadDesiredState();
      plan = deps.plan(state);
    } catch (err) {
      logger.error({ err }, 'data plane: cannot read the desired state');
      return { ok: false, message: describe(err), rejected };
    }
    for (const [id, message] of plan.routes.rejected) rejected.http.set(id, message);
    for (const [id, message] of plan.streams.rejected) rejected.tcp.set(id, message);
    const loadedAt = Date.now();
    const failures: string[] = [];
    const timed = async (what: string, work: Promise<void>): Promise<number> => {
      await work.catch((err: unknown) => {
        logger.error({ err }, `data plane: ${what} apply failed`);
        failures.push(`${what}: ${describe(err)}`);
      });
      return Date.now() - loadedAt;
    };
    // Independent of each other, so they run side by side: the apply costs the slower of the two, not the sum.
    const [wireguardMs, proxyMs] = await Promise.all([
      timed('WireGuard', applyWireGuard(state, rejected)),
      timed('nginx', applyProxy(state, plan, rejected)),
    ]);
    for (const [kind, rows] of Object.entries(rejected) as [keyof Rejections, Map<number, string>][]) {
      for (const [id, message] of rows) logger.warn({ kind, id, message }, 'data plane: set aside a row it cannot apply');
    }
    logger.debug({ ms: Date.now() - started, loadMs: loadedAt - started, wireguardMs, proxyMs }, 'data plane converged');
    if (failures.length > 0) return { ok: false, message: failures.join('\n'), rejected };
    return { ok: true, rejected };
  }

  function start(): Promise<ApplyResult> {
    const run = runOnce().finally(() => { inFlight = null; });
    inFlight = run;
    return run;
  }

  return {
    apply() {
      if (!inFlight) return start();
      // One run in flight, at most one queued: everyone arriving now is served by the queued run, which reads the DB
      // after their change was committed.
      queued ??= inFlight.then(() => {
        queued = null;
        return start();
      });
      return queued;
    },
    forgetApplied() {
      ensuredDomains.clear();
      pushedRevisions = null;
    },
  };
}
