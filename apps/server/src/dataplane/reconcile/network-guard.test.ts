import { describe, expect, it } from 'vitest';
import type { DesiredPeer, DesiredState } from '../types.js';
import { createNetworkGuard } from './network-guard.js';

const peer = (nodeId: number, subnets: string[], byToken: boolean): DesiredPeer => ({
  nodeId,
  publicKey: `key-${String(nodeId)}`,
  presharedKey: null,
  address: `10.44.0.${String(nodeId + 1)}`,
  allowedIps: [`10.44.0.${String(nodeId + 1)}/32`, ...subnets],
  ...(byToken ? { networksByToken: true } : {}),
});

const stateWith = (peers: DesiredPeer[], localBackend?: string): DesiredState => ({
  gateway: { address: '10.44.0.1/16', listenPort: 51820, privateKey: 'k', publicHost: 'gw.test' },
  peers,
  http: localBackend
    ? [
        {
          serviceId: 3,
          nodeId: 1,
          domain: 'wiki.test',
          pathLocation: '/',
          backendProto: 'http',
          backendHost: localBackend,
          backendPort: 80,
          allowedIps: [],
          blockedIps: [],
        },
      ]
    : [],
  stream: [],
  domains: [],
});

function guardWith(hostRoutes: string[] | Error = []) {
  return createNetworkGuard({
    vpnSubnet: '10.44.0.0/16',
    minPrefix: 16,
    hostNetworks: () => (hostRoutes instanceof Error ? Promise.reject(hostRoutes) : Promise.resolve(hostRoutes)),
    underlayOf: () => null,
    reach: { knownDestinations: () => [], known: (name) => (name === 'wiki.internal' ? ['10.22.0.8'] : []) },
  });
}

describe("the data plane's re-check of subnets a node's token set", () => {
  it('leaves the state alone when no token set any', async () => {
    const state = stateWith([peer(2, ['10.22.0.0/24'], false)], '10.22.0.8');
    expect(await guardWith()(state)).toEqual({ state, rejected: new Map() });
  });

  it("sets aside only the subnet the gateway needs (a backend by name too); the node's other subnets stay", async () => {
    const { state, rejected } = await guardWith()(
      stateWith([peer(2, ['10.22.0.0/24', '192.168.78.0/24'], true)], 'wiki.internal'),
    );
    expect(state.peers[0]?.allowedIps).toEqual(['10.44.0.3/32', '192.168.78.0/24']);
    expect(rejected.get(2)).toMatch(
      /10\.22\.0\.0\/24 \(This network contains 10\.22\.0\.8, the backend \(wiki\.internal\)/,
    );
  });

  it("the operator's subnets win over a token's, and an earlier node's token over a later one's", async () => {
    const { state, rejected } = await guardWith()(
      stateWith([peer(5, ['10.30.0.0/24'], true), peer(4, ['10.30.0.0/25'], true), peer(9, ['10.30.0.128/25'], false)]),
    );
    expect(state.peers.map((p) => p.allowedIps.length)).toEqual([1, 2, 2]);
    expect([...rejected.keys()]).toEqual([5]);
  });

  it('its own backends do not count against a node, and unreadable host routes keep every token subnet out', async () => {
    const own = stateWith([peer(1, ['10.22.0.0/24'], true)], '10.22.0.8');
    expect((await guardWith()(own)).rejected.size).toBe(0);
    const { state, rejected } = await guardWith(new Error('ip: not found'))(
      stateWith([peer(2, ['10.23.0.0/24'], true)]),
    );
    expect(state.peers[0]?.allowedIps).toEqual(['10.44.0.3/32']);
    expect(rejected.get(2)).toContain("the host's routes could not be read");
  });
});
