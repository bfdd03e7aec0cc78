import {
  NginxRejectedError,
  type ApplyResult, type CertificateAdapter, type ConfigFiles, type DataPlaneLogger, type DesiredState, type NginxAdapter,
  type WireGuardAdapter,
} from './types.js';
import { isSameRouting, planOverlay, type RouteIndex } from './nginx/overlay.js';
import type { OverlayStore } from './nginx/overlay-store.js';

// Level-triggered: every run reads the whole desired state from the DB and makes the host match it, so a run is
// idempotent and a missed or crashed run is repaired by the next one (or by the boot run).

export interface ReconcilerDeps {
  loadDesiredState: () => DesiredState;
  renderNginx: (state: DesiredState) => ConfigFiles;
  wireguard: WireGuardAdapter;
  nginx: NginxAdapter;
  certs: CertificateAdapter;
  logger: DataPlaneLogger;
  /** Serve HTTP routing changes without a reload (nginx/overlay.ts). Without it, every change reloads nginx. */
  overlay?: RoutingOverlay;
  /** How long after an overlay change the background reload starts (coalesces bursts; default 500 ms). */
  compactDelayMs?: number;
}

/** The nginx side of the routing overlay, as the reconciler needs it. */
export interface RoutingOverlay {
  /** The HTTP routing of a state, and a key of everything else a reload would change (the stream config). */
  snapshot(state: DesiredState): RoutingSnapshot;
  /** Files that point a generation at the overlay dir of `epoch`. */
  configFor(epoch: number): ConfigFiles;
  store: OverlayStore;
  /** Hands the newest routing to whatever answers nginx for hosts in the overlay, before any file points there. */
  publish(routes: RouteIndex): void;
}

export interface RoutingSnapshot {
  routes: RouteIndex;
  reloadKey: string;
}

export interface Reconciler {
  /** Converge now; callers arriving while a run is in flight share the next run. */
  apply(): Promise<ApplyResult>;
  /** First convergence after boot: rebuilds interface, peers and nginx from the DB. */
  runAtBoot(): Promise<ApplyResult>;
  /** Cancels a scheduled background reload and waits for one in flight. */
  stop(): Promise<void>;
}

function sameFiles(a: ConfigFiles | null, b: ConfigFiles): boolean {
  if (a === null) return false;
  const keys = Object.keys(b);
  return keys.length === Object.keys(a).length && keys.every((key) => a[key] === b[key]);
}

/** A static nginx generation: what it was rendered from, and the overlay epoch it reads. */
interface StaticGeneration {
  epoch: number;
  generation: number;
  rendered: ConfigFiles;
  snapshot: RoutingSnapshot | null;
}

interface Loaded {
  state: DesiredState;
  snapshot: RoutingSnapshot | null;
}

