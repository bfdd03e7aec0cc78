import type { ProxyAdapter } from '../reconciler.js';

function sameRevisions(a: ReadonlyMap<number, string> | null, b: ReadonlyMap<number, string>): boolean {
  if (a === null || a.size !== b.size) return false;
  for (const [id, revision] of b) if (a.get(id) !== revision) return false;
  return true;
}

/**
 * Cuts stale HTTP connections only when what nginx serves changed since the last cut. Every push is followed by its
 * cut in the same turn to push (ScopedLedger.exclusive), with the revisions nginx serves after it.
 */
export interface CutOff {
  /** A full run: `revisions` is what each HTTP service is now served as (from the plan). */
  cutIfChanged(revisions: ReadonlyMap<number, string>): Promise<void>;
  /**
   * A scoped run: `revisions` of the scope's services (`only`) as now served. Looks at the live requests only when
   * one of them was served before and is now served otherwise or not at all: a service nginx did not serve at the last
   * cut (a new one) or serves as it did has no request to cut, so a burst of creates asks nginx for none.
   */
  cutScoped(revisions: ReadonlyMap<number, string>, only: ReadonlySet<number>): Promise<void>;
  /** The next apply cuts again (nothing is known about what nginx was told). */
  forget(): void;
}

export function createCutOff(proxy: Pick<ProxyAdapter, 'cutStale'>): CutOff {
  /** Revisions of what the last full cut left served: the same again means no connection can need cutting. */
  let pushed: ReadonlyMap<number, string> | null = null;
  /**
   * What each service was served as when its connections were last looked at (a full cut, then the scoped cuts of
   * it): every service nginx serves is here, so one missing was not served. null: unknown (none yet, a failed cut,
   * forget), and every scoped run looks.
   */
  let served: Map<number, string> | null = null;
  /** Counts forget(): what a cut learnt is not kept when nginx was forgotten while it ran. */
  let forgotten = 0;
  return {
    async cutIfChanged(revisions) {
      if (sameRevisions(pushed, revisions)) return;
      served = null;
      const generation = forgotten;
      await proxy.cutStale(revisions);
      if (generation !== forgotten) return;
      pushed = revisions;
      served = new Map(revisions);
    },
    async cutScoped(revisions, only) {
      // The full run's memory no longer holds: its next run looks again.
      pushed = null;
      const known = served;
      const changed = (id: number): boolean => {
        const before = known?.get(id);
        return before !== undefined && before !== revisions.get(id);
      };
      if (known === null || [...only].some(changed)) {
        served = null;
        const generation = forgotten;
        await proxy.cutStale(revisions, only);
        if (generation !== forgotten) return;
        served = known;
      }
      if (served === null) return;
      for (const id of only) {
        const revision = revisions.get(id);
        if (revision === undefined) served.delete(id);
        else served.set(id, revision);
      }
    },
    forget() {
      forgotten++;
      pushed = null;
      served = null;
    },
  };
}
