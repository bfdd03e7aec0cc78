import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { toFieldErrors } from './envelopes.js';
import {
  DomainCreateSchema,
  DomainUpdateSchema,
  HttpServiceCreateSchema,
  IdParamSchema,
  LoginRequestSchema,
  NodeCreateSchema,
  NodeListQuerySchema,
  NodeUpdateSchema,
  TcpServiceCreateSchema,
  makeTokenCreateSchema,
} from './requests.js';

/** The `{ field, message }` list a 422 would carry for this input. */
function errorsOf(schema: z.ZodType, input: unknown): Record<string, string> {
  const result = schema.safeParse(input);
  if (result.success) return {};
  return Object.fromEntries(toFieldErrors(result.error).map((e) => [e.field, e.message]));
}

describe('node form rules', () => {
  it('requires a name', () => {
    expect(errorsOf(NodeCreateSchema, {})).toEqual({ name: 'This field is required' });
    expect(errorsOf(NodeCreateSchema, { name: '' })).toEqual({ name: 'This field is not allowed to be empty' });
    expect(errorsOf(NodeCreateSchema, { name: '   ' })).toEqual({ name: 'This field is not allowed to be empty' });
  });

  it('refuses line breaks and other control characters in a name (they would split log and audit lines)', () => {
    const refused = { name: 'This field must not contain line breaks or other control characters' };
    for (const name of ['a\nb', 'a\rb', 'a\u0000b', 'a\u001bb', 'a\u007fb', 'a\u0085b', 'a\u2028b'])
      expect(errorsOf(NodeCreateSchema, { name }), JSON.stringify(name)).toEqual(refused);
    expect(
      errorsOf(HttpServiceCreateSchema, { name: 'web\nINFO forged', domain: 'a.example.com', port: 80 }),
    ).toMatchObject(refused);
    expect(errorsOf(NodeCreateSchema, { name: ' Café 東京 — node ' })).toEqual({});
  });

  it('limits the name length', () => {
    expect(errorsOf(NodeCreateSchema, { name: 'x'.repeat(65) })).toEqual({
      name: 'This field must be less than or equal to 64 characters long',
    });
  });

  it('accepts an empty or missing address and rejects a CIDR or garbage', () => {
    expect(NodeCreateSchema.parse({ name: 'a', address: '' }).address).toBeNull();
    expect(errorsOf(NodeCreateSchema, { name: 'a', address: '10.0.0.2/32' })).toEqual({
      address: 'This field must be a valid IPv4 address',
    });
    expect(errorsOf(NodeCreateSchema, { name: 'a', address: '10.0.0.256' })).toHaveProperty('address');
    expect(NodeCreateSchema.parse({ name: 'a', address: '10.44.0.9' }).address).toBe('10.44.0.9');
  });

  it('requires gatewayNetwork with a CIDR for gateways, and no network otherwise', () => {
    expect(errorsOf(NodeCreateSchema, { name: 'gw', isGateway: true })).toEqual({
      gatewayNetwork: 'This field is required',
    });
    expect(errorsOf(NodeCreateSchema, { name: 'gw', isGateway: true, gatewayNetwork: '192.168.1.0' })).toEqual({
      gatewayNetwork: 'This field must be a valid IP address with a CIDR',
    });
    expect(errorsOf(NodeCreateSchema, { name: 'n', isGateway: false, gatewayNetwork: '192.168.1.0/24' })).toEqual({
      gatewayNetwork: 'This field must be empty unless the node is a gateway',
    });
    expect(
      NodeCreateSchema.parse({ name: 'gw', isGateway: true, gatewayNetwork: '192.168.1.0/24' }).gatewayNetwork,
    ).toBe('192.168.1.0/24');
    expect(NodeCreateSchema.parse({ name: 'n', isGateway: false, gatewayNetwork: '' }).gatewayNetwork).toBeNull();
  });

  it('refuses a gateway network with host bits set, naming the network', () => {
    expect(errorsOf(NodeCreateSchema, { name: 'gw', isGateway: true, gatewayNetwork: '192.168.1.7/24' })).toEqual({
      gatewayNetwork:
        'This field must be a network address: 192.168.1.7/24 has host bits set (did you mean 192.168.1.0/24?)',
    });
  });

  it('lets a PATCH send only some fields', () => {
    expect(NodeUpdateSchema.parse({ allowInternet: true })).toEqual({ allowInternet: true });
    expect(errorsOf(NodeUpdateSchema, { name: '' })).toEqual({ name: 'This field is not allowed to be empty' });
  });

  it('rejects a non-boolean flag', () => {
    expect(errorsOf(NodeCreateSchema, { name: 'a', allowInternet: 'yes' })).toEqual({
      allowInternet: 'This field must be a boolean',
    });
  });
});

