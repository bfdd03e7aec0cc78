// "One run in flight, at most one queued", written once (the data plane's drivers and reconciler had each their
// own copy). The certificate manager's ordered line of work with its own gate is `dataplane/certs/work-queue.ts`.

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
