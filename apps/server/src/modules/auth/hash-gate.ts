// A global cap on password hashing. Each argon2id check takes ~20 MiB and tens of milliseconds of a core; without
// a cap, 600 sign-ins from 600 addresses (each within its own limit) all hash at once and the real operator waits
// seconds. At most `concurrency` run; up to `queueLimit` more wait their turn in arrival order; beyond that the
// caller is refused at once (HashGateBusyError), which costs nothing.

export class HashGateBusyError extends Error {
  override name = 'HashGateBusyError';
}

export interface HashGate {
  /** Runs `work` once a slot is free; throws HashGateBusyError when the queue is full. */
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function createHashGate(concurrency: number, queueLimit: number): HashGate {
  let running = 0;
  const waiting: (() => void)[] = [];

  const release = (): void => {
    const next = waiting.shift();
    // The slot passes straight to the next waiter, so `running` never drops and a newcomer cannot jump the queue.
    if (next) next();
    else running--;
  };

  return {
    async run(work) {
      if (running < concurrency) running++;
      else if (waiting.length < queueLimit) await new Promise<void>((resolve) => waiting.push(resolve));
      else throw new HashGateBusyError('too many password checks waiting');
      try {
        return await work();
      } finally {
        release();
      }
    },
  };
}
