import type { WantedInstance } from './nginx/stream-instances.js';
import type { AccessTable } from './nginx/access-table.js';
import type { DataPlanePlan } from './plan.js';
import type { Reconciler } from './reconciler.js';
import { applyProblems, noRoomLine } from './reconcile/problems.js';
import type { ApplyResult, ApplyScope, DataPlaneLogger, DesiredState, DriftReport, WireGuardAdapter } from './types.js';

// Heal, retry and drift: the data plane's supervision, written once against the adapters, so the real data plane
// (index.ts) and the one with its I/O off (offline.ts) run the same code and the API tests exercise it.
//
// - apply: one reconcile; a run that failed as a whole (nginx or the tunnel down) marks the data plane behind, and
//   what failed shows in the system status at once; a drift check follows a few seconds later (bursts share one).
// - heal (every second while running): restarts what died (nginx, a TCP/UDP instance, the tunnel), then applies
//   everything again; while behind, applies again every RETRY_BEHIND_MS.
// - drift (DRIFT_AFTER_CHANGE_MS after a change, and every driftEveryMs; after the boot's rebuild the periodic one
//   only; one due while a run is in flight follows that run by DRIFT_AFTER_CHANGE_MS): reads back what nginx and
//   WireGuard hold, compares it with the guarded, planned desired state, and repairs the difference with a full apply.

/** The proxy's part in supervision (proxy.ts; offline.ts records). */
export interface SupervisedProxy {
  /** Restarts what died; `http` true when nginx's HTTP instance was restarted (everything must be pushed again). */
  heal(): Promise<{ http: boolean; streams: string[] }>;
  /**
   * What nginx serves that differs from `routes`, `certNames`, `streams` and `challenges` (what the DB says), as
   * sentences; the services left out for lack of room at the last push aside (crowdedServices).
   */
  drift(
    routes: ReadonlyMap<string, string>,
    certNames: readonly string[],
    streams: ReadonlyMap<string, WantedInstance>,
    challenges?: ReadonlyMap<string, string>,
    access?: AccessTable,
  ): Promise<string[]>;
  /** Services whose routes were left out at the last push because nginx had no room for them. */
  crowdedServices(): number[];
  /** The next apply reads back what nginx holds and pushes what differs. */
  forget(): void;
}

/** Something the drift check compares that repairs itself without a full apply (the listener limits). */
export interface SelfRepairing {
  drift(): Promise<string[]>;
  forget(): void;
  /** Writes everything again; false when it could not. */
  ensure(): Promise<boolean>;
}

export interface SupervisorTiming {
  /** How often dead processes and a vanished interface are looked for (default 1 s). */
  healIntervalMs?: number;
  /** How often an apply that failed as a whole is retried by the heal loop (default 5 s). */
  retryBehindMs?: number;
  /** Drift is looked for this long after a change (default 3 s)... */
  driftAfterChangeMs?: number;
  /** ...and this often anyway (default 60 s). */
  driftEveryMs?: number;
}

export interface SupervisorDeps {
  reconciler: Reconciler;
  /** The desired state as it is served: guarded (subnets set aside are not drift) and planned. */
  loadPlanned(): Promise<{ state: DesiredState; plan: DataPlanePlan }>;
  proxy: SupervisedProxy;
  wireguard: Pick<WireGuardAdapter, 'heal' | 'drift' | 'forget'>;
  /** Several gateways: HTTP-01 answers and stored certificates are compared too. */
  isShared: boolean;
  /** Names of domains whose certificate file is not the one stored for every gateway (several gateways only). */
  certificatesDiffering?: (domains: DesiredState['domains']) => Promise<string[]>;
  listenerLimits?: SelfRepairing;
  logger: DataPlaneLogger;
  timing?: SupervisorTiming;
}

export interface Supervisor {
  /** `scope`: what the change touches (reconciler.ts); absent: everything. */
  apply(scope?: ApplyScope): Promise<ApplyResult>;
  /**
   * The boot's rebuild: everything applied, against what nginx and WireGuard were read back to hold. It is no change:
   * the next drift check is the periodic one, not one a few seconds later (at 100,000 services a drift check reads,
   * plans and compares everything, every PEM file included, right when the first changes after a boot come).
   */
  rebuild(): Promise<ApplyResult>;
  checkDrift(): Promise<DriftReport>;
  /** One pass of the heal loop (the timer calls it; tests call it directly). */
  healOnce(): Promise<void>;
  /** Starts the heal loop and the drift schedule. */
  start(): void;
  stop(): void;
  isRunning(): boolean;
  lastDrift(): DriftReport | null;
  onDrift(listener: (report: DriftReport) => void): () => void;
  /** Publishes a report as if a drift check had made it (the offline data plane's tests). */
  publishDrift(report: DriftReport): void;
}

