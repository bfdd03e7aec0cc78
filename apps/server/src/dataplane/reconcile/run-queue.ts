import type { ApplyResult, ApplyScope } from '../types.js';

type Waiter = { resolve: (result: ApplyResult) => void; reject: (err: unknown) => void };

/** The runs the queue starts: a scoped one (null: it cannot go alone) and a full one. */
export interface Runs {
  scoped(scope: ApplyScope): Promise<ApplyResult | null>;
  full(): Promise<ApplyResult>;
}

/**
 * One run at a time. What arrives during a run waits for the next one and is merged: scopes into one scope (the
 * union of their hosts and services), full requests into one full run. A queued scoped run goes first (a change is
 * not held up by a queued whole reconcile), then the queued full run (before the next scoped one, so a burst never
 * starves it); each run sees every change committed before its callers' calls.
 */
export class RunQueue {
  private running = false;
  private queuedFull: Waiter[] | null = null;
  private queuedScope: { hosts: Set<string>; http: Set<number>; waiters: Waiter[] } | null = null;

  constructor(private readonly runs: Runs) {}

  apply(scope?: ApplyScope): Promise<ApplyResult> {
    return new Promise<ApplyResult>((resolve, reject) => {
      const waiter = { resolve, reject };
      if (scope === undefined) (this.queuedFull ??= []).push(waiter);
      else {
        this.queuedScope ??= { hosts: new Set(), http: new Set(), waiters: [] };
        for (const host of scope.hosts) this.queuedScope.hosts.add(host);
        for (const id of scope.http) this.queuedScope.http.add(id);
        this.queuedScope.waiters.push(waiter);
      }
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    let wasScoped = false;
    try {
      for (;;) {
        const scope = this.queuedScope;
        const full = this.queuedFull;
        // A queued full run goes after at most one scoped run: a burst of changes never starves it.
        if (scope !== null && !(wasScoped && full !== null)) {
          wasScoped = true;
          this.queuedScope = null;
          settle(scope.waiters, await this.runScope(scope.hosts, scope.http));
          continue;
        }
        if (full === null) return;
        wasScoped = false;
        this.queuedFull = null;
        settle(full, await outcomeOf(() => this.runs.full()));
      }
    } finally {
      this.running = false;
    }
  }

  /** A scoped run; one that cannot go alone is served by a full run, which the queued full requests share. */
  private async runScope(hosts: Set<string>, http: Set<number>): Promise<Outcome> {
    const scoped = await outcomeOf(() => this.runs.scoped({ hosts: [...hosts], http: [...http] }));
    if ('err' in scoped) return scoped;
    if (scoped.result !== null) return { result: scoped.result };
    // Served by a full run: the queued one goes now, for both.
    const alongside = this.queuedFull ?? [];
    this.queuedFull = null;
    const full = await outcomeOf(() => this.runs.full());
    settle(alongside, full);
    return full;
  }
}

type Outcome = { result: ApplyResult } | { err: unknown };

/** A run's result or error, never thrown. */
async function outcomeOf<T>(run: () => Promise<T>): Promise<{ result: T } | { err: unknown }> {
  try {
    return { result: await run() };
  } catch (err) {
    return { err };
  }
}

/**
 * Resolves (or rejects) every waiter with a run's outcome. Synchronous: the queue looks at what is queued right after,
 * before any waiter's continuation runs (a caller awaiting its run and applying again joins the next run).
 */
function settle(waiters: readonly Waiter[], outcome: Outcome): void {
  for (const waiter of waiters)
    if ('result' in outcome) waiter.resolve(outcome.result);
    else waiter.reject(outcome.err);
}
