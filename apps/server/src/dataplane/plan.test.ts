import { describe, expect, it } from 'vitest';
import { killFilters, parseLive, staleRequests } from './connections.js';
import { parseHostsFile } from './plan.js';

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