describe('domain form rules', () => {
  it('requires a valid domain name and lower-cases it', () => {
    expect(errorsOf(DomainCreateSchema, {})).toEqual({ domain: 'This field is required' });
    expect(errorsOf(DomainCreateSchema, { domain: 'not a domain' })).toEqual({
      domain: 'This field must contain a valid domain name',
    });
    expect(errorsOf(DomainCreateSchema, { domain: 'a.b;evil' })).toEqual({
      domain: 'This field must contain a valid domain name',
    });
    expect(DomainCreateSchema.parse({ domain: 'App.Example.COM' }).domain).toBe('app.example.com');
  });

  it('refuses non-ASCII before lower-casing, so the Kelvin sign never becomes "k"', () => {
    for (const domain of ['\u212Aexample.com', 'caf\u00e9.example.com', 'example.\u212Aom', 'ex\u0130mple.com']) {
      expect(errorsOf(DomainCreateSchema, { domain }), domain).toEqual({
        domain: 'This field must contain a valid domain name',
      });
    }
  });

  it('takes an optional owner: a node id, or null / empty for the admin', () => {
    expect(DomainCreateSchema.parse({ domain: 'a.example.com' }).ownerNodeId).toBeUndefined();
    expect(DomainCreateSchema.parse({ domain: 'a.example.com', ownerNodeId: 3 }).ownerNodeId).toBe(3);
    expect(DomainCreateSchema.parse({ domain: 'a.example.com', ownerNodeId: '3' }).ownerNodeId).toBe(3);
    expect(DomainUpdateSchema.parse({ ownerNodeId: '' }).ownerNodeId).toBeNull();
    expect(DomainUpdateSchema.parse({ ownerNodeId: null }).ownerNodeId).toBeNull();
    expect(errorsOf(DomainCreateSchema, { domain: 'a.example.com', ownerNodeId: 'me' })).toEqual({
      ownerNodeId: 'This field must be a number',
    });
    expect(errorsOf(DomainCreateSchema, { domain: 'a.example.com', ownerNodeId: 0 })).toEqual({
      ownerNodeId: 'This field must be greater than or equal to 1',
    });
  });

  it('allows ssl self-signed, certbot or null, and only self-signed when validation is skipped', () => {
    expect(DomainCreateSchema.parse({ domain: 'a.example.com', ssl: null }).ssl).toBeNull();
    expect(errorsOf(DomainCreateSchema, { domain: 'a.example.com', ssl: 'acme' })).toEqual({
      ssl: 'This field must be one of self-signed, certbot',
    });
    expect(errorsOf(DomainCreateSchema, { domain: 'a.example.com', ssl: 'certbot', skipValidation: true })).toEqual({
      ssl: 'This field must be one of self-signed',
    });
    expect(DomainCreateSchema.parse({ domain: 'a.example.com', ssl: 'self-signed', skipValidation: true }).ssl).toBe(
      'self-signed',
    );
  });
});

