import type { ProxyAdapter } from '../reconciler.js';

function sameRevisions(a: ReadonlyMap<number, string> | null, b: ReadonlyMap<number, string>): boolean {
  if (a === null || a.size !== b.size) return false;
  for (const [id, revision] of b) if (a.get(id) !== revision) return false;
  return true;
}

/** Cuts stale HTTP connections only when what nginx serves changed since the last cut. */
export interface CutOff {
  /** `revisions`: what each HTTP service is now served as (from the plan). */
  cutIfChanged(revisions: ReadonlyMap<number, string>): Promise<void>;
  /** The next apply cuts again (nothing is known about what nginx was told). */
  forget(): void;
}

export function createCutOff(proxy: Pick<ProxyAdapter, 'cutStale'>): CutOff {
  /** Revisions of what nginx was last told to serve: a change means some connections may need cutting. */
  let pushed: ReadonlyMap<number, string> | null = null;
  return {
    async cutIfChanged(revisions) {
      if (sameRevisions(pushed, revisions)) return;
      await proxy.cutStale(revisions);
      pushed = revisions;
    },
    forget() {
      pushed = null;
    },
  };
}
