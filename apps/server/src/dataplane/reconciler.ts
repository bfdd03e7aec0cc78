import { createCertificateSync } from './reconcile/certificates.js';
import { createCutOff } from './reconcile/cut-off.js';
import { logRejections, rejectPeers, rejectStreamFailures, rejectionsOf } from './reconcile/rejections.js';
import {
  NoRoomError,
  noRejections,
  type ApplyResult,
  type ApplyScope,
  type CertificateAdapter,
  type DataPlaneLogger,
  type DesiredState,
  type Rejections,
  type ScopedState,
  type WireGuardAdapter,
} from './types.js';
import type { DataPlanePlan, ScopedPlan } from './plan.js';
import type { GuardedState } from './reconcile/network-guard.js';
import type { WantedInstance } from './nginx/stream-instances.js';
import type { AccessTable } from './nginx/access-table.js';

// Level-triggered: every run reads the whole desired state from the DB and makes the host match it, so a run is
// idempotent and a missed or crashed run is repaired by the next one (or by the boot run). Nothing here reloads
// nginx: HTTP routes and certificates are data pushed into the running nginx, TCP/UDP services are instances of
// their own, and a row that cannot be applied is set aside (Rejections) while every other row is served.
// The jobs: this file loads, plans and runs the two sides; `reconcile/` keeps what each side must remember between
// runs (certificates ensured, revisions cut) and the rejection bookkeeping.

/** The proxy side (nginx) as the reconciler needs it; `proxy.ts` is the real one, `offline.ts` records calls. */
export interface ProxyAdapter {
  /**
   * Makes nginx route exactly these hosts; `certNames` are the certificates a fresh master must load, `services` how
   * many services the routes serve (nginx's counters are sized from it). Returns the services left out because nginx
   * has no room for their routes (with the reason): everything else is served.
   */
  syncRoutes(
    hosts: ReadonlyMap<string, string>,
    certNames: readonly string[],
    services?: number,
  ): Promise<ReadonlyMap<number, string>>;
  /** Hands nginx the current PEMs of these names (read from disk); NoRoomError names those it has no room for. */
  publishCertificates(names: readonly string[]): Promise<void>;
  unpublishCertificates(names: readonly string[]): Promise<void>;
  /**
   * A scoped run's routes: `entries` are the routes of `hosts` (a host of `hosts` without an entry is deleted), every
   * other host stays as it is; `certNames` are certificates a fresh master must load besides those it knew. False:
   * this cannot be pushed alone (services are set aside for lack of room, nginx refused it, or nothing is known of
   * what nginx holds) and nothing was changed: the caller applies everything instead.
   */
  patchRoutes(
    entries: ReadonlyMap<string, string>,
    hosts: readonly string[],
    certNames: readonly string[],
  ): Promise<boolean>;
  /** Makes the TCP/UDP service instances exactly `wanted`; returns why some could not start, by instance key. */
  syncStreams(wanted: ReadonlyMap<string, WantedInstance>): Promise<Map<string, string>>;
  /** Makes nginx answer exactly these HTTP-01 challenges (token → key authorisation). */
  syncChallenges(answers: ReadonlyMap<string, string>): Promise<void>;
  /**
   * Who may reach HTTP services (docs/ACCESS.md): `syncAccess` before the routes (new policies, the key, revocations),
   * `pruneAccess` after them (policies no route names any more), so a route never names a policy nginx lacks.
   */
  syncAccess(table: AccessTable): Promise<void>;
  pruneAccess(table: AccessTable): Promise<void>;
  /**
   * Cuts the open HTTP connections of services not in `revisions` or served differently; returns how many. `only`: a
   * scoped run, whose `revisions` are those of the scope's services: connections of other services are not looked at.
   */
  cutStale(revisions: ReadonlyMap<number, string>, only?: ReadonlySet<number>): Promise<number>;
}

export interface ReconcilerDeps {
  loadDesiredState: () => Promise<DesiredState>;
  /** Pure: desired state → route table and instance configs (every value through the validators). */
  plan: (state: DesiredState) => DataPlanePlan;
  wireguard: WireGuardAdapter;
  proxy: ProxyAdapter;
  certs: CertificateAdapter;
  logger: DataPlaneLogger;
  /** Leaves out the subnets of nodes' tokens that the gateway needs (reconcile/network-guard.ts), with the reason. */
  guardNetworks?: (state: DesiredState) => Promise<GuardedState>;
  /** The rows of a scope (db/desired-state.ts `loadScopedState`); absent: every apply is a full one. */
  loadScopedState?: (scope: ApplyScope) => Promise<ScopedState>;
  /** The planner over a scope's rows (plan.ts `planScoped`); needed with `loadScopedState`. */
  planScoped?: (scoped: ScopedState) => ScopedPlan;
}

export interface Reconciler {
  /**
   * Converge now; callers arriving while a run is in flight share the next run. `scope`: only what the change touches
   * (a scoped run); scopes arriving during a run are merged into one next run, which goes ahead of a queued full run.
   */
  apply(scope?: ApplyScope): Promise<ApplyResult>;
  /** The next run pushes everything again (nginx or the tunnel was restarted, or nothing is known yet). */
  forgetApplied(): void;
}

