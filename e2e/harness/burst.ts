import type { HttpServiceCreate } from '@postern/contract';
import type { ApiClient } from './api.js';
import type { ManagedProcess } from './processes.js';

// A burst of changes through the API (issue 29: an import, label discovery starting, a script creating services):
// `count` HTTP services created by `clients` callers at once, each sending its next as soon as the last is answered,
// then every one of them checked served. Shared by e2e/system/burst.test.ts (all served, pushes coalesced) and
// bench/apply.ts BENCH_BURST (the sustained rate).

export interface BurstResult {
  /** The services' domains, in the order they were sent. */
  domains: string[];
  /** From the first call sent to the last answer. */
  apiMs: number;
  /** From the first call sent until every service was served. */
  servedMs: number;
  /** Calls that were not answered with the created service (each with its reason). */
  failures: string[];
}

/** Runs `work(0..count-1)`, `parallel` at a time, each worker taking the next index as soon as it is free. */
export async function inParallel(
  count: number,
  parallel: number,
  work: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
}

/**
 * Creates `count` services (`bodyOf(i)` names service i and its domain), `clients` at once, then waits until
 * `isServed(domain)` holds for every one (each polled until it does or `deadlineMs` from the start has passed).
 */
export async function createBurst(
  api: ApiClient,
  options: {
    count: number;
    clients: number;
    nodeId: number;
    bodyOf: (index: number) => HttpServiceCreate & { domain: string };
    isServed: (domain: string) => Promise<boolean>;
    deadlineMs: number;
  },
): Promise<BurstResult & { unserved: string[] }> {
  const { count, clients, nodeId, bodyOf, isServed, deadlineMs } = options;
  const domains = Array.from({ length: count }, (_, i) => bodyOf(i).domain);
  const failures: string[] = [];
  const start = performance.now();
  await inParallel(count, clients, async (i) => {
    await api.createHttpService(nodeId, bodyOf(i)).catch((err: unknown) => {
      failures.push(`${domains[i] ?? i}: ${err instanceof Error ? err.message : String(err)}`);
    });
  });
  const apiMs = performance.now() - start;
  // Checked in parallel too: a probe waits on nginx, not on this process.
  const unserved: string[] = [];
  await inParallel(count, clients, async (i) => {
    const domain = domains[i] as string;
    for (;;) {
      if (await isServed(domain)) return;
      if (performance.now() - start > deadlineMs) {
        unserved.push(domain);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  return { domains, apiMs, servedMs: performance.now() - start, failures, unserved };
}

/** The data-plane runs a gateway's debug log reports (each scoped run pushes once; a full run pushes everything). */
export function countRuns(logText: string): { scoped: number; full: number } {
  let scoped = 0;
  let full = 0;
  for (const line of logText.split('\n')) {
    if (!line.includes('"msg":"data plane converged')) continue;
    if (line.includes('"msg":"data plane converged (scoped)"')) scoped++;
    else full++;
  }
  return { scoped, full };
}

/** What the runs a gateway logged took: each scoped run's figures (scoped-run.ts `converged`), by name. */
export interface RunsSeen {
  scoped: number;
  full: number;
  /** Each scoped run's `ms`, `loadMs`, `certificatesMs`, `routesMs`, `services`... as logged, in order. */
  scopedFigures: Record<string, number>[];
}

/**
 * Counts the runs a process's debug log reports from now on (countRuns over every line it writes: a burst's log
 * outgrows the 256 KiB the harness keeps of it), keeping the scoped runs' figures. The function returned
 * unsubscribes and returns them.
 */
export function watchRuns(process: Pick<ManagedProcess, 'onOutput'>): () => RunsSeen {
  const seen: RunsSeen = { scoped: 0, full: 0, scopedFigures: [] };
  const partial = { stdout: '', stderr: '' };
  const stop = process.onOutput((chunk, stream) => {
    const text = partial[stream] + chunk;
    const end = text.lastIndexOf('\n');
    partial[stream] = text.slice(end + 1);
    const lines = text.slice(0, end + 1);
    const runs = countRuns(lines);
    seen.scoped += runs.scoped;
    seen.full += runs.full;
    for (const line of lines.split('\n'))
      if (line.includes('"msg":"data plane converged (scoped)"')) seen.scopedFigures.push(figuresOf(line));
  });
  return () => {
    stop();
    return seen;
  };
}

/** The numbers of a JSON log line. */
function figuresOf(line: string): Record<string, number> {
  try {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(parsed).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
    );
  } catch {
    return {};
  }
}
