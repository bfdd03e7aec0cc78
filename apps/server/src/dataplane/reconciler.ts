import {
  NginxRejectedError,
  type ApplyResult, type CertificateAdapter, type ConfigFiles, type DataPlaneLogger, type DesiredState, type NginxAdapter,
  type WireGuardAdapter,
} from './types.js';

// Level-triggered: every run reads the whole desired state from the DB and makes the host match it, so a run is
// idempotent and a missed or crashed run is repaired by the next one (or by the boot run).

export interface ReconcilerDeps {
  loadDesiredState: () => DesiredState;
  renderNginx: (state: DesiredState) => ConfigFiles;
  wireguard: WireGuardAdapter;
  nginx: NginxAdapter;
  certs: CertificateAdapter;
  logger: DataPlaneLogger;
}

export interface Reconciler {
  /** Converge now; callers arriving while a run is in flight share the next run. */
  apply(): Promise<ApplyResult>;
  /** First convergence after boot: rebuilds interface, peers and nginx from the DB. */
  runAtBoot(): Promise<ApplyResult>;
}

function sameFiles(a: ConfigFiles | null, b: ConfigFiles): boolean {
  if (a === null) return false;
  const keys = Object.keys(b);
  return keys.length === Object.keys(a).length && keys.every((key) => a[key] === b[key]);
}

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const { logger } = deps;
  let lastApplied: ConfigFiles | null = null;
  let generation = 0;
  let servedDomains = new Set<string>();
  /** Domains whose certificate was ensured, with the mode it was ensured for. */
  const ensuredDomains = new Map<string, DesiredState['domains'][number]['ssl']>();
  let inFlight: Promise<ApplyResult> | null = null;
  let queued: Promise<ApplyResult> | null = null;

  function describe(err: unknown): string {
    return err instanceof Error ? err.message : String(err);
  }

  async function applyNginx(state: DesiredState): Promise<void> {
    // Certificates before nginx: the new config may name a certificate file that must exist. Only domains that are
    // new or changed mode: at 10,000 domains, ensuring every one on every apply cost more than nginx itself.
    // Renewals and retries are the certificate manager's own timers.
    for (const domain of state.domains) {
      if (ensuredDomains.get(domain.domain) === domain.ssl) continue;
      await deps.certs.ensure(domain);
      ensuredDomains.set(domain.domain, domain.ssl);
    }
    const files = deps.renderNginx(state);
    if (!sameFiles(lastApplied, files)) {
      ({ generation } = await deps.nginx.apply(files));
      lastApplied = files;
    }
    // Only after nginx stopped naming them: certificates of deleted domains.
    const current = new Set(state.domains.map((d) => d.domain));
    if (deps.certs.pruneExcept) await deps.certs.pruneExcept([...current]);
    else for (const gone of [...servedDomains].filter((name) => !current.has(name))) await deps.certs.remove(gone);
    for (const name of ensuredDomains.keys()) if (!current.has(name)) ensuredDomains.delete(name);
    servedDomains = current;
  }

  async function applyWireGuard(state: DesiredState): Promise<void> {
    await deps.wireguard.ensureInterface(state.gateway);
    await deps.wireguard.syncPeers(state.peers);
  }

  /** WireGuard and nginx converge independently: a broken tunnel must not keep the console's route from nginx. */
  async function runOnce(): Promise<ApplyResult> {
    const started = Date.now();
    let state: DesiredState;
    try {
      state = deps.loadDesiredState();
    } catch (err) {
      logger.error({ err }, 'data plane: cannot read the desired state');
      return { ok: false, message: describe(err) };
    }
    const failures: string[] = [];
    const loadedAt = Date.now();
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
      timed(applyNginx(state).catch((err: unknown) => {
        if (err instanceof NginxRejectedError) logger.warn({ message: err.message }, 'nginx rejected the new configuration; the previous one keeps serving');
        else logger.error({ err }, 'data plane: nginx apply failed');
        failures.push(describe(err));
      })),
    ]);
    if (failures.length > 0) return { ok: false, message: failures.join('\n') };
    logger.debug({ generation, ms: Date.now() - started, loadMs: loadedAt - started, wireguardMs, nginxMs }, 'data plane converged');
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

  return { apply, runAtBoot };
}
