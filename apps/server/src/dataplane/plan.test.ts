import { describe, expect, it } from 'vitest';
import { killFilters, parseLive, staleRequests } from './connections.js';
import { createOfflineDataPlane } from './offline.js';
import { parseHostsFile, planDataPlane, planDataPlaneSliced } from './plan.js';
import { PLAN_SLICE_ROWS } from './nginx/routes.js';
import { EMPTY_STATE, TEST_RENDER_OPTIONS, httpRoute } from './test-support.js';
import type { DesiredDomain, DesiredState } from './types.js';

describe('parseHostsFile', () => {
  it('maps names to their first IPv4 address, lower case, skipping comments and IPv6', () => {
    const hosts = parseHostsFile(
      [
        '127.0.0.1\tlocalhost',
        '::1 localhost ip6-localhost',
        '# 10.0.0.1 commented',
        '172.17.0.5  App  app.internal # the app',
        '172.17.0.6  app',
        'not-an-ip bad',
      ].join('\n'),
    );
    expect(Object.fromEntries(hosts)).toEqual({
      localhost: '127.0.0.1',
      app: '172.17.0.5',
      'app.internal': '172.17.0.5',
    });
  });
});

describe('the connection cutter', () => {
  const live = parseLive([
    ['12', '3 revA 203.0.113.5 50000 443'],
    ['13', '4 revB 203.0.113.6 50001 8443'],
    ['14', '5 revC 203.0.113.7 50002 443'],
    ['15', 'garbage'],
    ['16', '6 revD 1.2.3.4; rm 5 443'],
  ]);

  it('reads what nginx says is in flight, dropping anything malformed', () => {
    expect(live.map((r) => r.serviceId)).toEqual([3, 4, 5]);
  });

  it('cuts requests of services gone or served differently, and nobody else', () => {
    const stale = staleRequests(
      live,
      new Map([
        [3, 'revA'],
        [4, 'revB-edited'],
      ]),
    );
    expect(stale.map((r) => r.serviceId)).toEqual([4, 5]);
  });

  it('names each connection exactly, by server port and client address and port', () => {
    expect(killFilters(live.slice(0, 2))).toEqual([
      [
        '-K',
        '-t',
        '-n',
        'state',
        'established',
        '( sport = :443 and dst 203.0.113.5:50000 ) or ( sport = :8443 and dst 203.0.113.6:50001 )',
      ],
    ]);
    expect(killFilters(live, 2)).toHaveLength(2);
  });
});

describe('planning in slices', () => {
  // Rows out of id order, a path claimed twice, one differing only in case, a missing domain, the console's host,
  // services without a domain, a wildcard with an exact domain below it that has none, a backend named in /etc/hosts.
  const mixed: DesiredState = {
    ...EMPTY_STATE,
    domains: ['a.test', 'b.test', '*.w.test', 'x.w.test', 'gw.test'].map((domain, i) => ({
      domainId: i + 1,
      domain,
      ssl: 'self-signed' as const,
      pemFingerprint: null,
      challenge: 'http-01' as const,
      dnsProviderId: null,
      acmeCaId: null,
    })),
    http: [
      httpRoute({ serviceId: 9, domain: 'b.test', pathLocation: '/api' }),
      httpRoute({ serviceId: 2, domain: 'a.test', pathLocation: '/' }),
      httpRoute({ serviceId: 5, domain: 'a.test', pathLocation: '/' }),
      httpRoute({ serviceId: 3, domain: 'a.test', pathLocation: '/Docs' }),
      httpRoute({ serviceId: 4, domain: 'a.test', pathLocation: '/docs' }),
      httpRoute({ serviceId: 6, domain: 'nowhere.test' }),
      httpRoute({ serviceId: 7, domain: 'gw.test' }),
      httpRoute({ serviceId: 8, domain: null, backendHost: 'localhost' }),
      httpRoute({ serviceId: 1, domain: '*.w.test', pathLocation: '/app' }),
      httpRoute({ serviceId: 10, domain: 'y.w.test', backendProto: 'https' }),
      httpRoute({ serviceId: 11, domain: 'b.test', pathLocation: '/api/v2', allowedIps: ['10.0.0.0/8'] }),
    ],
  };
  const staticHosts = new Map([['localhost', '127.0.0.1']]);

  it('gives the plan the one-turn planner gives, whatever the slice', async () => {
    const whole = planDataPlane(mixed, TEST_RENDER_OPTIONS, staticHosts);
    expect(whole.routes.rejected.size).toBe(4);
    for (const rows of [1, 2, 3, 7, 1000]) {
      const sliced = await planDataPlaneSliced(mixed, TEST_RENDER_OPTIONS, staticHosts, { rows });
      expect(sliced).toEqual(whole);
      // The same order too: nginx's digest and the pushes follow it.
      expect([...sliced.routes.hosts]).toEqual([...whole.routes.hosts]);
      expect([...sliced.routes.rejected]).toEqual([...whole.routes.rejected]);
    }
  });

  it('plans no more than a slice of rows in one turn of the event loop', async () => {
    const rows = 5;
    const state: DesiredState = {
      ...EMPTY_STATE,
      domains: mixed.domains,
      http: Array.from({ length: 53 }, (_, i) =>
        httpRoute({ serviceId: i + 1, domain: 'a.test', pathLocation: `/p${i}`, backendHost: 'app' }),
      ),
    };
    // The planner looks each row's backend name up once: rows planned in this turn.
    let inTurn = 0;
    const perTurn: number[] = [];
    const counting = new Map([['localhost', '127.0.0.1']]);
    const get = counting.get.bind(counting);
    counting.get = (name: string) => {
      if (name === 'app') inTurn++;
      return get(name);
    };
    const pause = async (): Promise<void> => {
      perTurn.push(inTurn);
      inTurn = 0;
      await new Promise((resolve) => setImmediate(resolve));
    };
    await planDataPlaneSliced(state, TEST_RENDER_OPTIONS, counting, { rows, pause });
    perTurn.push(inTurn);
    expect(perTurn.reduce((a, b) => a + b, 0)).toBe(53);
    expect(Math.max(...perTurn)).toBeLessThanOrEqual(rows);
  });

  it('a drift check of the offline data plane (the real supervisor and planner) gives the event loop back', async () => {
    const count = 3 * PLAN_SLICE_ROWS;
    const state: DesiredState = {
      ...EMPTY_STATE,
      domains: Array.from({ length: count }, (_, i) => ({
        ...(mixed.domains[0] as DesiredDomain),
        domain: `d${i}.test`,
      })),
      http: Array.from({ length: count }, (_, i) => httpRoute({ serviceId: i + 1, domain: `d${i}.test` })),
    };
    const dataPlane = createOfflineDataPlane({
      loadDesiredState: () => Promise.resolve(state),
      render: TEST_RENDER_OPTIONS,
    });
    await dataPlane.apply();
    // Turns the event loop took while the check ran: none if it planned the 6,000 rows in one.
    let turns = 0;
    let isDone = false;
    const tick = (): void => {
      if (isDone) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const report = await dataPlane.checkDrift();
    isDone = true;
    expect(report.differences).toEqual([]);
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});
