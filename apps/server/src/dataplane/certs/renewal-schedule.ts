import { createCoalescer } from '../../lib/serial.js';
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

  function rearm(): void {
    if (!isRunning) return;
    if (timer) clearTimeout(timer);
    let wakeAt = now() + options.checkIntervalMs;
    for (const name of known.keys()) {
      const record = store.get(name);
      if (record?.state === 'failed' && record.nextAttemptAt !== null) {
        wakeAt = Math.min(wakeAt, Date.parse(record.nextAttemptAt));
      }
    }
    timer = setTimeout(checkNow, Math.min(Math.max(wakeAt - now(), MIN_TIMER_MS), MAX_TIMER_MS));
    timer.unref();
  }

  /** At most one pass runs and one waits: start(), the timer and checkRenewals() may overlap on a slow disk. */
  const coalescedPass = createCoalescer(() =>
    options.runPass().catch((err: unknown) => logger.error({ err }, 'certificate: self-signed renewal check crashed')),
  );
  function requestPass(): void {
    pass = coalescedPass();
  }

  function checkNow(): void {
    if (options.isHolder?.() === false) {
      rearm();
      return;
    }
    for (const [name, desired] of known) {
      const record = store.get(name);
      if (desired.ssl === 'certbot' && record !== null) options.issuance.issueIfDue(name, record);
    }
    requestPass();
    rearm();
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
