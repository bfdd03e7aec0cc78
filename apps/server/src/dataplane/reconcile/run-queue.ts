import type { ApplyResult, ApplyScope } from '../types.js';

type Waiter = { resolve: (result: ApplyResult) => void; reject: (err: unknown) => void };

/** The runs the queue starts: a scoped one (null: it cannot go alone) and a full one. */
export interface Runs {
  /** `besideFull`: a full run is in flight (ScopedLedger keeps their pushes apart). */
  scoped(scope: ApplyScope, besideFull: boolean): Promise<ApplyResult | null>;
  full(): Promise<ApplyResult>;
}

/**
 * One full run at a time and one scoped run at a time. What arrives during a run waits for the next one and is
 * merged: scopes into one scope (the union of their hosts and services), full requests into one full run. A queued
 * scoped run goes first (a change is not held up by a queued whole reconcile), then the queued full run (before the
 * next scoped one, so a burst never starves it); while a full run is in flight, scoped runs go beside it (a change is
 * not held up by a whole reconcile in flight either, the boot's included); each run sees every change committed
 * before its callers' calls.
 */
export class RunQueue {
  private running = false;
  private fullInFlight = false;
  /** The scoped runs going beside the full run in flight. */
  private beside: Promise<void> | null = null;
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
      else this.goBeside();
    });
  }

  /** Starts scoped runs beside the full run in flight, one at a time, while it is in flight. */
  private goBeside(): void {
    if (this.beside !== null || !this.fullInFlight || this.queuedScope === null) return;
    this.beside = (async () => {
      while (this.fullInFlight && this.queuedScope !== null) {
        const { hosts, http, waiters } = this.queuedScope;
        this.queuedScope = null;
        const outcome = await outcomeOf(() => this.runs.scoped({ hosts: [...hosts], http: [...http] }, true));
        // One that cannot go alone is served by the next full run.
        if ('result' in outcome && outcome.result === null) (this.queuedFull ??= []).push(...waiters);
        else settle(waiters, 'err' in outcome ? outcome : { result: outcome.result as ApplyResult });
      }
      this.beside = null;
    })();
  }

  private async drain(): Promise<void> {
    this.running = true;
    let wasScoped = false;
    try {
      for (;;) {
        // What went beside the last full run finishes first (it may hand its waiters to the next full run).
        if (this.beside !== null) await this.beside;
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
        this.fullInFlight = true;
        const run = outcomeOf(() => this.runs.full());
        this.goBeside();
        const outcome = await run;
        this.fullInFlight = false;
        settle(full, outcome);
      }
    } finally {
      this.running = false;
    }
  }

  /** A scoped run; one that cannot go alone is served by a full run, which the queued full requests share. */
  private async runScope(hosts: Set<string>, http: Set<number>): Promise<Outcome> {
    const scoped = await outcomeOf(() => this.runs.scoped({ hosts: [...hosts], http: [...http] }, false));
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
