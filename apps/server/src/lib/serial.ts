// "One run at a time", written once, in its two forms: a coalescer (one run in flight, one queued, for work that must
// see every change made before the call: applying config, a renewal pass, reloading health targets) and a single
// flight (callers share the run in flight, nothing queued, for timer ticks and drains that pick up later changes
// themselves). The data plane, the cluster jobs and the observers each had their own copies. The certificate
// manager's ordered line of work with its own gate is `dataplane/certs/work-queue.ts`.

/**
 * Coalesces calls of `run`: one run in flight, at most one queued. A call while a run is in flight is served by the
 * queued run, which starts after the current one and so sees everything that happened before the call (e.g. a
 * committed database change); every caller arriving meanwhile shares that one queued run.
 */
export function createCoalescer<T>(run: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | null = null;
  let queued: Promise<T> | null = null;
  const start = (): Promise<T> => {
    const current = run().finally(() => {
      if (inFlight === current) inFlight = null;
    });
    inFlight = current;
    return current;
  };
  return () => {
    if (!inFlight) return start();
    queued ??= inFlight
      .catch(() => undefined)
      .then(() => {
        queued = null;
        return start();
      });
    return queued;
  };
}

/**
 * Shares the run of `run` in flight: a call while one runs gets that run's promise, a call after it settled starts
 * a new one. For a timer tick that must not stack up behind a slow disk or `wg`, and for a drain that loops until
 * nothing is left (what arrives during the run is its own).
 */
export function createSingleFlight<T>(run: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | null = null;
  return () => {
    if (inFlight) return inFlight;
    const current = run().finally(() => {
      if (inFlight === current) inFlight = null;
    });
    inFlight = current;
    return current;
  };
}
