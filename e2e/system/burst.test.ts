import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBurst, watchRuns } from '../harness/burst.js';
import { httpsRequest } from '../harness/https.js';
import { canRun } from '../../apps/server/src/test/requirements.js';
import { connectNode, startSystem, stopSystem, type ConnectedNode, type System } from './fixture.js';

// A burst of changes through the API with the real gateway and nginx (issue 29: "1,000 services created by a
// script"): every service served, and the changes coalesced into far fewer data-plane runs than changes. The rate is
// measured in bench/ (apply.ts BENCH_BURST), not asserted here.

const SERVICES = 1000;
/** Callers at once, as a script or an import would send them. */
const CLIENTS = 32;
const BACKEND_PORT = 8080;
/** Generous: the time a burst takes is measured in bench/, this only bounds a hang. */
const SERVED_DEADLINE_MS = 240_000;

describe.skipIf(!canRun('netns', 'server-build'))('a burst of changes through the API', () => {
  let system: System;
  let node: ConnectedNode;

  beforeAll(async () => {
    // Debug: each data-plane run logs a line, which is how the runs are counted.
    system = await startSystem(undefined, { POSTERN_LOG_LEVEL: 'debug' });
    node = await connectNode(system, 'node1', 11);
    await node.serve('http', BACKEND_PORT);
  });

  afterAll(async () => {
    expect(await stopSystem(system)).toEqual([]);
  });

  it(
    `serves every one of ${SERVICES} services created at once, in far fewer pushes than changes`,
    async () => {
      const gatewayIp = system.topology.gatewayMgmtIp;
      const runsOf = watchRuns(system.gateway.process);
      const burst = await createBurst(system.api, {
        count: SERVICES,
        clients: CLIENTS,
        nodeId: node.node.id,
        // Each on a domain of its own (a new certificate each), as label discovery finds containers.
        bodyOf: (i) => ({
          name: `burst-${i}`,
          domain: `b${i}.burst.e2e.test`,
          backendHost: node.tunnelIp,
          backendPort: BACKEND_PORT,
        }),
        isServed: async (domain) => {
          const answer = await httpsRequest({ address: gatewayIp, host: domain }, `/${domain}`).catch(() => null);
          return answer?.status === 200 && answer.body.includes('"node1"') && answer.body.includes(`/${domain}`);
        },
        deadlineMs: SERVED_DEADLINE_MS,
      });
      expect(burst.failures).toEqual([]);
      expect(burst.unserved).toEqual([]);
      const counted = runsOf();
      const runs = counted.scoped + counted.full;
      // Coalesced: the changes committed while a run was in flight share the next one. Without batching each change
      // is a run of its own (runs == changes).
      expect(runs).toBeGreaterThan(0);
      expect(runs).toBeLessThan(SERVICES / 5);
    },
    SERVED_DEADLINE_MS + 120_000,
  );
});