export const RETRY_BEHIND_MS = 5000;
export const DRIFT_AFTER_CHANGE_MS = 3000;
export const DRIFT_EVERY_MS = 60_000;
export const HEAL_INTERVAL_MS = 1000;

const describeError = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The last drift report and who listens for the next one. */
class DriftReports {
  last: DriftReport | null = null;
  private readonly listeners = new Set<(report: DriftReport) => void>();

  publish(report: DriftReport): void {
    this.last = report;
    for (const listener of this.listeners) listener(report);
  }

  /** A failure shown at once, unless the last report says the same (the next check reports again what it finds). */
  problems(differences: string[]): void {
    const last = this.last;
    if (last && !last.repaired && last.differences.join('\n') === differences.join('\n')) return;
    this.publish({ checkedAt: new Date().toISOString(), differences, repaired: false });
  }

  listen(listener: (report: DriftReport) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}

/** The heal loop's memory: whether the last apply failed as a whole, when it was last retried, the last error. */
class HealState {
  isBehind = false;
  isHealing = false;
  lastRetryAt = 0;
  lastError = '';
}

/** The supervision of one data plane: its heal loop, retry while behind, and drift schedule (see above). */
class DataPlaneSupervisor implements Supervisor {
  private readonly reports = new DriftReports();
  private readonly heal = new HealState();
  /** Applies asked for (`count`) and in flight (`running`): a drift check that overlapped one says nothing. */
  private readonly changes = { count: 0, running: 0 };
  private readonly timing: Required<SupervisorTiming>;
  private healTimer: NodeJS.Timeout | null = null;
  private driftTimer: NodeJS.Timeout | null = null;
  /** A drift check came due while a run was in flight: it follows the runs (`scheduleDriftCheck`). */
  private isDriftOwed = false;

  constructor(private readonly deps: SupervisorDeps) {
    this.timing = {
      healIntervalMs: deps.timing?.healIntervalMs ?? HEAL_INTERVAL_MS,
      retryBehindMs: deps.timing?.retryBehindMs ?? RETRY_BEHIND_MS,
      driftAfterChangeMs: deps.timing?.driftAfterChangeMs ?? DRIFT_AFTER_CHANGE_MS,
      driftEveryMs: deps.timing?.driftEveryMs ?? DRIFT_EVERY_MS,
    };
  }

  apply(scope?: ApplyScope): Promise<ApplyResult> {
    return this.run(scope, true);
  }

  rebuild(): Promise<ApplyResult> {
    return this.run(undefined, false);
  }

  private async run(scope: ApplyScope | undefined, isChange: boolean): Promise<ApplyResult> {
    this.changes.running++;
    this.changes.count++;
    let result: ApplyResult;
    try {
      result = await this.deps.reconciler.apply(scope);
    } finally {
      this.changes.running--;
    }
    this.heal.isBehind = !result.ok;
    const problems = applyProblems(result);
    if (problems.length > 0) this.reports.problems(problems);
    if (isChange || this.isDriftOwed) this.scheduleDriftCheck(this.timing.driftAfterChangeMs);
    // A rebuild never puts off a check already due (a change's, made meanwhile).
    else if (this.driftTimer === null) this.scheduleDriftCheck(this.timing.driftEveryMs);
    return result;
  }

  private scheduleDriftCheck(delayMs: number): void {
    if (!this.healTimer) return;
    if (this.driftTimer) clearTimeout(this.driftTimer);
    this.isDriftOwed = false;
    this.driftTimer = setTimeout(() => {
      this.driftTimer = null;
      // A run in flight (the boot's rebuild: seconds at 100,000 services) would make whatever the check found say
      // nothing, after it read, planned and compared every route and certificate beside that run: it follows the
      // run instead (run() schedules it when one ends).
      if (this.changes.running > 0) {
        this.isDriftOwed = true;
        return;
      }
      this.checkDrift()
        .catch((err: unknown) => {
          this.deps.logger.warn({ err }, 'data plane: drift check failed');
          this.reports.problems([`the drift check could not read what is served: ${describeError(err)}`]);
        })
        .finally(() => {
          if (!this.driftTimer) this.scheduleDriftCheck(this.timing.driftEveryMs);
        });
    }, delayMs);
    this.driftTimer.unref();
  }

