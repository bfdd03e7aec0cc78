import { describe, expect, it } from 'vitest';
import { findNetworkClash, NODE_NETWORK_UNAVAILABLE, tokenNetworkPolicy, type NetworkFacts } from './network-guard.js';

const facts: NetworkFacts = {
  vpnSubnet: '10.44.0.0/16',
  gatewayNetworks: [{ nodeId: 7, who: 'the gateway "lab"', network: '192.168.50.0/24' }],
  underlay: [{ who: 'the node "laptop"', ip: '10.99.0.7' }],
  hostRoutes: ['172.17.0.0/16', '10.9.9.9/32'],
  reached: [{ address: '10.40.0.9', what: 'the database host db.internal (POSTERN_DATABASE_URL)', kind: 'setting' }],
};

describe('findNetworkClash', () => {
  it('names what a subnet would take from the gateway, for the operator', () => {
    expect(findNetworkClash('127.0.0.0/16', facts)).toContain('loopback');
    expect(findNetworkClash('10.44.3.0/24', facts)).toContain('the VPN subnet 10.44.0.0/16');
    expect(findNetworkClash('192.168.0.0/16', facts)).toBe(
      'This network overlaps 192.168.50.0/24 of the gateway "lab"',
    );
    expect(findNetworkClash('10.99.0.0/24', facts)).toBe(
      'This network contains 10.99.0.7, the address the node "laptop" connects from',
    );
    expect(findNetworkClash('172.17.5.0/24', facts)).toContain('172.17.0.0/16, a network the gateway host reaches');
    expect(findNetworkClash('10.9.0.0/16', facts)).toContain('10.9.9.9/32');
    expect(findNetworkClash('10.40.0.8/30', facts)).toBe(
      'This network contains 10.40.0.9, the database host db.internal (POSTERN_DATABASE_URL)',
    );
  });

  it("a node's own subnets are not another gateway's; a subnet clear of everything passes", () => {
    expect(findNetworkClash('192.168.50.0/25', facts, 7)).toBeNull();
    expect(findNetworkClash('10.40.0.12/30', facts)).toBeNull();
    expect(findNetworkClash('203.0.113.0/24', facts)).toBeNull();
  });
});

describe("a token's limits", () => {
  it('private ranges only, no wider than the minimum prefix', () => {
    for (const network of ['10.1.0.0/16', '172.31.0.0/24', '192.168.7.0/24', '100.64.1.0/24', '10.2.3.4/32'])
      expect(tokenNetworkPolicy(network, 16), network).toBeNull();
    for (const network of ['10.0.0.0/15', '8.8.8.0/24', '172.0.0.0/16', '100.128.0.0/16', '192.169.0.0/24'])
      expect(tokenNetworkPolicy(network, 16), network).toContain('/16 or narrower');
    expect(tokenNetworkPolicy('10.1.0.0/16', 24)).toContain('/24 or narrower');
  });

  it('one sentence for every clash names nothing', () => {
    expect(NODE_NETWORK_UNAVAILABLE).not.toMatch(/\d+\.\d+/);
  });
});
