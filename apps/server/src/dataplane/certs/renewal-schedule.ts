import { createCoalescer } from '../../lib/serial.js';
import { forEachSliced } from '../sliced.js';
import type { DataPlaneLogger, DesiredDomain } from '../types.js';
import type { Issuance } from './issuance.js';
import type { CertificateStore } from './store.js';

// setTimeout cannot wait longer than ~24.8 days; renewals are checked far more often anyway.
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Never spin: a retry date in the past waits at least this long. */
const MIN_TIMER_MS = 1000;

/**
 * When the manager looks again: at the periodic check (daily by default) or at the earliest back-off of a failed
 * issuance, whichever comes first. A check queues every certbot issuance that is due and one self-signed pass.
 */
export interface RenewalSchedule {
  /** Runs a check now and keeps the timer armed until stop(). */
  start(): void;
  stop(): void;
  /** Re-arms the timer (a failure just set a retry date); nothing before start(). */
  rearm(): void;
  /** Runs the check now, as the timer does. */
  checkNow(): void;
  /** Resolves once the self-signed pass queued or running now has run. */
  passDone(): Promise<void>;
}

export function createRenewalSchedule(options: {
  checkIntervalMs: number;
  now: () => number;
  known: ReadonlyMap<string, DesiredDomain>;
  store: CertificateStore;
  issuance: Issuance;
  /** The self-signed pass (walks the PEMs on disk). */
  runPass: () => Promise<void>;
  logger: DataPlaneLogger;
  /** Several gateways: only the holder of the `certificates` lease renews (the others load what it stores). */
  isHolder?: (() => boolean) | undefined;
}): RenewalSchedule {
  const { known, store, now, logger } = options;
  let timer: NodeJS.Timeout | null = null;
  let isRunning = false;
  let pass: Promise<void> = Promise.resolve();
  /** The latest rearm: an earlier one still walking arms nothing. */
  let rearms = 0;

  /**
   * Each known domain, the event loop given back every PLAN_SLICE_ROWS: at 100,000 domains one walk held it ~100-300
   * ms (a check walks twice), right when the first changes after a boot come (bench/README.md).
   */
  const walk = (visit: (name: string, desired: DesiredDomain) => void): Promise<void> =>
    forEachSliced(known, ([name, desired]) => visit(name, desired));

  function rearm(): void {
    if (!isRunning) return;
    const generation = ++rearms;
    let wakeAt = now() + options.checkIntervalMs;
    const arm = (): void => {
      if (!isRunning || generation !== rearms) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(checkNow, Math.min(Math.max(wakeAt - now(), MIN_TIMER_MS), MAX_TIMER_MS));
      timer.unref();
    };
    walk((name) => {
      const record = store.get(name);
      if (record?.state === 'failed' && record.nextAttemptAt !== null)
        wakeAt = Math.min(wakeAt, Date.parse(record.nextAttemptAt));
    }).then(arm, (err: unknown) => {
      logger.error({ err }, "certificate: could not read the failed issuances' retry dates");
      arm();
    });
  }

  /** At most one pass runs and one waits: start(), the timer and checkRenewals() may overlap on a slow disk. */
  const coalescedPass = createCoalescer(() =>
    options.runPass().catch((err: unknown) => logger.error({ err }, 'certificate: self-signed renewal check crashed')),
  );

  /** The certbot domains' due issuances queued, then the self-signed pass; the timer armed again. */
  async function check(): Promise<void> {
    try {
      await walk((name, desired) => {
        const record = desired.ssl === 'certbot' ? store.get(name) : null;
        if (record !== null) options.issuance.issueIfDue(name, record);
      });
    } catch (err) {
      logger.error({ err }, 'certificate: the renewal check crashed');
    }
    const passing = coalescedPass();
    rearm();
    await passing;
  }

  function checkNow(): void {
    if (options.isHolder?.() === false) {
      rearm();
      return;
    }
    // passDone() covers the walk too: the pass it waits for is requested at the walk's end.
    pass = check();
  }

  return {
    start() {
      isRunning = true;
      checkNow();
    },
    stop() {
      isRunning = false;
      if (timer) clearTimeout(timer);
      timer = null;
    },
    rearm,
    checkNow,
    passDone: () => pass,
  };
}