  /** What nginx and WireGuard serve that differs from the database (repaired by a full apply). */
  private async servedDifferences(state: DesiredState, plan: DataPlanePlan): Promise<string[]> {
    const { proxy, wireguard, isShared, certificatesDiffering } = this.deps;
    const { routes, streams, access } = plan;
    const domainNames = state.domains.map((d) => d.domain);
    const stale = isShared && certificatesDiffering ? await certificatesDiffering(state.domains) : [];
    const challenges = isShared ? state.challenges : undefined;
    return [
      ...(await proxy.drift(routes.hosts, domainNames, streams.wanted, challenges, access)),
      ...stale.map((name) => `the certificate of ${name} is not the one stored for every gateway`),
      ...(await wireguard.drift(state.peers)),
    ];
  }

  async checkDrift(): Promise<DriftReport> {
    const { reconciler, proxy, wireguard, listenerLimits, logger } = this.deps;
    const changesBefore = this.changes.count;
    const { state, plan } = await this.deps.loadPlanned();
    const served = await this.servedDifferences(state, plan);
    // A change applied while this check read (the database before it, nginx after it, or the other way round) is
    // not drift: what differs is that change half seen. The drift check that follows every change looks again.
    if (served.length > 0 && (this.changes.running > 0 || this.changes.count !== changesBefore)) {
      logger.debug({ differences: served }, 'data plane: a change ran during the drift check; checking again after it');
      return this.reports.last ?? { checkedAt: new Date().toISOString(), differences: [], repaired: false };
    }
    // The listener's firewall rules depend on settings only: repaired by themselves, without a full push.
    const limits = (await listenerLimits?.drift()) ?? [];
    const differences = [...served, ...limits];
    let repaired = differences.length > 0;
    if (served.length > 0) {
      logger.warn({ differences }, 'data plane: what nginx or WireGuard serve differs from the database; repairing');
      reconciler.forgetApplied();
      proxy.forget();
      wireguard.forget();
      repaired = (await reconciler.apply()).ok;
    }
    if (limits.length > 0 && listenerLimits) {
      if (served.length === 0) logger.warn({ differences }, 'data plane: the listener limits differ; repairing');
      listenerLimits.forget();
      repaired = (await listenerLimits.ensure()) && repaired;
    }
    // Services set aside for lack of room are reported, not repaired: they are tried again once there is room.
    const crowded = proxy.crowdedServices();
    if (crowded.length > 0) differences.unshift(noRoomLine(crowded));
    const report: DriftReport = { checkedAt: new Date().toISOString(), differences, repaired };
    this.reports.publish(report);
    return report;
  }

  async healOnce(): Promise<void> {
    const { heal } = this;
    if (heal.isHealing) return;
    heal.isHealing = true;
    try {
      await this.restoreOrRetry();
      heal.lastError = '';
    } catch (err) {
      const text = describeError(err);
      if (text !== heal.lastError)
        this.deps.logger.error({ err }, 'data plane: could not restore nginx or the tunnel; retrying');
      heal.lastError = text;
    } finally {
      heal.isHealing = false;
    }
  }

  /** Restarts what died and applies everything again; or, while behind, applies again every retryBehindMs. */
  private async restoreOrRetry(): Promise<void> {
    const { proxy, wireguard, reconciler, logger } = this.deps;
    const restored = await proxy.heal();
    const isTunnelRestored = await wireguard.heal().catch((err: unknown) => {
      this.heal.isBehind = true;
      throw err;
    });
    if (restored.http) reconciler.forgetApplied();
    if (restored.http || restored.streams.length > 0 || isTunnelRestored) {
      const result = await this.apply();
      logger.info(
        { nginx: restored.http, services: restored.streams, tunnel: isTunnelRestored, ok: result.ok },
        'data plane: restored what had died',
      );
    } else if (this.heal.isBehind && Date.now() - this.heal.lastRetryAt > this.timing.retryBehindMs) {
      this.heal.lastRetryAt = Date.now();
      await this.apply();
    }
  }

  start(): void {
    if (this.healTimer) return;
    this.healTimer = setInterval(() => void this.healOnce(), this.timing.healIntervalMs);
    this.healTimer.unref();
  }

  stop(): void {
    if (this.healTimer) clearInterval(this.healTimer);
    this.healTimer = null;
    if (this.driftTimer) clearTimeout(this.driftTimer);
    this.driftTimer = null;
  }

  isRunning(): boolean {
    return this.healTimer !== null;
  }

  lastDrift(): DriftReport | null {
    return this.reports.last;
  }

  onDrift(listener: (report: DriftReport) => void): () => void {
    return this.reports.listen(listener);
  }

  publishDrift(report: DriftReport): void {
    this.reports.publish(report);
  }
}

export function createSupervisor(deps: SupervisorDeps): Supervisor {
  return new DataPlaneSupervisor(deps);
}
