import { createCertificateSync } from './reconcile/certificates.js';
import { createCutOff } from './reconcile/cut-off.js';
import { FullRun } from './reconcile/full-run.js';
import { ScopedLedger } from './reconcile/ledger.js';
import { RunQueue } from './reconcile/run-queue.js';
import { runScoped } from './reconcile/scoped-run.js';
import type {
  ApplyResult,
  ApplyScope,
  CertificateAdapter,
  DataPlaneLogger,
  DesiredState,
  ScopedState,
  WireGuardAdapter,
} from './types.js';
import type { DataPlanePlan, ScopedPlan } from './plan.js';
import type { GuardedState } from './reconcile/network-guard.js';
import type { WantedInstance } from './nginx/stream-instances.js';
import type { AccessTable } from './nginx/access-table.js';

// Level-triggered: every run reads the whole desired state from the DB and makes the host match it, so a run is
// idempotent and a missed or crashed run is repaired by the next one (or by the boot run). Nothing here reloads
// nginx: HTTP routes and certificates are data pushed into the running nginx, TCP/UDP services are instances of
// their own, and a row that cannot be applied is set aside (Rejections) while every other row is served.
// The jobs: this file wires the parts of `reconcile/`: the full run (`full-run.ts`: load, plan, both sides), the
// scoped run (`scoped-run.ts`), the queue that runs them one at a time (`run-queue.ts`), and what each side must
// remember between runs (certificates ensured, revisions cut) and the rejection bookkeeping.

/** The proxy side (nginx) as the reconciler needs it; `proxy.ts` is the real one, `offline.ts` records calls. */
/** What the caller of `publishCertificates` knows of the PEMs. */
export interface PublishGiven {
  /**
   * Names whose file must hold that certificate (fingerprint): those whose file is missing or holds another are not
   * handed over but returned (reconcile/certificates.ts ensures them).
   */
  expected?: ReadonlyMap<string, string> | undefined;
  /** PEMs just written (CertificateAdapter.takeUnpushed): handed over as they are, not read back from disk. */
  made?: ReadonlyMap<string, string> | undefined;
}

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
  /**
   * A full run's routes, before its certificates are pushed: nginx's dictionaries are sized for both at once (a boot
   * that needs more room reloads nginx once, not once for the certificates and again for the routes).
   */
  reserveRoutes?(hosts: ReadonlyMap<string, string>, services: number): void;
  /**
   * Hands nginx the current PEMs of these names (each file read once, or given); NoRoomError names those it has no
   * room for.
   */
  publishCertificates(names: readonly string[], given?: PublishGiven): Promise<string[]>;
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
  /**
   * A scoped run's TCP/UDP instances: those of `keys` made exactly `wanted` (a key without an instance wanted stops),
   * every other instance left alone; returns why some could not start, by instance key.
   */
  patchStreams(wanted: ReadonlyMap<string, WantedInstance>, keys: readonly string[]): Promise<Map<string, string>>;
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
  /**
   * Pure: desired state → route table and instance configs (every value through the validators); the real planner
   * gives the event loop back between slices of rows (plan.ts `planDataPlaneSliced`).
   */
  plan: (state: DesiredState) => DataPlanePlan | Promise<DataPlanePlan>;
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

/** The scoped run's precondition (dataplane/README.md "Scoped applies"). */
class Scopability {
  /**
   * Whether a scoped run can stand for a full one: a full run succeeded since the start (or since forgetApplied), and
   * it saw no subnets set by a node's token (the network guard re-checks them against every service's backend: a
   * full run). Beside a full run in flight a scoped run goes regardless (the boot's: nginx serves its routes snapshot
   * meanwhile): the full run brings everything else along.
   */
  isScopable = false;
}

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const certificates = createCertificateSync(deps.certs, deps.proxy);
  const cutOff = createCutOff(deps.proxy);
  const ledger = new ScopedLedger();
  const fullRun = new FullRun(deps, certificates, cutOff, ledger);
  const scopability = new Scopability();
  const queue = new RunQueue({
    scoped: (scope, besideFull) =>
      scopability.isScopable || besideFull
        ? runScoped(deps, { certificates, cutOff, ledger }, scope)
        : Promise.resolve(null),
    async full() {
      const result = await fullRun.run();
      scopability.isScopable = result.ok && !fullRun.hasTokenNetworks;
      return result;
    },
  });
  return {
    apply: (scope) => queue.apply(scope),
    forgetApplied() {
      certificates.forget();
      cutOff.forget();
      scopability.isScopable = false;
    },
  };
}