const DEFAULT_COMPACT_DELAY_MS = 500;
/** Certificates ensured side by side (file reads, and openssl for missing ones). */
const CERTIFICATE_CONCURRENCY = 16;

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const { logger, overlay } = deps;
  /** The generation nginx serves, and the one being switched in (both may serve while workers change over). */
  let live: StaticGeneration | null = null;
  let pending: StaticGeneration | null = null;
  let previousEpoch: number | null = null;
  /** The newest desired state a run loaded: what overlays and reloads converge on. */
  let latest: Loaded | null = null;
  let nextEpoch = 1;
  let servedDomains = new Set<string>();
  /** Domains whose certificate was ensured, with the mode it was ensured for. */
  const ensuredDomains = new Map<string, DesiredState['domains'][number]['ssl']>();
  /** Domains whose certificate is being made right now. */
  const ensuring = new Set<string>();
  let inFlight: Promise<ApplyResult> | null = null;
  let queued: Promise<ApplyResult> | null = null;
  let overlayChain: Promise<void> = Promise.resolve();
  let compactChain: Promise<unknown> = Promise.resolve();
  let compactTimer: NodeJS.Timeout | null = null;

  function describe(err: unknown): string {
    return err instanceof Error ? err.message : String(err);
  }

  /** Certificates before nginx: a route or the certificate map may name a file that must exist. */
  async function ensureCertificates(state: DesiredState): Promise<void> {
    // Only domains that are new or changed mode: at 10,000 domains, ensuring every one on every apply cost more
    // than nginx itself. Renewals and retries are the certificate manager's own timers.
    // A few at a time: at boot every domain is new to this process (10,000 PEMs to read and check, ~1 ms each).
    const todo = state.domains.filter((domain) => ensuredDomains.get(domain.domain) !== domain.ssl);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let domain = todo[next++]; domain !== undefined; domain = todo[next++]) {
        ensuring.add(domain.domain);
        try {
          await deps.certs.ensure(domain);
        } finally {
          ensuring.delete(domain.domain);
        }
        ensuredDomains.set(domain.domain, domain.ssl);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CERTIFICATE_CONCURRENCY, todo.length) }, worker));
  }

  /**
   * Certificates of deleted domains, once no generation that may still serve names them. A background reload
   * prunes while a run may be making a new domain's certificate: that one, and the newest state's, stay.
   */
  async function pruneCertificates(served: DesiredState): Promise<void> {
    const current = new Set([...served.domains, ...(latest?.state.domains ?? [])].map((d) => d.domain));
    for (const name of ensuring) current.add(name);
    if (deps.certs.pruneExcept) await deps.certs.pruneExcept([...current]);
    else for (const gone of [...servedDomains].filter((name) => !current.has(name))) await deps.certs.remove(gone);
    for (const name of ensuredDomains.keys()) if (!current.has(name)) ensuredDomains.delete(name);
    servedDomains = current;
  }

  /**
   * Makes the overlay of every generation that may serve (live, pending) route the newest state. Serialised, and
   * each sync reads `latest` when it runs, so the last one to run wins with the newest data.
   */
  function syncOverlays(): Promise<void> {
    const run = overlayChain.then(async () => {
      const want = latest?.snapshot;
      if (!overlay || !want) return;
      for (const generation of [live, pending]) {
        if (generation?.snapshot) await overlay.store.sync(generation.epoch, planOverlay(generation.snapshot.routes, want.routes).files);
      }
    });
    overlayChain = run.catch(() => undefined);
    return run;
  }

  /** A new static generation from the newest state, switched in by a reload (one at a time). */
  function compact(): Promise<number> {
    const run = compactChain.then(() => compactNow());
    compactChain = run.catch(() => undefined);
    return run;
  }

  async function compactNow(): Promise<number> {
    const target = latest;
    if (target === null) throw new Error('data plane: no desired state loaded');
    const rendered = deps.renderNginx(target.state);
    if (live && sameFiles(live.rendered, rendered)) {
      await syncOverlays();
      // The serving config names exactly the domains of this state: certificates of others can go.
      await pruneCertificates(target.state);
      return live.generation;
    }
    const next: StaticGeneration = { epoch: nextEpoch++, generation: 0, rendered, snapshot: target.snapshot };
    if (overlay) {
      // Changes that arrive during the reload reach the new generation's overlay too.
      pending = next;
      await syncOverlays();
    }
    try {
      const files = overlay ? { ...rendered, ...overlay.configFor(next.epoch) } : rendered;
      ({ generation: next.generation } = await deps.nginx.apply(files));
    } catch (err) {
      if (pending === next) pending = null;
      await overlay?.store.prune(keptEpochs());
      throw err;
    }
    previousEpoch = live?.epoch ?? null;
    live = next;
    if (pending === next) pending = null;
    // The previous epoch's overlay stays until the next switch: its workers may finish requests meanwhile.
    await overlay?.store.prune(keptEpochs());
    await pruneCertificates(target.state);
    return next.generation;
  }

  function keptEpochs(): number[] {
    return [live?.epoch, previousEpoch, pending?.epoch].filter((epoch): epoch is number => epoch != null);
  }

  /** Folds overlay changes into a static generation soon, so the overlay router only sees hosts changed since. */
  function scheduleCompaction(): void {
    if (compactTimer) return;
    compactTimer = setTimeout(() => {
      compactTimer = null;
      compact().then(
        (generation) => logger.debug({ generation }, 'data plane: overlay folded into a static generation'),
        (err: unknown) => logger.error({ err }, 'data plane: background reload failed; the overlay keeps serving the change'),
      );
    }, deps.compactDelayMs ?? DEFAULT_COMPACT_DELAY_MS);
  }

  function publish(state: DesiredState, snapshot: RoutingSnapshot | null): void {
    latest = { state, snapshot };
    if (overlay && snapshot) overlay.publish(snapshot.routes);
  }

  /** Returns how the change was applied: through the overlay (no reload) or by a reload. */
  async function applyNginx(state: DesiredState, snapshot: RoutingSnapshot | null): Promise<'overlay' | 'reload' | 'unchanged'> {
    const base = live?.snapshot;
    if (overlay && base && snapshot && base.reloadKey === snapshot.reloadKey) {
      const isUnchanged = !pending && isSameRouting(base.routes, snapshot.routes);
      if (isUnchanged || planOverlay(base.routes, snapshot.routes).isComplete) {
        // A new domain's certificate is made while the overlay is written: nginx finds it by name at the first
        // handshake, and the caller hears back once both are done.
        const certificates = ensureCertificates(state);
        publish(state, snapshot);
        await Promise.all([certificates, syncOverlays()]);
        if (isUnchanged) return 'unchanged';
        scheduleCompaction();
        return 'overlay';
      }
    }
    // A reload loads every certificate a stream server names, so they must all exist first.
    await ensureCertificates(state);
    publish(state, snapshot);
    await compact();
    return 'reload';
  }

  async function applyWireGuard(state: DesiredState): Promise<void> {
    await deps.wireguard.ensureInterface(state.gateway);
    await deps.wireguard.syncPeers(state.peers);
  }

  /** WireGuard and nginx converge independently: a broken tunnel must not keep the console's route from nginx. */
  async function runOnce(): Promise<ApplyResult> {
    const started = Date.now();
    let state: DesiredState;
    let snapshot: RoutingSnapshot | null = null;
    try {
      state = deps.loadDesiredState();
    } catch (err) {
      logger.error({ err }, 'data plane: cannot read the desired state');
      return { ok: false, message: describe(err) };
    }
    const readAt = Date.now();
    try {
      snapshot = overlay?.snapshot(state) ?? null;
    } catch {
      // A value the renderer refuses: the reload path renders it and reports the renderer's error.
    }
    const failures: string[] = [];
    const loadedAt = Date.now();
    let nginxPath = '';
    const timed = async (work: Promise<void>): Promise<number> => {
      await work;
      return Date.now() - loadedAt;
    };
    // Independent of each other, so they run side by side: the apply costs the slower of the two, not the sum.
    const [wireguardMs, nginxMs] = await Promise.all([
      timed(applyWireGuard(state).catch((err: unknown) => {
        logger.error({ err }, 'data plane: WireGuard apply failed');
        failures.push(describe(err));
      })),
      timed(applyNginx(state, snapshot).then((path) => { nginxPath = path; }, (err: unknown) => {
        if (err instanceof NginxRejectedError) logger.warn({ message: err.message }, 'nginx rejected the new configuration; the previous one keeps serving');
        else logger.error({ err }, 'data plane: nginx apply failed');
        failures.push(describe(err));
      })),
    ]);
    if (failures.length > 0) return { ok: false, message: failures.join('\n') };
    const generation = live?.generation ?? 0;
    logger.debug({
      generation, nginx: nginxPath, ms: Date.now() - started, loadMs: readAt - started, indexMs: loadedAt - readAt, wireguardMs, nginxMs,
    }, 'data plane converged');
    return { ok: true, generation };
  }

  function start(): Promise<ApplyResult> {
    const run = runOnce().finally(() => { inFlight = null; });
    inFlight = run;
    return run;
  }

  function apply(): Promise<ApplyResult> {
    if (!inFlight) return start();
    // One run in flight, at most one queued: everyone arriving now is served by the queued run, which reads
    // the DB after their change was committed.
    queued ??= inFlight.then(() => {
      queued = null;
      return start();
    });
    return queued;
  }

  async function runAtBoot(): Promise<ApplyResult> {
    const result = await apply();
    if (result.ok) logger.info({ generation: result.generation }, 'data plane rebuilt from the database');
    return result;
  }

  async function stop(): Promise<void> {
    if (compactTimer) clearTimeout(compactTimer);
    compactTimer = null;
    await compactChain;
  }

  return { apply, runAtBoot, stop };
}