const describe = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const { logger, proxy } = deps;
  const certificates = createCertificateSync(deps.certs, proxy);
  const cutOff = createCutOff(proxy);

  /** The last full run saw subnets set by a node's token (checked against every backend: scoped runs wait). */
  let hasTokenNetworks = true;

  async function applyWireGuard(state: DesiredState, rejected: Rejections): Promise<void> {
    await deps.wireguard.ensureInterface(state.gateway);
    rejectPeers(rejected, await deps.wireguard.syncPeers(state.peers));
  }

  /**
   * The plan without the HTTP services of `domains` (nginx had no room for their certificates): they are set aside
   * with the reason, everything else is served.
   */
  function withoutDomains(
    state: DesiredState,
    plan: DataPlanePlan,
    domains: readonly string[],
    message: string,
    rejected: Rejections,
  ): DataPlanePlan {
    const left = new Set(domains);
    const http = state.http.filter((route) => route.domain === null || !left.has(route.domain));
    for (const route of state.http) if (!http.includes(route)) rejected.http.set(route.serviceId, message);
    return { ...plan, routes: deps.plan({ ...state, http }).routes };
  }

  async function applyProxy(state: DesiredState, initialPlan: DataPlanePlan, rejected: Rejections): Promise<void> {
    let plan = initialPlan;
    // Certificates first: a route or a TLS instance may name a certificate that must exist.
    try {
      await certificates.ensureChanged(state.domains);
    } catch (err) {
      if (!(err instanceof NoRoomError)) throw err;
      plan = withoutDomains(state, plan, err.domains, err.message, rejected);
    }
    await proxy.syncChallenges(state.challenges ?? new Map());
    const domainNames = state.domains.map((d) => d.domain);
    // Access policies first, so every route pushed names a policy nginx holds (docs/ACCESS.md).
    await proxy.syncAccess(plan.access);
    // Services nginx has no room for are left out, with the reason; the cut-off then ends their connections too.
    const crowded = await proxy.syncRoutes(plan.routes.hosts, domainNames, plan.routes.revisions.size);
    for (const [id, message] of crowded) rejected.http.set(id, message);
    const revisions =
      crowded.size === 0
        ? plan.routes.revisions
        : new Map([...plan.routes.revisions].filter(([id]) => !crowded.has(id)));
    await proxy.pruneAccess(plan.access);
    rejectStreamFailures(rejected, plan, await proxy.syncStreams(plan.streams.wanted));
    await cutOff.cutIfChanged(revisions);
    // Certificates of deleted domains, once nginx no longer routes them.
    await certificates.pruneDeleted(domainNames);
  }

  /** WireGuard and nginx converge independently: a broken tunnel must not keep the console's route from nginx. */
  async function runOnce(): Promise<ApplyResult> {
    const started = Date.now();
    let state: DesiredState;
    let plan: DataPlanePlan;
    let guarded = new Map<number, string>();
    try {
      state = await deps.loadDesiredState();
      hasTokenNetworks = state.peers.some((peer) => peer.networksByToken === true);
      if (deps.guardNetworks) ({ state, rejected: guarded } = await deps.guardNetworks(state));
      plan = deps.plan(state);
    } catch (err) {
      logger.error({ err }, 'data plane: cannot read the desired state');
      return { ok: false, message: describe(err), rejected: noRejections() };
    }
    const rejected = rejectionsOf(plan);
    rejectPeers(rejected, guarded);
    const loadedAt = Date.now();
    const failures: string[] = [];
    const timed = async (what: string, work: Promise<void>): Promise<number> => {
      await work.catch((err: unknown) => {
        logger.error({ err }, `data plane: ${what} apply failed`);
        const reason = describe(err);
        failures.push(reason.startsWith(what) ? reason : `${what}: ${reason}`);
      });
      return Date.now() - loadedAt;
    };
    const proxySide = { isDone: false };
    // Independent of each other, so they run side by side: the apply costs the slower of the two, not the sum.
    const [wireguardMs, proxyMs] = await Promise.all([
      timed('WireGuard', applyWireGuard(state, rejected)),
      timed(
        'nginx',
        applyProxy(state, plan, rejected).then(() => {
          proxySide.isDone = true;
        }),
      ),
    ]);
    logRejections(logger, rejected);
    logger.debug(
      { ms: Date.now() - started, loadMs: loadedAt - started, wireguardMs, proxyMs },
      'data plane converged',
    );
    // What nginx now serves of the HTTP-01 answers: the other gateways acknowledge them (cluster/acme-answers.ts).
    const served = proxySide.isDone ? { challenges: new Set(state.challenges?.keys()) } : {};
    if (failures.length > 0) return { ok: false, message: failures.join('\n'), rejected, ...served };
    return { ok: true, rejected, ...served };
  }

  /**
   * Whether a scoped run can stand for a full one: a full run succeeded since the start (or since forgetApplied), and
   * no node's token set subnets (the network guard re-checks them against every service's backend: a full run).
   */
  let isScopable = false;

  /** A scope's hosts, loaded, planned and pushed alone; null: it cannot go alone (the caller runs a full apply). */
  async function runScoped(scope: ApplyScope): Promise<ApplyResult | null> {
    const { loadScopedState, planScoped } = deps;
    if (!isScopable || loadScopedState === undefined || planScoped === undefined) return null;
    const started = Date.now();
    let scoped: ScopedState;
    let plan: ScopedPlan;
    try {
      scoped = await loadScopedState(scope);
      plan = planScoped(scoped);
    } catch (err) {
      logger.error({ err }, 'data plane: cannot read the desired state');
      return { ok: false, message: describe(err), rejected: noRejections(), scopedHttp: new Set(scope.http) };
    }
    const rejected = noRejections();
    for (const [id, message] of plan.routes.rejected) rejected.http.set(id, message);
    const touched = new Set([...scope.http, ...scoped.http.map((route) => route.serviceId)]);
    const loadedAt = Date.now();
    let certificatesMs = 0;
    try {
      await certificates.ensureChanged(scoped.domains);
      certificatesMs = Date.now() - loadedAt;
      await proxy.syncAccess(plan.access);
      const names = scoped.domains.map((d) => d.domain);
      if (!(await proxy.patchRoutes(plan.routes.hosts, scoped.hosts, names))) return null;
      await proxy.cutStale(plan.routes.revisions, touched);
      // The full run's memory of what was cut no longer holds: its next run looks again.
      cutOff.forget();
    } catch (err) {
      // No room for a certificate: the full run sets the domain's services aside as it always does.
      if (err instanceof NoRoomError) return null;
      logger.error({ err }, 'data plane: nginx apply failed');
      return { ok: false, message: `nginx: ${describe(err)}`, rejected, scopedHttp: touched };
    }
    logRejections(logger, rejected);
    logger.debug(
      {
        ms: Date.now() - started,
        loadMs: loadedAt - started,
        certificatesMs,
        hosts: scoped.hosts.length,
        services: scoped.http.length,
      },
      'data plane converged (scoped)',
    );
    return { ok: true, rejected, scopedHttp: touched };
  }

  async function runFull(): Promise<ApplyResult> {
    const result = await runOnce();
    isScopable = result.ok && !hasTokenNetworks;
    return result;
  }

  /**
   * One run at a time. What arrives during a run waits for the next one and is merged: scopes into one scope (the
   * union of their hosts and services), full requests into one full run. A queued scoped run goes first (a change is
   * not held up by a queued whole reconcile), then the queued full run (before the next scoped one, so a burst never
   * starves it); each run sees every change committed before its callers' calls.
   */
  type Waiter = { resolve: (result: ApplyResult) => void; reject: (err: unknown) => void };
  let running = false;
  let queuedFull: Waiter[] | null = null;
  let queuedScope: { hosts: Set<string>; http: Set<number>; waiters: Waiter[] } | null = null;

  async function drain(): Promise<void> {
    running = true;
    let wasScoped = false;
    try {
      for (;;) {
        const scope = queuedScope;
        const full = queuedFull;
        // A queued full run goes after at most one scoped run: a burst of changes never starves it.
        if (scope !== null && !(wasScoped && full !== null)) {
          wasScoped = true;
          queuedScope = null;
          let result: ApplyResult | null = null;
          let failure: { err: unknown } | null = null;
          try {
            result = await runScoped({ hosts: [...scope.hosts], http: [...scope.http] });
            if (result === null) {
              // Served by a full run: the queued one goes now, for both.
              const alongside = queuedFull ?? [];
              queuedFull = null;
              result = await runFull();
              for (const waiter of alongside) waiter.resolve(result);
            }
          } catch (err) {
            failure = { err };
          }
          for (const waiter of scope.waiters)
            if (failure) waiter.reject(failure.err);
            else waiter.resolve(result as ApplyResult);
          continue;
        }
        if (full === null) return;
        wasScoped = false;
        queuedFull = null;
        try {
          const result = await runFull();
          for (const waiter of full) waiter.resolve(result);
        } catch (err) {
          for (const waiter of full) waiter.reject(err);
        }
      }
    } finally {
      running = false;
    }
  }

  return {
    apply(scope) {
      return new Promise<ApplyResult>((resolve, reject) => {
        const waiter = { resolve, reject };
        if (scope === undefined) (queuedFull ??= []).push(waiter);
        else {
          queuedScope ??= { hosts: new Set(), http: new Set(), waiters: [] };
          for (const host of scope.hosts) queuedScope.hosts.add(host);
          for (const id of scope.http) queuedScope.http.add(id);
          queuedScope.waiters.push(waiter);
        }
        if (!running) void drain();
      });
    },
    forgetApplied() {
      certificates.forget();
      cutOff.forget();
      isScopable = false;
    },
  };
}
