import type { Node } from '@postern/contract';

// Test data shared by the console's component and query tests: one factory per entity, overrides for what a test
// is about.

/** A remote node, online, with no traffic yet. */
export const buildNode = (overrides: Partial<Node> = {}): Node => ({
  id: 4,
  name: 'laptop',
  address: '10.0.0.4',
  allowInternet: false,
  isGateway: false,
  gatewayNetwork: null,
  gatewayNetworks: [],
  isLocal: false,
  enabled: true,
  status: 'online',
  clientIp: null,
  latestHandshakeTimestamp: null,
  transferRx: 0,
  transferTx: 0,
  created_at: '2026-11-22T10:00:00Z',
  updated_at: '2026-11-22T10:00:00Z',
  ...overrides,
});
