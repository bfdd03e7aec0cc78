import { describe, expect, it } from 'vitest';
import {
  openDomainIds,
  openDomainIdsToSearch,
  parseServiceKey,
  serviceOnNodeSearch,
  validateDomainsSearch,
  validateNodeDetailSearch,
  validateServicesSearch,
} from './list-search';

describe('list views in the URL', () => {
  it("keeps the node page's two tables apart and drops malformed values", () => {
    expect(validateNodeDetailSearch({ httpQ: 'web', httpPage: 2, tcpLimit: 7, tcpSort: 'port', other: 'x' })).toEqual({
      httpQ: 'web',
      httpPage: 2,
      httpLimit: undefined,
      httpSort: undefined,
      httpOrder: undefined,
      tcpQ: undefined,
      tcpPage: undefined,
      tcpLimit: undefined,
      tcpSort: undefined,
      tcpOrder: undefined,
      service: undefined,
    });
  });

  it('names the service whose Info the node page opens, and nothing malformed', () => {
    expect(validateNodeDetailSearch({ service: 'tcp:12' }).service).toBe('tcp:12');
    for (const bad of ['udp:1', 'http:0', 'http:01', 'http:1;x', 12]) {
      expect(validateNodeDetailSearch({ service: bad }).service).toBeUndefined();
    }
    expect(parseServiceKey('http:7')).toEqual({ type: 'http', id: 7 });
    expect(serviceOnNodeSearch({ type: 'http', id: 7, name: 'web' })).toEqual({ httpQ: 'web', service: 'http:7' });
  });

  it("keeps the services overview's filters and drops the unknown ones", () => {
    expect(
      validateServicesSearch({
        q: 'web',
        kind: 'udp',
        status: 'backend-down',
        node: '3',
        domain: 'a.example',
        sort: 'node',
      }),
    ).toEqual({
      q: 'web',
      page: undefined,
      limit: undefined,
      kind: 'udp',
      status: 'backend-down',
      node: 3,
      domain: 'a.example',
      sort: 'node',
      order: undefined,
    });
    expect(validateServicesSearch({ kind: 'icmp', status: 'everything', node: 'x', sort: 'id' })).toMatchObject({
      kind: undefined,
      status: undefined,
      node: undefined,
      sort: undefined,
    });
  });

  it('reads a search the router parsed as a number as the text it was', () => {
    expect(validateNodeDetailSearch({ tcpQ: 1883 }).tcpQ).toBe('1883');
  });

  it('reads the open domain rows from a lone number or a list, and writes them back the same way', () => {
    expect(openDomainIds({ open: 12 })).toEqual([12]);
    expect(openDomainIds({ open: '12,15,12,x,-3' })).toEqual([12, 15]);
    expect(openDomainIds({})).toEqual([]);
    expect(openDomainIdsToSearch([12])).toBe(12);
    expect(openDomainIdsToSearch([12, 15])).toBe('12,15');
    expect(openDomainIdsToSearch([])).toBeUndefined();
  });

  it("keeps the views of open rows' tables only", () => {
    const search = validateDomainsSearch({
      q: 'example',
      open: '3,4',
      'd3.httpPage': 2,
      'd3.httpSort': 'name',
      'd4.tcpQ': 'mqtt',
      'd4.tcpLimit': 3,
      'd9.httpPage': 2,
    });
    expect(Object.fromEntries(Object.entries(search).filter(([, value]) => value !== undefined))).toEqual({
      q: 'example',
      open: '3,4',
      'd3.httpPage': 2,
      'd3.httpSort': 'name',
      'd4.tcpQ': 'mqtt',
    });
  });
});
