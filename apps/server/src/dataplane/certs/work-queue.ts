export interface WorkHandlers {
  onError: (err: unknown) => void;
  onSettled?: () => void;
}

/**
 * The manager's one line of work: issuances and self-signed renewals run one at a time, in order, so a renewal
 * never overwrites a just-issued PEM and the CA is asked about one domain at a time. Nothing runs before open():
 * a CA asked before nginx answers its challenges would fail them.
 */
export interface WorkQueue {
  open(): void;
  /**
   * Queues `work` behind everything queued before it. A key already queued or running shares that run. `onError`
   * only keeps one unexpected throw from stopping the line; `onSettled` runs after the work, whatever its outcome.
   */
  add(key: string, work: () => Promise<void>, handlers: WorkHandlers): Promise<void>;
  /** Resolves once everything queued so far has run. */
  drained(): Promise<void>;
}

export function createWorkQueue(): WorkQueue {
  let open = (): void => undefined;
  let chain = new Promise<void>((resolve) => {
    open = resolve;
  });
  const pending = new Map<string, Promise<void>>();

  return {
    open: () => open(),
    add(key, work, { onError, onSettled }) {
      const existing = pending.get(key);
      if (existing) return existing;
      const run = chain
        .then(work)
        .catch(onError)
        .finally(() => {
          pending.delete(key);
          onSettled?.();
        });
      pending.set(key, run);
      chain = run;
      return run;
    },
    drained: () => chain,
  };
}
