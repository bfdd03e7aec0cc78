import { loadavg } from 'node:os';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

// The scaffolding of the in-process benches that time work phase by phase (boot-phases.ts, stall.ts,
// sweep-stall.ts): the rounds, the GC's and the event loop's watch, the load average line.

export type Phase = readonly [label: string, work: () => Promise<unknown>];

/**
 * Runs every phase once per round, in order, `rounds` times (so a slow moment of the machine spreads over all of
 * them), with a full GC first when the process has one to call (`node --expose-gc`). Each phase's measurements in
 * round order.
 */
export async function measurePhases<M>(
  phases: readonly Phase[],
  rounds: number,
  measure: (work: () => Promise<unknown>) => Promise<M>,
): Promise<Map<string, M[]>> {
  const results = new Map<string, M[]>();
  for (let round = 0; round < rounds; round++)
    for (const [label, work] of phases) {
      global.gc?.();
      const list = results.get(label) ?? [];
      list.push(await measure(work));
      results.set(label, list);
    }
  return results;
}

export interface GcWatch {
  /** Ends the watch: the longest collection and the sum of all, ms. */
  stop(): Promise<{ longestMs: number; totalMs: number }>;
}

/** Watches the garbage collector from now on. */
export function watchGc(): GcWatch {
  let longestMs = 0;
  let totalMs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      longestMs = Math.max(longestMs, entry.duration);
      totalMs += entry.duration;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop() {
      // The entries of the last collection arrive on a later turn.
      await new Promise((resolve) => setImmediate(resolve));
      observer.disconnect();
      return { longestMs, totalMs };
    },
  };
}

export interface LoopWatch {
  /** Ends the watch: the longest event-loop block seen, ms. */
  stop(): number;
}

/** Watches the event loop's delay at 1 ms resolution from now on (its timer first runs on the next turn). */
export function watchEventLoop(): LoopWatch {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  return {
    stop() {
      histogram.disable();
      return histogram.max / 1e6;
    },
  };
}

/** The 1, 5 and 15 minute load averages, for the line every bench prints beside its figures. */
export const loadAverage = (): string =>
  loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
