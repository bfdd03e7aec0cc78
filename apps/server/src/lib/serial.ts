// Two shapes of "one at a time" the control plane needs, written once (the data plane's nginx drivers, reconciler and
// certificate queue had each their own copy).

/** A task runner for `serial(task)`. */
export type SerialQueue = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * Runs tasks one after another in call order. Each caller gets its own task's result or error; a failed task does not
 * stop the ones queued behind it.
 */
export function createSerialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task);
    tail = run.catch(() => undefined);
    return run;
  };
}

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
