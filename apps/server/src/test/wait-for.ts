// Waiting on a condition with a deadline instead of sleeping: the test moves on as soon as the system is
// ready, and a timeout says what it was waiting for. The one copy for the server's tests, e2e/ and bench/, on the
// one polling loop (lib/wait.ts).

import { waitUntil } from '../lib/wait.js';

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
  // Filled by the check (a closure, which the compiler's narrowing does not follow).
  const seen: { value?: T; problem: string } = { problem: 'the condition never held' };
  const holds = async (): Promise<boolean> => {
    try {
      const value = await check();
      if (value === undefined || value === null || value === false) return false;
      seen.value = value;
      return true;
    } catch (error) {
      seen.problem = error instanceof Error ? error.message : String(error);
      return false;
    }
  };
  if (!(await waitUntil(holds, options.timeoutMs, options.intervalMs ?? 100)))
    throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what} (${seen.problem})`);
  return seen.value as T;
}

/** Milliseconds since `start` (from performance.now()). */
export function elapsedSince(start: number): number {
  return Math.round(performance.now() - start);
}
