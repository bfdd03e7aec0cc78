import type { DataPlanePlan } from '../plan.js';
import type { ReconcilerDeps } from '../reconciler.js';
import { NoRoomError, noRejections, type ApplyResult, type DesiredState, type Rejections } from '../types.js';
import type { CertificateSync } from './certificates.js';
import type { CutOff } from './cut-off.js';
import { overlay, withNewerPeers, type ScopedLedger } from './ledger.js';
import { logRejections, rejectPeers, rejectStreamFailures, rejectionsOf } from './rejections.js';

/** A run's verdict speaking for no row: what is stored of every row stays (a run that could not read its rows). */
export const SPEAKS_FOR_NONE = {
  scopedHttp: new Set<number>(),
  scopedTcp: new Set<number>(),
  scopedNodes: new Set<number>(),
} as const;

export const describeError = (err: unknown): string => (err instanceof Error ? err.message : String(err));

type SettlePeerSync = ReturnType<ScopedLedger['expectPeerSync']>;

/** A full run's input: the whole desired state (its nodes' subnets guarded) and its plan. */
interface Loaded {
  state: DesiredState;
  plan: DataPlanePlan;
  guarded: Map<number, string>;
}

/**
 * A full run: the whole desired state read, planned and applied; WireGuard and nginx converge side by side (a broken
 * tunnel must not keep the console's route from nginx).
 */
