import type { NginxRenderOptions } from './nginx/options.js';
import type { GuardedState } from './reconcile/network-guard.js';
import { createRecordingReconciler } from './offline.js';
import type { ApplyScope, DesiredHttpRoute, DesiredState, DesiredStreamRoute, ScopedState } from './types.js';

// What the reconciler's and supervisor's tests plan against (the adapters: offline.ts `createRecordingReconciler`).

export const TEST_RENDER_OPTIONS: NginxRenderOptions = {
  prefixDir: '/data/nginx',
  certsDir: '/data/certs',
  httpPort: 80,
  httpsPort: 443,
  noDomainHttpsPort: 8443,
  consoleHost: 'gw.test',
  consoleUpstream: 'http://127.0.0.1:3000',
  tunnelAddress: '10.44.0.1',
  resolvers: ['10.0.0.53'],
};

/** The gateway alone: no nodes, services or domains. */
export const EMPTY_STATE: DesiredState = {
  gateway: { address: '10.44.0.1/16', listenPort: 51820, privateKey: `${'A'.repeat(43)}=`, publicHost: 'gw.test' },
  peers: [],
  http: [],
  stream: [],
  domains: [],
};

/** An HTTP service of node 2 on a.test, to 10.44.0.2:80, open to everyone; `over` changes what a test is about. */
export const httpRoute = (over: Partial<DesiredHttpRoute> = {}): DesiredHttpRoute => ({
  serviceId: 1,
  nodeId: 2,
  domain: 'a.test',
  pathLocation: '/',
  backendProto: 'http',
  backendHost: '10.44.0.2',
  backendPort: 80,
  allowedIps: [],
  blockedIps: [],
  ...over,
});

/** A TCP service of node 2 on port 30000, to 10.44.0.2:5432, plain, open to everyone; `over` changes the rest. */
export const streamRoute = (over: Partial<DesiredStreamRoute> = {}): DesiredStreamRoute => ({
  serviceId: 7,
  nodeId: 2,
  proto: 'tcp',
  port: 30000,
  ssl: false,
  domain: null,
  backendHost: '10.44.0.2',
  backendPort: 5432,
  allowedIps: [],
  blockedIps: [],
  ...over,
});

/**
 * A recording reconciler over rows a test sets (`set`), for the scoped-run tests: `runs` lists each run as `full` or
 * `scoped <what describe says of its scope>`; `read` stands for db/desired-state.ts `loadScopedState` (each test file
 * models the part it is about); full and scoped runs can be held after they read the rows (a slow plan, a slow nginx).
 */
export function createScopedWorld(
  initial: DesiredState,
  read: (state: DesiredState, scope: ApplyScope) => ScopedState,
  describe: (scope: ApplyScope) => string,
  guardNetworks?: (state: DesiredState) => Promise<GuardedState>,
) {
  let state = initial;
  const runs: string[] = [];
  let fullGate: Promise<void> | null = null;
  let scopedGate: Promise<void> | null = null;
  const { reconciler, plan, proxy, certs, wireguard } = createRecordingReconciler({
    loadDesiredState: async () => {
      // The rows as they are when the run reads them; a held run then takes its time (planning 100,000 services).
      const rows = state;
      runs.push('full');
      if (fullGate) await fullGate;
      return rows;
    },
    loadScopedState: async (scope) => {
      runs.push(`scoped ${describe(scope)}`);
      const rows = read(state, scope);
      if (scopedGate) await scopedGate;
      return rows;
    },
    render: TEST_RENDER_OPTIONS,
    ...(guardNetworks ? { guardNetworks } : {}),
  });
  return {
    reconciler,
    proxy,
    certs,
    wireguard,
    runs,
    set: (next: DesiredState) => {
      state = next;
    },
    holdFullRuns: (until: Promise<void> | null) => {
      fullGate = until;
    },
    /** Scoped runs read the rows, then wait for `until` before they plan and push. */
    holdScopedRuns: (until: Promise<void> | null) => {
      scopedGate = until;
    },
    /** A full run's plan of the rows now. */
    plan: () => plan(state),
  };
}

/** A promise held shut until `open()`: a test holds a run (or a read) at a point of its choosing. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Waits, a turn of the event loop at a time, until `condition` holds (at most 1,000 turns). */
export async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; !condition(); turn++) {
    if (turn === 1000) throw new Error('condition not reached');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