describe('HTTP service form rules', () => {
  const base = { name: 'web', pathLocation: '/' };

  it('requires a name and one of domain or path', () => {
    expect(errorsOf(HttpServiceCreateSchema, { pathLocation: '/' })).toEqual({ name: 'This field is required' });
    expect(errorsOf(HttpServiceCreateSchema, { name: 'web' })).toEqual({
      pathLocation: 'Either a domain or a path is required',
    });
    expect(HttpServiceCreateSchema.safeParse({ name: 'web', domain: 'app.example.com' }).success).toBe(true);
  });

  it('checks the path prefix and refuses config-breaking characters', () => {
    expect(errorsOf(HttpServiceCreateSchema, { ...base, pathLocation: 'api' })).toEqual({
      pathLocation: "This field must start with '/' and contain only letters, digits, '-', '.', '_', '~' and '/'",
    });
    for (const bad of ['/a b', '/a;b', '/a{', '/a"b', "/a'b", '/a$b', '/../etc', '/a\nb']) {
      expect(errorsOf(HttpServiceCreateSchema, { ...base, pathLocation: bad })).toHaveProperty('pathLocation');
    }
    expect(HttpServiceCreateSchema.parse({ ...base, pathLocation: '/v1/api' }).pathLocation).toBe('/v1/api');
    expect(errorsOf(HttpServiceCreateSchema, { ...base, pathLocation: '/adm.' })).toEqual({
      pathLocation: "No part of this path may end with '.'",
    });
    expect(errorsOf(HttpServiceCreateSchema, { ...base, pathLocation: '/a b.' })).toEqual({
      pathLocation: "This field must start with '/' and contain only letters, digits, '-', '.', '_', '~' and '/'",
    });
  });

  it("refuses the gateway's reserved paths, and /api only without a domain", () => {
    const acme =
      'This field must not be /.well-known/acme-challenge or a path below it: certificate validation (ACME) uses it';
    const api = expect.stringMatching(/^This field must not be \/api or a path below it: services without a domain/);
    const cases: [string | null, string, unknown][] = [
      [null, '/api', api],
      [null, '/api/', api],
      [null, '/API', api],
      [null, '/api/auth/login', api],
      [null, '/.well-known/acme-challenge', acme],
      ['app.example.com', '/.well-known/acme-challenge/token', acme],
      [
        'app.example.com',
        '/_postern',
        "This field must not be /_postern or a path below it: it is the gateway's internal path",
      ],
    ];
    for (const [domain, pathLocation, message] of cases) {
      expect(
        errorsOf(HttpServiceCreateSchema, { ...base, domain, pathLocation }),
        `${String(domain)} ${pathLocation}`,
      ).toEqual({ pathLocation: message });
    }
    for (const [domain, pathLocation] of [
      ['app.example.com', '/api'],
      [null, '/apix'],
      [null, '/v1/api'],
      [null, '/.well-known'],
      [null, '/_posternx'],
    ]) {
      expect(
        HttpServiceCreateSchema.safeParse({ ...base, domain, pathLocation }).success,
        `${String(domain)} ${pathLocation}`,
      ).toBe(true);
    }
  });

  it('checks the backend protocol, port and domain', () => {
    expect(errorsOf(HttpServiceCreateSchema, { ...base, backendProto: 'ftp' })).toEqual({
      backendProto: 'This field must be one of http, https',
    });
    expect(errorsOf(HttpServiceCreateSchema, { ...base, backendPort: 'abc' })).toEqual({
      backendPort: 'This field must be a number',
    });
    expect(errorsOf(HttpServiceCreateSchema, { ...base, backendPort: 80.5 })).toEqual({
      backendPort: 'This field must be an integer',
    });
    expect(errorsOf(HttpServiceCreateSchema, { ...base, backendPort: 0 })).toEqual({
      backendPort: 'This field must be greater than or equal to 1',
    });
    expect(errorsOf(HttpServiceCreateSchema, { ...base, backendPort: 70000 })).toEqual({
      backendPort: 'This field must be less than or equal to 65535',
    });
    expect(HttpServiceCreateSchema.parse({ ...base, backendPort: '8080' }).backendPort).toBe(8080);
    expect(errorsOf(HttpServiceCreateSchema, { ...base, domain: 'bad_domain' })).toEqual({
      domain: 'This field must contain a valid domain name',
    });
    expect(HttpServiceCreateSchema.parse({ ...base, domain: '' }).domain).toBeNull();
  });

  it('checks IP lists entry by entry', () => {
    expect(errorsOf(HttpServiceCreateSchema, { ...base, allowedIps: 'x' })).toEqual({
      allowedIps: 'This field must be an array',
    });
    expect(errorsOf(HttpServiceCreateSchema, { ...base, allowedIps: ['10.0.0.0/8', 'nope'] })).toEqual({
      allowedIps: 'This field must be a valid IPv4 address, optionally with a CIDR',
    });
    expect(errorsOf(HttpServiceCreateSchema, { ...base, blockedIps: ['1.2.3.4/33'] })).toHaveProperty('blockedIps');
    expect(errorsOf(HttpServiceCreateSchema, { ...base, allowedIps: ['10.0.0.5/8'] })).toEqual({
      allowedIps: 'This field must be a network address: 10.0.0.5/8 has host bits set (did you mean 10.0.0.0/8?)',
    });
    expect(HttpServiceCreateSchema.parse({ ...base, blockedIps: ['10.0.0.5/32', '10.0.0.5'] }).blockedIps).toEqual([
      '10.0.0.5/32',
      '10.0.0.5',
    ]);
    const parsed = HttpServiceCreateSchema.parse({ ...base, allowedIps: ['10.0.0.0/8', '192.168.1.7', '10.0.0.0/8'] });
    expect(parsed.allowedIps).toEqual(['10.0.0.0/8', '192.168.1.7']);
  });

  it('refuses a backend host that is not an IP or host name', () => {
    expect(errorsOf(HttpServiceCreateSchema, { ...base, backendHost: 'a b' })).toEqual({
      backendHost: 'This field must be a valid IP address or host name',
    });
    expect(errorsOf(HttpServiceCreateSchema, { ...base, backendHost: '999.1.1.1' })).toHaveProperty('backendHost');
    expect(HttpServiceCreateSchema.parse({ ...base, backendHost: 'localhost' }).backendHost).toBe('localhost');
    expect(errorsOf(HttpServiceCreateSchema, { ...base, backendHost: '\u212A' })).toEqual({
      backendHost: 'This field must be a valid IP address or host name',
    });
  });
});

