import type { ScopedPlan } from '../plan.js';
import type { ReconcilerDeps } from '../reconciler.js';
import {
  NoRoomError,
  noRejections,
  type ApplyResult,
  type ApplyScope,
  type DesiredPeer,
  type Rejections,
  type ScopedState,
} from '../types.js';
import type { CertificateSync } from './certificates.js';
import type { CutOff } from './cut-off.js';
import { describeError, SPEAKS_FOR_NONE } from './full-run.js';
import type { ScopedLedger } from './ledger.js';
import { logRejections, rejectPeers } from './rejections.js';

interface ScopedParts {
  certificates: CertificateSync;
  cutOff: CutOff;
  ledger: ScopedLedger;
}

/**
 * A scoped run (dataplane/README.md "Scoped applies"): a scope's hosts loaded, planned and pushed alone, also while a
 * full run is in flight (ScopedLedger). null: it cannot go alone, nothing was changed, and the caller runs a full
 * apply instead.
 */
export async function runScoped(
  deps: ReconcilerDeps,
  parts: ScopedParts,
  scope: ApplyScope,
): Promise<ApplyResult | null> {
  const { loadScopedState, planScoped, logger } = deps;
  if (loadScopedState === undefined || planScoped === undefined) return null;
  // Instances that could not start are tried again by every change (the full run did so before scoped runs).
  const retried = parts.ledger.unstarted;
  if (retried.size > 0) scope = { ...scope, streams: [...new Set([...(scope.streams ?? []), ...retried])] };
  const started = Date.now();
  const ticket = parts.ledger.take();
  let scoped: ScopedState;
  let plan: ScopedPlan;
  let readAt = started;
  try {
    scoped = await loadScopedState(scope);
    readAt = Date.now();
    plan = planScoped(scoped);
  } catch (err) {
    logger.error({ err }, 'data plane: cannot read the desired state');
    // Read nothing: its verdict speaks for no row (what is stored stays).
    return { ok: false, message: describeError(err), rejected: noRejections(), ...SPEAKS_FOR_NONE };
  }
  // The network guard checks the subnets a node's token set against every service's backend: a full run.
  if (scoped.tokenNetworks === true) return null;
  const rejected = noRejections();
  for (const [id, message] of plan.routes.rejected) rejected.http.set(id, message);
  for (const [id, message] of plan.streams.rejected) rejected.tcp.set(id, message);
  const touched = new Set([...scope.http, ...scoped.http.map((route) => route.serviceId)]);
  const touchedTcp = new Set([...(scope.tcp ?? []), ...(scoped.stream ?? []).map((route) => route.serviceId)]);
  const nodeIds = scoped.nodes ?? [];
  const spoken = { scopedHttp: touched, scopedTcp: touchedTcp, scopedNodes: new Set(nodeIds) };
  // A full run that read before this run leaves these rows' verdicts to it, whatever either finds.
  parts.ledger.recordVerdicts(ticket, { http: touched, tcp: touchedTcp, nodes: spoken.scopedNodes });
  const loadedAt = Date.now();
  // A node's peer first, alone (a disabled node's services then stop being routed to a peer that is gone).
  if (nodeIds.length > 0) {
    let failures: ReadonlyMap<number, string> | null;
    try {
      failures = await patchPeers(deps, parts.ledger, { ticket, peers: scoped.peers ?? [], nodeIds });
    } catch (err) {
      logger.error({ err }, 'data plane: WireGuard apply failed');
      return { ok: false, message: `WireGuard: ${describeError(err)}`, rejected, ...spoken };
    }
    if (failures === null) return null;
    rejectPeers(rejected, failures);
  }
  let pushed: Pushed | null = { certificatesMs: 0, routesMs: 0 };
  try {
    // A TCP/UDP change alone pushes nothing to the HTTP instance (nor waits for its pushes).
    if (scoped.hosts.length > 0 || scope.http.length > 0)
      pushed = await parts.ledger.exclusive(() => push(deps, parts, { ticket, scoped, plan, touched }));
    if (pushed !== null && (scoped.streams ?? []).length > 0)
      await parts.ledger.exclusiveStreams(() => pushStreams(deps, parts, { ticket, scoped, plan, rejected }));
  } catch (err) {
    // No room for a certificate: the full run sets the domain's services aside as it always does.
    if (err instanceof NoRoomError) return null;
    logger.error({ err }, 'data plane: nginx apply failed');
    return { ok: false, message: `nginx: ${describeError(err)}`, rejected, ...spoken };
  }
  if (pushed === null) return null;
  return converged(deps, rejected, spoken, {
    ms: Date.now() - started,
    loadMs: loadedAt - started,
    readMs: readAt - started,
    certificatesMs: pushed.certificatesMs,
    routesMs: pushed.routesMs,
    hosts: scoped.hosts.length,
    services: scoped.http.length,
    streams: (scoped.streams ?? []).length,
    peers: nodeIds.length,
  });
}

