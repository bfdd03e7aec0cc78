// Debouncing and grouping of states that come and go (backends, nodes, gateways), as pure bookkeeping with the
// clock passed in (unit-tested with made-up times; notifier.ts feeds it and writes what it decides).
//
// - A thing is reported down once it has been seen down for the grace period without a break, and reported up again
//   (with how long it was down) once it has been seen up for the grace period: a backend that flaps within the grace
//   period gives no message, one that flaps around a long outage gives one "down" and one "up".
// - What was reported lives in the database (notification_alerts, mirrored here as `alerted`): a restart or another
//   gateway taking over neither repeats nor forgets a message.
// - Grouping: the transitions of one family (all backends, all nodes, all gateways) that are due go out together,
//   and only once every transition still waiting for its grace period is due too, or after one more grace period:
//   a node that dies takes its services down one health check after another, and they arrive in one message. (With
//   a grace period at least the health checks' interval plus timeout, every service of a dead node is seen down
//   before the first of them is due.)

export type Family = 'backend' | 'node' | 'gateway';
export type ObservedState = 'up' | 'down' | 'gone';

export interface Observation {
  /** `<family>:<id>`, e.g. `backend:http:12`, `node:3`, `gateway:2`. */
  key: string;
  family: Family;
  state: ObservedState;
  /** Since when (ms) this state holds. */
  sinceMs: number;
  /** A "down" that may be reported (false: e.g. a node that never connected). */
  isAlertable: boolean;
}

export interface Transition {
  key: string;
  family: Family;
  /** `clear`: the thing is gone (deleted, switched off): its alert is forgotten without a message. */
  to: 'down' | 'up' | 'clear';
  /** When the observed state began (down since, up since). */
  sinceMs: number;
}

export interface AlertTracker {
  observe(observation: Observation): void;
  /** The keys of `family` that are alerted now, as the database says (replaces what was known of the family). */
  setAlerted(family: Family, alerted: ReadonlyMap<string, number>): void;
  /** What was written: the key is now alerted (since ms) or not. */
  markAlerted(key: string, sinceMs: number | null): void;
  alertedSince(key: string): number | undefined;
  /** Keys observed of a family (to find alerted ones that are no longer observed). */
  observedKeys(family: Family): string[];
  /** The transitions to send now, by family (empty when nothing is due or a group is still gathering). */
  due(nowMs: number): Transition[];
  /** How many observations are kept (tests, metrics). */
  size(): number;
}

export function createAlertTracker(graceMs: () => number): AlertTracker {
  const observed = new Map<string, Observation>();
  const alerted = new Map<string, number>();
  /**
   * The observed keys not up: with the alerted ones, the only ones that can give a transition. `due()` runs every
   * second and reads only these, not every observation (100,000 backends up took 20-45 ms each time).
   */
  const notUp = new Set<string>();
  /** The order keys were first observed in: a family's transitions go out in it. */
  const firstSeen = new Map<string, number>();
  let seen = 0;

  function forgetKey(key: string): void {
    observed.delete(key);
    notUp.delete(key);
    firstSeen.delete(key);
  }

  /** The observations that may give a transition: not up, or alerted. */
  function interesting(): Observation[] {
    const out: Observation[] = [];
    for (const key of notUp) {
      const observation = observed.get(key);
      if (observation) out.push(observation);
    }
    for (const key of alerted.keys()) {
      const observation = notUp.has(key) ? undefined : observed.get(key);
      if (observation) out.push(observation);
    }
    return out.sort((a, b) => (firstSeen.get(a.key) ?? 0) - (firstSeen.get(b.key) ?? 0));
  }

  function candidates(
    observations: readonly Observation[],
    family: Family,
    nowMs: number,
  ): { transition: Transition; dueAt: number }[] {
    const grace = graceMs();
    const found: { transition: Transition; dueAt: number }[] = [];
    for (const observation of observations) {
      if (observation.family !== family) continue;
      const isAlerted = alerted.has(observation.key);
      const { key, sinceMs } = observation;
      if (observation.state === 'down' && observation.isAlertable && !isAlerted)
        found.push({ transition: { key, family, to: 'down', sinceMs }, dueAt: sinceMs + grace });
      else if (observation.state === 'up' && isAlerted)
        found.push({ transition: { key, family, to: 'up', sinceMs }, dueAt: sinceMs + grace });
      else if (observation.state === 'gone' && isAlerted)
        found.push({ transition: { key, family, to: 'clear', sinceMs }, dueAt: nowMs });
    }
    return found;
  }

  return {
    observe(observation) {
      const { key } = observation;
      const current = observed.get(key);
      if (observation.state === 'gone' && !alerted.has(key)) {
        forgetKey(key);
        return;
      }
      if (current === undefined) firstSeen.set(key, seen++);
      if (observation.state === 'up') notUp.delete(key);
      else notUp.add(key);
      // The same state again keeps its start: the grace period counts from the first sighting. Updated in place: a
      // sweep sees every backend again, and a new object for each (kept until the next sweep) was work for the
      // garbage collector's full collections (bench/README.md, sweep-stall.ts).
      if (current?.state === observation.state) current.isAlertable = observation.isAlertable;
      else observed.set(key, observation);
    },
    setAlerted(family, rows) {
      for (const key of [...alerted.keys()]) if (key.startsWith(`${family}:`) && !rows.has(key)) alerted.delete(key);
      for (const [key, since] of rows) alerted.set(key, since);
    },
    markAlerted(key, sinceMs) {
      if (sinceMs === null) {
        alerted.delete(key);
        if (observed.get(key)?.state === 'gone') forgetKey(key);
      } else alerted.set(key, sinceMs);
    },
    alertedSince: (key) => alerted.get(key),
    observedKeys: (family) => [...observed.values()].filter((o) => o.family === family).map((o) => o.key),
    due(nowMs) {
      const out: Transition[] = [];
      const observations = interesting();
      for (const family of ['backend', 'node', 'gateway'] as const) {
        const found = candidates(observations, family, nowMs);
        out.push(...found.filter((c) => c.transition.to === 'clear').map((c) => c.transition));
        const waiting = found.filter((c) => c.transition.to !== 'clear');
        const ready = waiting.filter((c) => c.dueAt <= nowMs);
        if (ready.length === 0) continue;
        const firstDue = Math.min(...ready.map((c) => c.dueAt));
        const isGathered = ready.length === waiting.length || nowMs >= firstDue + Math.max(graceMs(), 1000);
        if (isGathered) out.push(...ready.map((c) => c.transition));
      }
      return out;
    },
    size: () => observed.size,
  };
}