describe('TCP service form rules', () => {
  it('requires a name and a backend port, and checks proto and public port', () => {
    expect(errorsOf(TcpServiceCreateSchema, {})).toEqual({
      name: 'This field is required',
      backendPort: 'This field is required',
    });
    expect(errorsOf(TcpServiceCreateSchema, { name: 'mqtt', backendPort: 1883, proto: 'sctp' })).toEqual({
      proto: 'This field must be one of tcp, udp',
    });
    expect(TcpServiceCreateSchema.parse({ name: 'mqtt', backendPort: 1883, port: '' }).port).toBeNull();
    expect(errorsOf(TcpServiceCreateSchema, { name: 'dns', backendPort: 53, proto: 'udp', ssl: true })).toEqual({
      ssl: 'This field must be one of false',
    });
  });
});

describe('token form rules', () => {
  const now = new Date('2026-11-22T12:00:00Z');
  const schema = makeTokenCreateSchema(() => now);

  it('requires a name and accepts no expiry', () => {
    expect(errorsOf(schema, {})).toEqual({ name: 'This field is required' });
    expect(schema.parse({ name: 'ci', expireAt: '' }).expireAt).toBeNull();
  });

  it('refuses an expiry earlier than now or not a date', () => {
    expect(errorsOf(schema, { name: 'ci', expireAt: '2026-11-01T00:00:00Z' })).toEqual({
      expireAt: 'This field must not be earlier than now',
    });
    expect(errorsOf(schema, { name: 'ci', expireAt: 'tomorrow' })).toEqual({
      expireAt: 'This field must be a valid date',
    });
    expect(schema.parse({ name: 'ci', expireAt: '2026-12-01T00:00:00.000Z' }).expireAt).toBe(
      '2026-12-01T00:00:00.000Z',
    );
  });
});

describe('path ids', () => {
  it('accepts plain decimal ids only', () => {
    expect(IdParamSchema.parse({ id: '42' })).toEqual({ id: 42 });
    for (const id of ['1.0', '01', '+1', ' 1', '1 ', '1e0', '0x1', '0', '-1', '', '99999999999999999']) {
      expect(IdParamSchema.safeParse({ id }).success, JSON.stringify(id)).toBe(false);
    }
  });
});

describe('login and queries', () => {
  it('requires both credentials', () => {
    expect(errorsOf(LoginRequestSchema, {})).toEqual({
      username: 'This field is required',
      password: 'This field is required',
    });
  });

  it('defaults paging and bounds the limit', () => {
    expect(NodeListQuerySchema.parse({})).toEqual({ page: 1, limit: 10 });
    expect(NodeListQuerySchema.parse({ page: '2', limit: '5', type: 'gateways' })).toEqual({
      page: 2,
      limit: 5,
      type: 'gateways',
    });
    expect(errorsOf(NodeListQuerySchema, { limit: '1000' })).toEqual({
      limit: 'This field must be less than or equal to 100',
    });
    expect(errorsOf(NodeListQuerySchema, { type: 'all' })).toEqual({
      type: 'This field must be one of nodes, gateways',
    });
  });
});
