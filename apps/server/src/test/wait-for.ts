// Waiting on a condition with a deadline instead of sleeping: the test moves on as soon as the system is
// ready, and a timeout says what it was waiting for. The one copy for the server's tests, e2e/ and bench/.

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** What is being waited for, shown when the deadline passes. */
  what: string;
}

/** Polls `check` until it returns a value other than undefined/false/null; a throw counts as "not yet". */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  options: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastProblem = 'the condition never held';
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (error) {
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() >= deadline)
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what} (${lastProblem})`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}

/** Milliseconds since `start` (from performance.now()). */
export function elapsedSince(start: number): number {
  return Math.round(performance.now() - start);
}
