// Imported, not the global: a test's fake timers replace the global setImmediate, and the queue must keep running.
import { setImmediate } from 'node:timers';
import type { ApplyResult, ApplyScope } from '../types.js';

type Waiter = { resolve: (result: ApplyResult) => void; reject: (err: unknown) => void };
/** Scopes merged: HTTP hosts and services, TCP/UDP instance keys and services. */
type Scope = { hosts: Set<string>; http: Set<number>; streams: Set<string>; tcp: Set<number>; nodes: Set<number> };

const emptyScope = (): Scope => ({
  hosts: new Set(),
  http: new Set(),
  streams: new Set(),
  tcp: new Set(),
  nodes: new Set(),
});

/** `into` with `scope` merged in. */
function mergeInto(into: Scope, scope: ApplyScope | Scope): void {
  for (const host of scope.hosts) into.hosts.add(host);
  for (const id of scope.http) into.http.add(id);
  for (const key of scope.streams ?? []) into.streams.add(key);
  for (const id of scope.tcp ?? []) into.tcp.add(id);
  for (const id of scope.nodes ?? []) into.nodes.add(id);
}

/** The one scope of merged ones (TCP/UDP parts and nodes only when some scope had them). */
function scopeOf({ hosts, http, streams, tcp, nodes }: Scope): ApplyScope {
  return {
    hosts: [...hosts],
    http: [...http],
    ...(streams.size > 0 || tcp.size > 0 ? { streams: [...streams], tcp: [...tcp] } : {}),
    ...(nodes.size > 0 ? { nodes: [...nodes] } : {}),
  };
}

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
 *
 * A scoped run starts one turn of the event loop after it was asked for, so the changes committed in the same turn
 * (a burst of requests read from their sockets together) share it: on SQLite a run awaits no I/O of the database, so
 * without that turn each change would run alone. A scoped run that fails (whole, or midway through its pushes) leaves
 * its scope owed: the next scoped run takes it along, and a full run that starts after the failure settles it (a
 * failed full run leaves it owed). An owed scope starts no run by itself: the supervisor retries a failed apply.
 */
export class RunQueue {
  private running = false;
  private fullInFlight = false;
  /** The scoped runs going beside the full run in flight. */
  private beside: Promise<void> | null = null;
  private queuedFull: Waiter[] | null = null;
  private queuedScope: (Scope & { waiters: Waiter[] }) | null = null;
  /** What failed scoped runs did not serve: merged into the next run (see above). */
  private owed: Scope | null = null;

  constructor(private readonly runs: Runs) {}

  apply(scope?: ApplyScope): Promise<ApplyResult> {
    return new Promise<ApplyResult>((resolve, reject) => {
      const waiter = { resolve, reject };
      if (scope === undefined) (this.queuedFull ??= []).push(waiter);
      else {
        this.queuedScope ??= { ...emptyScope(), waiters: [] };
        mergeInto(this.queuedScope, scope);
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
        const { waiters, ...queued } = this.queuedScope;
        this.queuedScope = null;
        const scope = this.withOwed(queued);
        const outcome = await outcomeOf(() => this.runs.scoped(scopeOf(scope), true));
        // One that cannot go alone is served by the next full run (which settles what is owed).
        if ('result' in outcome && outcome.result === null) (this.queuedFull ??= []).push(...waiters);
        else {
          const settled: Outcome = 'err' in outcome ? outcome : { result: outcome.result as ApplyResult };
          if (failed(settled)) this.owe(scope);
          settle(waiters, settled);
        }
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
        // The changes committed in this turn join the scoped run about to start (see above).
        if (this.queuedScope !== null) await nextTurn();
        const scope = this.queuedScope;
        const full = this.queuedFull;
        // A queued full run goes after at most one scoped run: a burst of changes never starves it.
        if (scope !== null && !(wasScoped && full !== null)) {
          wasScoped = true;
          this.queuedScope = null;
          settle(scope.waiters, await this.runScope(this.withOwed(scope)));
          continue;
        }
        if (full === null) return;
        wasScoped = false;
        this.queuedFull = null;
        this.fullInFlight = true;
        const run = this.runFull();
        this.goBeside();
        const outcome = await run;
        this.fullInFlight = false;
        settle(full, outcome);
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * A scoped run; one that cannot go alone is served by a full run, which the queued full requests share. A failed
   * one leaves its scope owed.
   */
  private async runScope(scope: Scope): Promise<Outcome> {
    const scoped = await outcomeOf(() => this.runs.scoped(scopeOf(scope), false));
    if ('result' in scoped && scoped.result === null) {
      // Served by a full run: the queued one goes now, for both.
      const alongside = this.queuedFull ?? [];
      this.queuedFull = null;
      this.owe(scope);
      const full = await this.runFull();
      settle(alongside, full);
      return full;
    }
    const outcome: Outcome = 'err' in scoped ? scoped : { result: scoped.result as ApplyResult };
    if (failed(outcome)) this.owe(scope);
    return outcome;
  }

  /** A full run: it settles what failed scoped runs owed before it started, unless it fails too. */
  private async runFull(): Promise<Outcome> {
    const owed = this.owed;
    this.owed = null;
    const outcome = await outcomeOf(() => this.runs.full());
    if (owed !== null && failed(outcome)) this.owe(owed);
    return outcome;
  }

  private owe(scope: Scope): void {
    this.owed ??= emptyScope();
    mergeInto(this.owed, scope);
  }

  /** `scope` with what is owed merged in (no longer owed: the run that takes it owes it again if it fails). */
  private withOwed(scope: Scope): Scope {
    const owed = this.owed;
    if (owed === null) return scope;
    this.owed = null;
    const merged = emptyScope();
    mergeInto(merged, owed);
    mergeInto(merged, scope);
    return merged;
  }
}

/** A run that did not converge: thrown, or failed as a whole (nginx or the tunnel down, the database unreadable). */
const failed = (outcome: Outcome): boolean => 'err' in outcome || !outcome.result.ok;

/** Resolves after the event loop's current turn: what its I/O callbacks queue meanwhile is there to be merged. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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
