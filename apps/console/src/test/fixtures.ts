import type { Domain, Node } from '@postern/contract';

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

/** A domain with a valid Let's Encrypt certificate, owned by no node. */
export const buildDomain = (overrides: Partial<Domain> = {}): Domain => ({
  id: 3,
  domain: 'app.example.com',
  ssl: 'certbot',
  ownerNodeId: null,
  ownerNodeName: null,
  certificate: {
    state: 'valid',
    issuer: "Let's Encrypt",
    notBefore: '2026-11-01T12:00:00Z',
    notAfter: '2027-01-30T12:00:00Z',
    fingerprint: 'AB:CD',
    error: null,
  },
  created_at: '2026-11-22T12:00:00Z',
  updated_at: '2026-11-22T12:00:00Z',
  ...overrides,
});
