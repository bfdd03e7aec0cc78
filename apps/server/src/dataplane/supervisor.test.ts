import { afterEach, describe, expect, test, vi } from 'vitest';
import { createRecordingReconciler } from './offline.js';
import { createSupervisor, type SelfRepairing, type SupervisorDeps } from './supervisor.js';
import { EMPTY_STATE, httpRoute, TEST_RENDER_OPTIONS } from './test-support.js';
import type { DesiredState, DriftReport } from './types.js';

// The heal loop, the retry of a failed apply and the drift check, run against the recording adapters: the same
// supervision the real data plane runs (index.ts) and the offline one (offline.ts).

const STATE: DesiredState = {
  ...EMPTY_STATE,
  peers: [
    {
      nodeId: 2,
      publicKey: `${'B'.repeat(43)}=`,
      presharedKey: null,
      address: '10.44.0.2',
      allowedIps: ['10.44.0.2/32'],
    },
  ],
  http: [httpRoute()],
  domains: [{ domainId: 1, domain: 'a.test', ssl: 'self-signed' }],
};

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function setup(over: Pick<SupervisorDeps, 'listenerLimits' | 'timing'> = {}) {
  let loads = 0;
  let failWith: string | null = null;
  /** What the database holds; the drift check's read waits for `readGate` when a test sets one. */
  let current = STATE;
  let readGate: Promise<void> | null = null;
  let applyGate: Promise<void> | null = null;
  let plannedReads = 0;
  const { reconciler, plan, proxy, wireguard, certs } = createRecordingReconciler({
    loadDesiredState: async () => {
      loads++;
      const state = current;
      await applyGate;
      return state;
    },
    render: { ...TEST_RENDER_OPTIONS, resolvers: [] },
  });
  const failing = {
    async apply() {
      const result = await reconciler.apply();
      return failWith === null ? result : { ok: false as const, message: failWith, rejected: result.rejected };
    },
    forgetApplied: () => reconciler.forgetApplied(),
  };
  const supervisor = createSupervisor({
    reconciler: failing,
    loadPlanned: async () => {
      plannedReads++;
      const state = current;
      await readGate;
      return { state, plan: plan(state) };
    },
    proxy,
    wireguard,
    isShared: false,
    logger: silent,
    ...over,
  });
  return {
    supervisor,
    proxy,
    wireguard,
    certs,
    loads: () => loads,
    /** The drift checks' reads of the planned state so far. */
    plannedReads: () => plannedReads,
    /** The next applies wait, once they read the rows, until the returned function is called. */
    holdApplies: (): (() => void) => {
      let release = (): void => undefined;
      applyGate = new Promise((resolve) => {
        release = () => {
          applyGate = null;
          resolve();
        };
      });
      return release;
    },
    failNext: (message: string | null) => {
      failWith = message;
    },
    setState: (state: DesiredState) => {
      current = state;
    },
    /** The drift check's next reads wait until the returned function is called. */
    holdReads: (): (() => void) => {
      let release = (): void => undefined;
      readGate = new Promise((resolve) => {
        release = () => {
          readGate = null;
          resolve();
        };
      });
      return release;
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the data plane supervisor', () => {
  test('what died is restarted and everything applied again; nothing died, nothing is applied', async () => {
    const t = setup();
    await t.supervisor.apply();
    const applies = t.loads();
    await t.supervisor.healOnce();
    expect(t.loads()).toBe(applies);

    // nginx's master died and was restarted: it holds nothing, so everything is pushed again, certificates too.
    t.proxy.routes.clear();
    t.proxy.nextHeal = { http: true, streams: [] };
    const ensured = t.certs.ensured.length;
    await t.supervisor.healOnce();
    expect(t.loads()).toBe(applies + 1);
    expect([...t.proxy.routes.keys()]).toEqual(['a.test']);
    expect(t.certs.ensured.slice(ensured)).toEqual(['a.test:self-signed']);

    // Only a TCP/UDP instance was restarted: applied again, but what nginx's HTTP instance holds is still known.
    t.proxy.nextHeal = { http: false, streams: ['tcp-30000'] };
    await t.supervisor.healOnce();
    expect(t.loads()).toBe(applies + 2);
    expect(t.certs.ensured.slice(ensured)).toEqual(['a.test:self-signed']);
  });

  test('an apply that failed as a whole is retried by the heal loop, not more often than the retry period', async () => {
    vi.useFakeTimers();
    const t = setup({ timing: { retryBehindMs: 5000 } });
    t.failNext('nginx: the control socket did not answer');
    const result = await t.supervisor.apply();
    expect(result.ok).toBe(false);
    // Shown at once in the system status, before any drift check.
    expect(t.supervisor.lastDrift()?.differences).toEqual([
      'the last change could not be applied: nginx: the control socket did not answer',
    ]);
    const applies = t.loads();
    await t.supervisor.healOnce();
    expect(t.loads()).toBe(applies + 1);
    // Still failing: the next retry waits for the period.
    await t.supervisor.healOnce();
    expect(t.loads()).toBe(applies + 1);
    vi.advanceTimersByTime(5001);
    t.failNext(null);
    await t.supervisor.healOnce();
    expect(t.loads()).toBe(applies + 2);
    // Caught up: no more retries.
    vi.advanceTimersByTime(5001);
    await t.supervisor.healOnce();
    expect(t.loads()).toBe(applies + 2);
  });

  test('drift removed by hand is reported and repaired; a drift check follows a change and repeats', async () => {
    vi.useFakeTimers();
    const t = setup({ timing: { driftAfterChangeMs: 3000, driftEveryMs: 60_000, healIntervalMs: 1_000_000 } });
    const reports: DriftReport[] = [];
    t.supervisor.onDrift((report) => reports.push(report));
    t.supervisor.start();
    await t.supervisor.apply();
    expect(reports).toEqual([]);

    // Someone deletes a route and a peer behind the gateway's back.
    t.proxy.routes.clear();
    t.wireguard.peers = [];
    await vi.advanceTimersByTimeAsync(3000);
    expect(reports).toHaveLength(1);
    expect(reports[0]?.differences).toEqual(['nginx lacks the routes of a.test', 'WireGuard lacks the peer of node 2']);
    expect(reports[0]?.repaired).toBe(true);
    expect([...t.proxy.routes.keys()]).toEqual(['a.test']);
    expect(t.wireguard.peers).toHaveLength(1);
    expect(t.proxy.forgotten).toBe(1);

    // The next check, a minute later, finds nothing.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(reports).toHaveLength(2);
    expect(reports[1]).toMatchObject({ differences: [], repaired: false });
    t.supervisor.stop();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(reports).toHaveLength(2);
  });

  test("the boot's rebuild is followed by the periodic drift check, not one seconds later; a change by its own", async () => {
    vi.useFakeTimers();
    const t = setup({ timing: { driftAfterChangeMs: 3000, driftEveryMs: 60_000, healIntervalMs: 1_000_000 } });
    const reports: DriftReport[] = [];
    t.supervisor.onDrift((report) => reports.push(report));
    t.supervisor.start();
    await t.supervisor.rebuild();
    const applies = t.loads();
    // It just pushed what differed from what nginx and WireGuard hold: no check (a read, plan and compare of
    // everything) lands on the first changes after a boot.
    await vi.advanceTimersByTimeAsync(3000);
    expect(reports).toEqual([]);
    await vi.advanceTimersByTimeAsync(57_000);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ differences: [], repaired: false });
    // A change is checked a few seconds after it, as before; a rebuild meanwhile does not put that check off.
    await t.supervisor.apply();
    await t.supervisor.rebuild();
    await vi.advanceTimersByTimeAsync(3000);
    expect(reports).toHaveLength(2);
    expect(t.loads()).toBe(applies + 2);
    t.supervisor.stop();
  });

  test("a drift check due while a run is in flight (the boot's rebuild) waits for it, then follows it", async () => {
    vi.useFakeTimers();
    const t = setup({ timing: { driftAfterChangeMs: 3000, driftEveryMs: 60_000, healIntervalMs: 1_000_000 } });
    const reports: DriftReport[] = [];
    t.supervisor.onDrift((report) => reports.push(report));
    t.supervisor.start();
    await t.supervisor.apply();
    // A rebuild of 100,000 services takes seconds: what a check read and compared beside it would say nothing.
    const release = t.holdApplies();
    const rebuild = t.supervisor.rebuild();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(t.plannedReads()).toBe(0);
    expect(reports).toEqual([]);
    release();
    await rebuild;
    // Owed, so a few seconds after the run, not the periodic minute.
    await vi.advanceTimersByTimeAsync(3000);
    expect(t.plannedReads()).toBe(1);
    expect(reports).toEqual([expect.objectContaining({ differences: [], repaired: false })]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(reports).toHaveLength(2);
    t.supervisor.stop();
  });

  test('a change applied while a drift check reads is not drift: nothing reported, no full apply', async () => {
    const t = setup();
    const reports: DriftReport[] = [];
    t.supervisor.onDrift((report) => reports.push(report));
    await t.supervisor.apply();
    const applies = t.loads();

    // The check reads the database before a change commits, and nginx after the change was pushed.
    const release = t.holdReads();
    const check = t.supervisor.checkDrift();
    t.setState({
      ...STATE,
      http: [...STATE.http, httpRoute({ serviceId: 2, domain: 'b.test' })],
      domains: [...STATE.domains, { domainId: 2, domain: 'b.test', ssl: 'self-signed' }],
    });
    await t.supervisor.apply();
    expect([...t.proxy.routes.keys()].sort()).toEqual(['a.test', 'b.test']);
    release();
    await check;
    expect(reports).toEqual([]);
    expect(t.loads()).toBe(applies + 1);

    // The check after the change compares like with like: nothing to report.
    expect(await t.supervisor.checkDrift()).toMatchObject({ differences: [], repaired: false });
    expect(t.loads()).toBe(applies + 1);
  });

  test('the listener limits are repaired by themselves, without a full apply', async () => {
    let isIntact = false;
    const limits: SelfRepairing = {
      drift: () => Promise.resolve(isIntact ? [] : ['the per-address limit rule is missing']),
      forget: () => undefined,
      ensure: () => {
        isIntact = true;
        return Promise.resolve(true);
      },
    };
    const t = setup({ listenerLimits: limits });
    await t.supervisor.apply();
    const applies = t.loads();
    const report = await t.supervisor.checkDrift();
    expect(report).toMatchObject({ differences: ['the per-address limit rule is missing'], repaired: true });
    expect(t.loads()).toBe(applies);
    expect((await t.supervisor.checkDrift()).differences).toEqual([]);
  });
});