/**
 * The peers of `nodeIds` set or removed alone, one WireGuard change at a time with a full run's sync, which then keeps
 * them as this run made them (ScopedLedger). When nothing was synced since the interface was made (the boot, a drift
 * repair) and the full run in flight has yet to sync, that sync makes them as this run read them: it waits for it.
 * null: neither, nothing was changed.
 */
async function patchPeers(
  { wireguard }: ReconcilerDeps,
  ledger: ScopedLedger,
  { ticket, peers, nodeIds }: { ticket: number; peers: readonly DesiredPeer[]; nodeIds: readonly number[] },
): Promise<ReadonlyMap<number, string> | null> {
  const patch = await ledger.exclusiveTunnel(async () => {
    const patched = await wireguard.patchPeers(peers, nodeIds);
    const synced = patched === null ? ledger.pendingPeerSync(ticket) : null;
    if (patched !== null || synced !== null) ledger.recordPeers(ticket, peers, nodeIds);
    // Wrapped: the sync is awaited after this turn, which the full run's sync comes after.
    return { patched, synced };
  });
  if (patch.patched !== null) return patch.patched;
  if (patch.synced === null) return null;
  const ids = new Set(nodeIds);
  return new Map([...(await patch.synced)].filter(([nodeId]) => ids.has(nodeId)));
}

/**
 * The instances of the scope's TCP/UDP keys, each started, replaced or stopped alone (no other instance is looked
 * at); the certificates their TLS serves first.
 */
async function pushStreams(
  { proxy }: ReconcilerDeps,
  { certificates, ledger }: ScopedParts,
  { ticket, scoped, plan, rejected }: { ticket: number; scoped: ScopedState; plan: ScopedPlan; rejected: Rejections },
): Promise<void> {
  const keys = scoped.streams ?? [];
  await certificates.ensureChanged(scoped.streamDomains ?? []);
  const failures = await proxy.patchStreams(plan.streams.wanted, keys);
  ledger.recordStreams(ticket, plan.streams.wanted, keys, failures);
  for (const [key, message] of failures) {
    const serviceId = plan.streams.serviceOf.get(key);
    if (serviceId !== undefined) rejected.tcp.set(serviceId, message);
  }
}

/** How long a push's certificate step and its routes (access and the routes' patch) took. */
interface Pushed {
  certificatesMs: number;
  routesMs: number;
}

interface Loaded {
  ticket: number;
  scoped: ScopedState;
  plan: ScopedPlan;
  touched: Set<number>;
}

/**
 * Certificates, access, routes and the cut-off of a scope, one push at a time with the full runs'. null: nginx would
 * not take it alone.
 */
async function push(
  { proxy }: ReconcilerDeps,
  { certificates, cutOff, ledger }: ScopedParts,
  { ticket, scoped, plan, touched }: Loaded,
): Promise<Pushed | null> {
  const before = Date.now();
  await certificates.ensureChanged(scoped.domains);
  const certificatesAt = Date.now();
  await proxy.syncAccess(plan.access);
  const names = scoped.domains.map((d) => d.domain);
  if (!(await proxy.patchRoutes(plan.routes.hosts, scoped.hosts, names))) return null;
  const routesMs = Date.now() - certificatesAt;
  ledger.record(ticket, plan, scoped.hosts, touched, names);
  await cutOff.cutScoped(plan.routes.revisions, touched);
  // A host of the scope that is no longer a domain (deleted, renamed away): its certificate goes, as the full run's
  // prune would take it (only one this reconciler ensured).
  const domains = new Set(names);
  await certificates.removeGone(scoped.hosts.filter((host) => host !== '' && !domains.has(host)));
  return { certificatesMs: certificatesAt - before, routesMs };
}

function converged(
  { logger }: ReconcilerDeps,
  rejected: Rejections,
  spoken: { scopedHttp: Set<number>; scopedTcp: Set<number>; scopedNodes: Set<number> },
  figures: Record<string, number>,
): ApplyResult {
  logRejections(logger, rejected);
  logger.debug(figures, 'data plane converged (scoped)');
  return { ok: true, rejected, ...spoken };
}
