import type { AccessPolicy, IdentityProvider, ServiceAccess } from '@postern/contract';

// Test data for the access component tests.

export const buildPolicy = (overrides: Partial<AccessPolicy> = {}): AccessPolicy => ({
  mode: 'protected',
  providerId: 3,
  providerName: 'Keycloak',
  allowEmails: ['alice@example.com'],
  allowEmailDomains: [],
  allowGroups: [],
  passwordSet: false,
  shareLinks: false,
  bypassPaths: [],
  bypassNetworks: [],
  sessionSeconds: 86_400,
  ...overrides,
});

export const PUBLIC_POLICY = buildPolicy({ mode: 'public', providerId: null, providerName: null, allowEmails: [] });

export const buildServiceAccess = (overrides: Partial<ServiceAccess> = {}): ServiceAccess => ({
  serviceId: 9,
  nodeId: 4,
  domain: 'app.example.com',
  mode: 'inherit',
  own: null,
  setBy: null,
  domainPolicy: PUBLIC_POLICY,
  effective: { ...PUBLIC_POLICY, source: 'domain' },
  ...overrides,
});

export const buildProvider = (overrides: Partial<IdentityProvider> = {}): IdentityProvider => ({
  id: 3,
  name: 'Keycloak',
  issuer: 'https://sso.example.com/realms/home',
  clientId: 'postern',
  hasClientSecret: true,
  scopes: ['openid', 'email', 'profile'],
  groupsClaim: 'groups',
  policies: 0,
  created_at: '2026-11-22T10:00:00Z',
  updated_at: '2026-11-22T10:00:00Z',
  ...overrides,
});