export class FullRun {
  /** The last full run saw subnets set by a node's token (checked against every backend: scoped runs wait). */
  hasTokenNetworks = true;

  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly certificates: CertificateSync,
    private readonly cutOff: CutOff,
    private readonly ledger: ScopedLedger,
  ) {}

  async run(): Promise<ApplyResult> {
    const ticket = this.ledger.take();
    this.ledger.beginFull(ticket);
    const settlePeerSync = this.ledger.expectPeerSync(ticket);
    let reason = 'no peer sync was made';
    try {
      const result = await this.runAs(ticket, settlePeerSync);
      if (!result.ok) reason = result.message;
      return { ...result, newerVerdicts: () => this.ledger.verdictsAfter(ticket) };
    } finally {
      // Read nothing, or failed before its sync: a scoped run waiting for it fails with it, and its scope stays owed.
      settlePeerSync(new Error(reason));
    }
  }

  private async runAs(ticket: number, settlePeerSync: SettlePeerSync): Promise<ApplyResult> {
    const started = Date.now();
    let loaded: Loaded;
    try {
      loaded = await this.load();
    } catch (err) {
      this.deps.logger.error({ err }, 'data plane: cannot read the desired state');
      // Read nothing: its verdict speaks for no row (what is stored stays).
      return { ok: false, message: describeError(err), rejected: noRejections(), ...SPEAKS_FOR_NONE };
    }
    const { state, plan, guarded } = loaded;
    const rejected = rejectionsOf(plan);
    rejectPeers(rejected, guarded);
    const loadedAt = Date.now();
    const failures: string[] = [];
    const timed = async (what: string, work: Promise<void>): Promise<number> => {
      await work.catch((err: unknown) => {
        this.deps.logger.error({ err }, `data plane: ${what} apply failed`);
        const reason = describeError(err);
        failures.push(reason.startsWith(what) ? reason : `${what}: ${reason}`);
      });
      return Date.now() - loadedAt;
    };
    const proxySide = { isDone: false };
    // Independent of each other, so they run side by side: the apply costs the slower of the two, not the sum.
    const [wireguardMs, proxyMs] = await Promise.all([
      timed('WireGuard', this.applyWireGuard(ticket, state, rejected, settlePeerSync)),
      timed(
        'nginx',
        this.applyProxy(ticket, state, plan, rejected).then(() => {
          proxySide.isDone = true;
        }),
      ),
    ]);
    logRejections(this.deps.logger, rejected);
    this.deps.logger.debug(
      { ms: Date.now() - started, loadMs: loadedAt - started, wireguardMs, proxyMs },
      'data plane converged',
    );
    // What nginx now serves of the HTTP-01 answers: the other gateways acknowledge them (cluster/acme-answers.ts).
    const served = proxySide.isDone ? { challenges: new Set(state.challenges?.keys()) } : {};
    if (failures.length > 0) return { ok: false, message: failures.join('\n'), rejected, ...served };
    return { ok: true, rejected, ...served };
  }

  private async load(): Promise<Loaded> {
    let state = await this.deps.loadDesiredState();
    this.hasTokenNetworks = state.peers.some((peer) => peer.networksByToken === true);
    let guarded = new Map<number, string>();
    if (this.deps.guardNetworks) ({ state, rejected: guarded } = await this.deps.guardNetworks(state));
    return { state, plan: await this.deps.plan(state), guarded };
  }

  /**
   * The interface and every peer, one WireGuard change at a time with the scoped runs' peer patches: the peers scoped
   * runs that read after this run made are synced as they made them (a node disabled meanwhile is not re-added, one
   * created meanwhile is not dropped).
   */
  private async applyWireGuard(
    ticket: number,
    state: DesiredState,
    rejected: Rejections,
    settlePeerSync: SettlePeerSync,
  ): Promise<void> {
    const { wireguard } = this.deps;
    await this.ledger.exclusiveTunnel(async () => {
      try {
        await wireguard.ensureInterface(state.gateway);
        const newer = this.ledger.newerPeers(ticket);
        const failures = await wireguard.syncPeers(withNewerPeers(state.peers, newer));
        settlePeerSync(failures);
        // Those nodes' rows are newer than this run's: what it said of their old peers (the network guard's verdict)
        // no longer holds; what the sync of their newer peers answered does.
        for (const nodeId of newer.keys()) rejected.nodes.delete(nodeId);
        rejectPeers(rejected, failures);
      } catch (err) {
        settlePeerSync(new Error(describeError(err)));
        throw err;
      }
    });
  }

  private async applyProxy(
    ticket: number,
    state: DesiredState,
    initialPlan: DataPlanePlan,
    rejected: Rejections,
  ): Promise<void> {
    let plan = initialPlan;
    const domainNames = state.domains.map((d) => d.domain);
    // The prune's walk of the PEMs on disk (the boot's: 100,000 files) goes beside the certificates' push, not in this
    // run's turn to push: a change going beside the run waits for its pushes, not for the walk, and the boot's routes
    // do not wait for it either. null (not due, or unreadable): the prune walks them itself.
    const listing = this.certificates.listForPrune(domainNames).catch(() => null);
    this.deps.proxy.reserveRoutes?.(plan.routes.hosts, plan.routes.revisions.size);
    // Certificates first: a route or a TLS instance may name a certificate that must exist.
    try {
      await this.certificates.ensureChanged(state.domains);
    } catch (err) {
      if (!(err instanceof NoRoomError)) throw err;
      plan = await this.withoutDomains(state, plan, err.domains, err.message, rejected);
    }
    await this.deps.proxy.syncChallenges(state.challenges ?? new Map());
    const onDisk = await listing;
    await this.ledger.exclusive(() => this.pushHttp(ticket, plan, domainNames, rejected, onDisk));
    await this.syncStreams(ticket, plan, rejected);
  }

  /** The TCP/UDP instances; those scoped runs that read after this run made are left as they made them. */
  private async syncStreams(ticket: number, plan: DataPlanePlan, rejected: Rejections): Promise<void> {
    const failures = await this.ledger.exclusiveStreams(async () => {
      const newer = this.ledger.newerStreams(ticket);
      const all = await this.deps.proxy.syncStreams(overlay(plan.streams.wanted, newer));
      this.ledger.unstarted.clear();
      for (const key of all.keys()) this.ledger.unstarted.add(key);
      // A newer run's instance failing is that run's to report: its service may no longer be this plan's.
      return newer.size === 0 ? all : new Map([...all].filter(([key]) => !newer.has(key)));
    });
    rejectStreamFailures(rejected, plan, failures);
  }

  /**
   * Routes, access, cut-off and certificates' prune, one push at a time with the scoped runs' (ScopedLedger): what
   * scoped runs that read after this run pushed is left as they pushed it.
   */
  private async pushHttp(
    ticket: number,
    plan: DataPlanePlan,
    names: string[],
    rejected: Rejections,
    onDisk: readonly string[] | null,
  ): Promise<void> {
    const { proxy } = this.deps;
    const newer = this.ledger.newerThan(ticket);
    const domainNames = newer.domains.length === 0 ? names : [...new Set([...names, ...newer.domains])];
    // Access policies first, so every route pushed names a policy nginx holds (docs/ACCESS.md).
    await proxy.syncAccess(plan.access);
    // Services nginx has no room for are left out, with the reason; the cut-off then ends their connections too.
    const hosts = overlay(plan.routes.hosts, newer.hosts);
    const crowded = await proxy.syncRoutes(hosts, domainNames, plan.routes.revisions.size);
    for (const [id, message] of crowded) rejected.http.set(id, message);
    const served =
      crowded.size === 0
        ? plan.routes.revisions
        : new Map([...plan.routes.revisions].filter(([id]) => !crowded.has(id)));
    await proxy.pruneAccess({ ...plan.access, entries: new Map(overlay(plan.access.entries, newer.access)) });
    await this.cutOff.cutIfChanged(overlay(served, newer.revisions));
    // Certificates of deleted domains, once nginx no longer routes them.
    await this.certificates.pruneDeleted(domainNames, onDisk);
  }

  /**
   * The plan without the HTTP services of `domains` (nginx had no room for their certificates): they are set aside
   * with the reason, everything else is served.
   */
  private async withoutDomains(
    state: DesiredState,
    plan: DataPlanePlan,
    domains: readonly string[],
    message: string,
    rejected: Rejections,
  ): Promise<DataPlanePlan> {
    const left = new Set(domains);
    const http = state.http.filter((route) => route.domain === null || !left.has(route.domain));
    for (const route of state.http) if (!http.includes(route)) rejected.http.set(route.serviceId, message);
    return { ...plan, routes: (await this.deps.plan({ ...state, http })).routes };
  }
}
