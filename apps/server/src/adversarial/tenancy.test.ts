import { eq } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { messageText, type MessageCode } from '@postern/contract';
import { nodes } from '../db/schema.js';
import { applyChanges } from '../dataplane-apply.js';
import { disableExpiredServices } from '../modules/services/expiry.js';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';

// Tenancy and input validation: one test per attack that worked before its fix. The details of each rule are tested
// beside their modules; these are the attacker's-eye view, kept together so they are easy to find and run:
//   pnpm --filter @postern/server exec vitest run src/adversarial

let t: TestApp;
let admin: string;
let nodeA: { id: number; name: string; token: string };
let nodeB: { id: number; name: string; token: string };

type Method = NonNullable<InjectOptions['method']>;
interface Answer {
  status: number;
  body: { message?: string; errors?: { body: { field: string; message: string }[] } } & Record<string, unknown>;
}

async function call(token: string, method: Method, url: string, payload?: object): Promise<Answer> {
  const response = await t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload ? { payload } : {}),
  });
  return { status: response.statusCode, body: response.body ? response.json() : {} };
}

const asAdmin = (method: Method, url: string, payload?: object) => call(admin, method, url, payload);
const fieldsOf = (answer: Answer) => answer.body.errors?.body.map((error) => error.field) ?? [];

describe('tenancy and input validation', () => {
  beforeEach(async () => {
    t = await buildTestApp({
      env: { POSTERN_NODE_MAX_PORTS: '3', POSTERN_NODE_MAX_SERVICES: '5', POSTERN_NODE_MAX_DOMAINS: '2' },
    });
    admin = await t.login();
    nodeA = (await asAdmin('POST', '/api/nodes', { name: 'tenant-a-secret-name' })).body as typeof nodeA;
    nodeB = (await asAdmin('POST', '/api/nodes', { name: 'tenant-b' })).body as typeof nodeB;
  });
  afterEach(() => t.cleanup());

  it('1. a node token publishes only on its own domains, never on the console host or a reserved path', async () => {
    // The measured attack: node B captures the console's sign-in through a path on the shared host.
    for (const pathLocation of ['/api/auth/login', '/api', '/api/auth', '/API', '/api/']) {
      const stolen = await call(nodeB.token, 'POST', '/api/agent/services/http', {
        name: 'grab',
        pathLocation,
        backendPort: 80,
      });
      expect(stolen.status, pathLocation).toBe(422);
    }
    const noDomain = await call(nodeB.token, 'POST', '/api/agent/services/http', {
      name: 'grab',
      pathLocation: '/shop',
      backendPort: 80,
    });
    expect(noDomain.status).toBe(422);
    expect(noDomain.body.errors?.body).toEqual([
      { field: 'domain', message: expect.stringContaining('--domain'), code: 'domain_required_for_node' },
    ]);

    // Node A's new domain becomes A's; B can add nothing below it, and learns nothing about its owner.
    const own = await call(nodeA.token, 'POST', '/api/agent/services/http', {
      name: 'site',
      domain: 'a.example.test',
      backendPort: 80,
    });
    expect(own.status).toBe(201);
    const domains = (await asAdmin('GET', '/api/domains')).body.data as {
      domain: string;
      ownerNodeId: number | null;
    }[];
    expect(domains.find((d) => d.domain === 'a.example.test')?.ownerNodeId).toBe(nodeA.id);
    const shadow = await call(nodeB.token, 'POST', '/api/agent/services/http', {
      name: 'x',
      domain: 'a.example.test',
      pathLocation: '/login',
      backendPort: 80,
    });
    expect(shadow.status).toBe(422);
    expect(fieldsOf(shadow)).toEqual(['domain']);
    expect(JSON.stringify(shadow.body)).not.toContain('tenant-a');
    const tcpOnTheirs = await call(nodeB.token, 'POST', '/api/agent/services/tcp', {
      name: 'x',
      domain: 'a.example.test',
      backendPort: 22,
    });
    expect(tcpOnTheirs.status).toBe(422);

    // The admin's domains and the console's own host name are off limits to every token.
    await asAdmin('POST', '/api/domains', { domain: 'shop.example.test' });
    expect(
      (
        await call(nodeB.token, 'POST', '/api/agent/services/http', {
          name: 'x',
          domain: 'shop.example.test',
          backendPort: 80,
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await call(nodeB.token, 'POST', '/api/agent/services/http', {
          name: 'x',
          domain: 'gateway.test',
          backendPort: 80,
        })
      ).status,
    ).toBe(422);
    expect((await asAdmin('POST', '/api/domains', { domain: 'gateway.test' })).status).toBe(422);

    // Reserved paths hold for the admin too, on a domain or not.
    const local = 1;
    const reservedForAll = [
      ['shop.example.test', '/.well-known/acme-challenge/x'],
      [null, '/_postern'],
      [null, '/api/auth/login'],
      [null, '/API/'],
      [null, '/api'],
    ];
    for (const [domain, pathLocation] of reservedForAll) {
      const reserved = await asAdmin('POST', `/api/services/${local}/http`, {
        name: 'r',
        domain,
        pathLocation,
        backendHost: '127.0.0.1',
        backendPort: 80,
      });
      expect(reserved.status, `${domain} ${pathLocation}`).toBe(422);
      expect(fieldsOf(reserved)).toEqual(['pathLocation']);
    }
    // Nothing was created by any refused call.
    expect((await asAdmin('GET', '/api/services/http')).body.total as number).toBe(1); // node A's site

    // TLS termination without a domain would be served on a port of the console's host name with the console's own
    // certificate, where browsers send the console's session cookie and nginx cannot take it out of a raw stream.
    const tlsNoDomain = await call(nodeB.token, 'POST', '/api/agent/services/tcp', {
      name: 'grab-tls',
      ssl: true,
      backendPort: 8443,
    });
    expect(tlsNoDomain.status).toBe(422);
    expect(fieldsOf(tlsNoDomain)).toEqual(['ssl']);
    const tlsOwnDomain = await call(nodeA.token, 'POST', '/api/agent/services/tcp', {
      name: 'tls',
      domain: 'a.example.test',
      ssl: true,
      backendPort: 8443,
    });
    expect(tlsOwnDomain.status).toBe(201);
    expect((await asAdmin('GET', '/api/services/tcp')).body.total as number).toBe(1);
  });

  it('5. node tokens follow their node: disabled means refused, quotas hold, errors name no other node', async () => {
    await asAdmin('PATCH', `/api/nodes/${nodeB.id}/disable`);
    for (const [method, url] of [
      ['GET', '/api/agent/config'],
      ['GET', '/api/agent/node'],
      ['GET', '/api/agent/services/tcp'],
    ] as const) {
      const refused = await call(nodeB.token, method, url);
      expect(refused.status, url).toBe(403);
      expect(refused.body.message).toMatch(/disabled/i);
      expect(JSON.stringify(refused.body)).not.toContain('PrivateKey');
    }
    await asAdmin('PATCH', `/api/nodes/${nodeB.id}/enable`);

    // One token can no longer take the whole TCP range (100 ports before): it stops at its quota.
    const created: number[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await call(nodeA.token, 'POST', '/api/agent/services/tcp', {
        name: `p${i}`,
        backendPort: 1000 + i,
      });
      if (answer.status !== 201) {
        expect(answer.status).toBe(400);
        expect(answer.body.message).toMatch(/limit of 3/);
        break;
      }
      created.push(answer.body.port as number);
    }
    expect(created).toHaveLength(3);
    expect(
      (await asAdmin('POST', '/api/services/1/tcp', { name: 'admin-port', backendHost: '127.0.0.1', backendPort: 22 }))
        .status,
    ).toBe(201);

    // A taken port or route is "taken", never "taken by <other node's service>".
    const taken = await call(nodeB.token, 'POST', '/api/agent/services/tcp', {
      name: 'q',
      port: created[0],
      backendPort: 1,
    });
    expect(taken.status).toBe(422);
    expect(JSON.stringify(taken.body)).not.toMatch(/p0|tenant-a/);
  });

  it('6. gateway networks that would capture the host, a node underlay, loopback, link-local or multicast are refused', async () => {
    t.fakeDataPlane.setHostNetworks(['192.168.1.0/24']);
    const [row] = await t.db.select().from(nodes).where(eq(nodes.id, nodeA.id)).all();
    t.fakeDataPlane.status.setStatus(row?.publicKey ?? '', {
      status: 'online',
      clientIp: '198.51.100.7',
      latestHandshakeTimestamp: null,
      transferRx: 0,
      transferTx: 0,
    });
    for (const gatewayNetwork of [
      '192.168.1.0/24',
      '192.168.0.0/16',
      '198.51.100.0/24',
      '127.0.0.0/8',
      '169.254.0.0/16',
      '224.0.0.0/4',
      '0.0.0.0/8',
      '240.0.0.0/4',
    ]) {
      const created = await asAdmin('POST', '/api/nodes', { name: 'gw', isGateway: true, gatewayNetwork });
      expect(created.status, gatewayNetwork).toBe(422);
      expect(fieldsOf(created), gatewayNetwork).toEqual(['gatewayNetwork']);
      const updated = await asAdmin('PATCH', `/api/nodes/${nodeB.id}`, { isGateway: true, gatewayNetwork });
      expect(updated.status, gatewayNetwork).toBe(422);
    }
    expect(
      (await asAdmin('POST', '/api/nodes', { name: 'gw', isGateway: true, gatewayNetwork: '192.168.7.0/24' })).status,
    ).toBe(201);
  });

  it('7. domains refuse non-ASCII before case folding, CIDRs with host bits are refused, ids are parsed strictly', async () => {
    // U+212A KELVIN SIGN lower-cases to "k": it must not become example.test's twin.
    const kelvin = await asAdmin('POST', '/api/domains', { domain: '\u212Aexample.test' });
    expect(kelvin.status).toBe(422);
    const asService = await call(nodeA.token, 'POST', '/api/agent/services/http', {
      name: 'k',
      domain: 'a.\u212Aexample.test',
      backendPort: 80,
    });
    expect(asService.status).toBe(422);

    const hostBits = await asAdmin('POST', `/api/services/1/http`, {
      name: 'h',
      pathLocation: '/h',
      backendHost: '127.0.0.1',
      allowedIps: ['10.0.0.5/8'],
    });
    expect(hostBits.status).toBe(422);
    expect(hostBits.body.errors?.body[0]?.message).toContain('10.0.0.0/8');
    expect(
      (await asAdmin('POST', '/api/nodes', { name: 'gw', isGateway: true, gatewayNetwork: '172.16.5.1/16' })).status,
    ).toBe(422);

    const domain = (await asAdmin('POST', '/api/domains', { domain: 'ids.example.test' })).body as { id: number };
    for (const id of ['1.0', '01', '+1', '%201', '1e0', `0${domain.id}`, `${domain.id}.0`]) {
      expect((await asAdmin('GET', `/api/nodes/${id}`)).status, `node ${id}`).toBe(404);
      expect((await asAdmin('GET', `/api/domains/${id.replace('1', String(domain.id))}`)).status, `domain ${id}`).toBe(
        404,
      );
      expect((await asAdmin('GET', `/api/nodes/${id.replace('1', String(nodeA.id))}/pats`)).status, `pats ${id}`).toBe(
        404,
      );
    }
    expect((await asAdmin('GET', `/api/domains/${domain.id}`)).status).toBe(200);
  });
  it("8. a node token makes its own services stricter than its domain's policy, never weaker (docs/ACCESS.md)", async () => {
    // The operator protects A's domain with single sign-on for corp.test, share links allowed, /hooks open.
    const site = await call(nodeA.token, 'POST', '/api/agent/services/http', {
      name: 'site',
      domain: 'sso.example.test',
      backendPort: 80,
    });
    expect(site.status).toBe(201);
    const provider = await asAdmin('POST', '/api/access/providers', {
      name: 'corp',
      issuer: 'https://idp.corp.test',
      clientId: 'postern',
      clientSecret: 'provider-secret',
    });
    const other = await asAdmin('POST', '/api/access/providers', {
      name: 'elsewhere',
      issuer: 'https://idp.elsewhere.test',
      clientId: 'postern',
    });
    const domains = (await asAdmin('GET', '/api/domains?search=sso.example.test')).body.data as { id: number }[];
    const domainId = domains[0]?.id ?? 0;
    const floor = await asAdmin('PATCH', `/api/domains/${domainId}/access`, {
      mode: 'protected',
      providerId: provider.body.id,
      allowEmailDomains: ['corp.test'],
      allowGroups: ['staff'],
      shareLinks: true,
      bypassPaths: ['/hooks'],
      bypassNetworks: ['192.168.0.0/16'],
      sessionSeconds: 3600,
    });
    expect(floor.status).toBe(200);
    const url = `/api/agent/services/http/${site.body.id as number}/access`;

    // Each way of letting in more than the operator does is refused, on the field that would do it.
    const weaker: [object, string][] = [
      [{ mode: 'public' }, 'mode'],
      [{ mode: 'inherit', password: 'tenant-pin' }, 'password'],
      [{ mode: 'protected', password: 'tenant-pin' }, 'password'],
      [{ mode: 'protected', providerId: other.body.id, allowEmails: ['x@corp.test'] }, 'providerId'],
      [{ mode: 'protected', providerId: provider.body.id, allowEmailDomains: ['gmail.com'] }, 'allowEmailDomains'],
      [{ mode: 'protected', providerId: provider.body.id, allowEmails: ['eve@evil.test'] }, 'allowEmails'],
      [{ mode: 'protected', providerId: provider.body.id, allowGroups: ['everyone'] }, 'allowGroups'],
      [{ mode: 'protected', shareLinks: true, bypassPaths: ['/'] }, 'bypassPaths'],
      [{ mode: 'protected', shareLinks: true, bypassNetworks: ['0.0.0.0/0'] }, 'bypassNetworks'],
      [{ mode: 'protected', shareLinks: true, sessionSeconds: 86400 }, 'sessionSeconds'],
    ];
    for (const [body, field] of weaker) {
      const refused = await call(nodeA.token, 'PATCH', url, body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(fieldsOf(refused), JSON.stringify(body)).toEqual([field]);
    }
    // Nothing was saved by any of them: the service still inherits the operator's policy.
    const still = await call(nodeA.token, 'GET', url);
    expect(still.body).toMatchObject({ mode: 'inherit', effective: { source: 'domain', providerName: 'corp' } });

    // Stricter is fine: fewer people, fewer bypasses, a shorter session.
    const stricter = await call(nodeA.token, 'PATCH', url, {
      mode: 'protected',
      providerId: provider.body.id,
      allowEmails: ['ann@corp.test'],
      allowEmailDomains: [],
      allowGroups: [],
      bypassPaths: ['/hooks/github'],
      sessionSeconds: 600,
    });
    expect(stricter.status).toBe(200);
    expect(stricter.body).toMatchObject({ mode: 'protected', setBy: 'node', effective: { source: 'service' } });

    // Another node's token names nothing of A's: its service does not exist for B.
    expect((await call(nodeB.token, 'GET', url)).status).toBe(404);
    expect((await call(nodeB.token, 'PATCH', url, { mode: 'inherit' })).status).toBe(404);

    // The operator tightens the domain afterwards: A's older choice no longer counts, the domain's applies.
    await asAdmin('PATCH', `/api/domains/${domainId}/access`, {
      allowEmailDomains: [],
      allowEmails: ['boss@corp.test'],
    });
    const after = await call(nodeA.token, 'GET', url);
    expect(after.body).toMatchObject({
      setBy: 'node',
      effective: { source: 'domain', allowEmails: ['boss@corp.test'] },
    });

    // A policy the operator set on the service is the operator's: the token may not change or drop it.
    expect(
      (
        await asAdmin('PATCH', `/api/services/${nodeA.id}/http/${site.body.id as number}/access`, {
          mode: 'protected',
          password: 'operator-pin',
        })
      ).status,
    ).toBe(200);
    for (const body of [{ mode: 'inherit' }, { sessionSeconds: 300 }]) {
      const refused = await call(nodeA.token, 'PATCH', url, body);
      expect(refused.status).toBe(422);
      expect(fieldsOf(refused)).toEqual(['mode']);
    }
    // No answer carries a secret.
    expect(JSON.stringify((await call(nodeA.token, 'GET', url)).body)).not.toMatch(
      /argon2|operator-pin|provider-secret/,
    );
    expect(JSON.stringify((await asAdmin('GET', '/api/access/providers')).body)).not.toContain('provider-secret');
  });
});

// ---- Holes opened by the new features -----------------------------------------------------------------------------
// A gateway node's token set networks that routed the gateway host's own traffic into its tunnel; a node's token undid
// the operator's decisions; `expiresAt` accepted the year 9999.

describe("a gateway node's token and the networks the gateway itself reaches", () => {
  let nodeC: { id: number; name: string; token: string };
  /** Each test's own gateway node A (the world around it is shared, and left as found). */
  let networkA = '';
  let worldsA = 0;

  // One app for the whole block (a PostgreSQL database costs a second or two to make).
  beforeAll(async () => {
    t = await buildTestApp({
      env: {
        POSTERN_RESOLVERS: '10.53.0.53',
        POSTERN_DATABASE_URL: 'postgres://postern:not-a-secret@db.internal:5432/postern',
        POSTERN_ACME_DIRECTORY: 'https://acme.internal/directory',
      },
    });
    t.fakeDataPlane.setNames({
      'db.internal': ['10.40.0.9'],
      'acme.internal': ['10.60.0.3'],
      'app.internal': ['10.21.0.9'],
    });
    t.fakeDataPlane.setHostNetworks(['192.168.1.0/24']);
    admin = await t.login();
    nodeB = (
      await asAdmin('POST', '/api/nodes', { name: 'tenant-b', isGateway: true, gatewayNetwork: '172.20.0.0/24' })
    ).body as typeof nodeB;
    nodeC = (await asAdmin('POST', '/api/nodes', { name: 'tenant-c' })).body as typeof nodeC;
    // Node C connects from a private address (a tenant inside the same provider's network).
    const [row] = await t.db.select().from(nodes).where(eq(nodes.id, nodeC.id)).all();
    t.fakeDataPlane.status.setStatus(row?.publicKey ?? '', {
      status: 'online',
      clientIp: '10.99.0.7',
      latestHandshakeTimestamp: null,
      transferRx: 0,
      transferTx: 0,
    });
    // The operator's own services on the gateway host (the local node), reached through the default route.
    for (const [type, body] of [
      ['http', { name: 'billing', domain: 'billing.example.test', backendHost: '10.20.0.5', backendPort: 8080 }],
      ['http', { name: 'intranet', domain: 'intranet.example.test', backendHost: 'app.internal', backendPort: 80 }],
      ['tcp', { name: 'postgres', backendHost: '172.18.5.5', backendPort: 5432 }],
    ] as const) {
      expect((await asAdmin('POST', `/api/services/1/${type}`, body)).status).toBe(201);
    }
  });
  afterAll(() => t.cleanup());
  beforeEach(async () => {
    networkA = `192.168.${String(100 + ++worldsA)}.0/24`;
    nodeA = (
      await asAdmin('POST', '/api/nodes', {
        name: `tenant-a-secret-name-${String(worldsA)}`,
        isGateway: true,
        gatewayNetwork: networkA,
      })
    ).body as typeof nodeA;
  });

  const setNetworks = (token: string, gatewayNetworks: string[]) =>
    call(token, 'PATCH', '/api/agent/node/gateway-networks', { gatewayNetworks });
  const allow = (node: { id: number }, allowTokenNetworks: boolean) =>
    asAdmin('PATCH', `/api/nodes/${node.id}`, { allowTokenNetworks });
  const networksOf = async (node: { id: number }) =>
    (await asAdmin('GET', `/api/nodes/${node.id}`)).body.gatewayNetworks as string[];

  it('a token sets its networks only where the operator allowed it for that node (off by default)', async () => {
    expect((await asAdmin('GET', `/api/nodes/${nodeA.id}`)).body.allowTokenNetworks).toBe(false);
    const refused = await setNetworks(nodeA.token, ['192.168.78.0/24']);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/operator/);
    expect(await networksOf(nodeA)).toEqual([networkA]);

    expect((await allow(nodeA, true)).body.allowTokenNetworks).toBe(true);
    const set = await setNetworks(nodeA.token, ['192.168.78.0/24']);
    expect(set.status).toBe(200);
    expect(set.body.gatewayNetworks).toEqual(['192.168.78.0/24']);
    // For that node only, and until the operator takes it back.
    expect((await setNetworks(nodeB.token, ['172.21.0.0/24'])).status).toBe(403);
    await allow(nodeA, false);
    expect((await setNetworks(nodeA.token, ['192.168.79.0/24'])).status).toBe(403);
    expect(await networksOf(nodeA)).toEqual(['192.168.78.0/24']);
    // Only a gateway's tokens can be given it.
    const notGateway = await allow(nodeC, true);
    expect(notGateway.status).toBe(422);
    expect(fieldsOf(notGateway)).toEqual(['allowTokenNetworks']);
  });

  it('refuses wide networks and whatever the gateway reaches, in one sentence that names nothing of it', async () => {
    await allow(nodeA, true);
    const reached: Record<string, string> = {
      '10.20.0.0/24': "the operator's HTTP backend 10.20.0.5",
      '10.20.0.5/32': 'that backend alone',
      '10.21.0.0/24': "the operator's backend app.internal (10.21.0.9)",
      '172.18.5.0/24': "the operator's TCP backend 172.18.5.5",
      '10.40.0.0/24': 'the database host db.internal (10.40.0.9)',
      '10.53.0.0/24': 'the resolver 10.53.0.53',
      '10.60.0.0/24': 'the ACME directory host acme.internal (10.60.0.3)',
      '100.100.100.0/24': 'a cloud metadata address (100.100.100.200)',
      '192.168.1.128/25': 'part of a route of the host (192.168.1.0/24)',
      '172.20.0.0/24': "tenant B's network",
      '10.99.0.0/24': 'the address tenant C connects from',
      '10.44.0.0/24': 'the VPN subnet',
    };
    const facts = [
      '10.20.0.5',
      '10.21.0.9',
      'app.internal',
      '172.18.5.5',
      'db.internal',
      '10.40.0.9',
      '10.53.0.53',
      'acme.internal',
      '10.60.0.3',
      '100.100.100.200',
      '192.168.1.0',
      '172.20.0.0',
      '10.99.0.7',
      '10.44.0.0/16',
      'tenant',
      'billing',
      'intranet',
      'postgres',
    ];
    const sentences = new Set<string>();
    for (const [network, what] of Object.entries(reached)) {
      const refused = await setNetworks(nodeA.token, [network]);
      expect(refused.status, `${network}: ${what}`).toBe(422);
      expect(fieldsOf(refused), network).toEqual(['gatewayNetworks']);
      // The caller's own network is named (in the message and as params.entry); nothing else the gateway reaches.
      const text = JSON.stringify(refused.body).replaceAll(network, '<network>');
      for (const fact of facts) expect(text, `the refusal of ${network} names ${fact}`).not.toContain(fact);
      sentences.add(refused.body.errors?.body[0]?.message.replace(network, '<network>') ?? '');
    }
    expect([...sentences]).toHaveLength(1);
    // The measured attack: each of these covered the gateway's own traffic, or stopped the operator adding gateways.
    for (const network of [
      '10.0.0.0/11',
      '10.64.0.0/11',
      '10.128.0.0/9',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '100.64.0.0/10',
      '10.0.0.0/15',
      '203.0.113.0/24',
    ]) {
      const refused = await setNetworks(nodeA.token, [network]);
      expect(refused.status, network).toBe(422);
      const text = JSON.stringify(refused.body);
      for (const fact of facts) expect(text, `the refusal of ${network} names ${fact}`).not.toContain(fact);
    }
    expect(await networksOf(nodeA)).toEqual([networkA]);
    // A private network nobody uses is the node's to route, and the operator still adds gateways beside it.
    expect((await setNetworks(nodeA.token, ['10.23.0.0/24'])).status).toBe(200);
    expect(
      (await asAdmin('POST', '/api/nodes', { name: 'gw-3', isGateway: true, gatewayNetwork: '10.1.0.0/24' })).status,
    ).toBe(201);
  });

  it("the operator's refusals name the clash, and the operator is not bound by the token's limits", async () => {
    const tryNetworks = (gatewayNetworks: string[]) =>
      asAdmin('PATCH', `/api/nodes/${nodeB.id}`, { gatewayNetworks: ['172.20.0.0/24', ...gatewayNetworks] });
    const database = await tryNetworks(['10.40.0.0/24']);
    expect(database.status).toBe(422);
    expect(database.body.errors?.body[0]?.message).toMatch(/10\.40\.0\.9.*database/);
    expect((await tryNetworks(['10.53.0.0/16'])).body.errors?.body[0]?.message).toContain('10.53.0.53');
    expect((await tryNetworks(['10.60.0.0/24'])).body.errors?.body[0]?.message).toContain('10.60.0.3');
    expect((await tryNetworks(['192.168.1.128/25'])).body.errors?.body[0]?.message).toContain('192.168.1.0/24');
    // A public range and a short prefix are the operator's to route.
    expect((await tryNetworks(['203.0.113.0/24', '10.128.0.0/9'])).status).toBe(200);
    await tryNetworks([]);
  });

  it('every change of the networks is in the audit log, made by the token or in the console', async () => {
    await allow(nodeA, true);
    expect((await setNetworks(nodeA.token, ['192.168.98.0/24', '10.24.0.0/24'])).status).toBe(200);
    const entries = async () =>
      (await asAdmin('GET', `/api/audit?node=${nodeA.id}&action=node`)).body.data as {
        action: string;
        actor: { kind: string; tokenId: number | null };
        before: Record<string, unknown> | null;
        after: Record<string, unknown> | null;
      }[];
    const [byToken, allowed] = await entries();
    expect(byToken).toMatchObject({
      action: 'node.networks',
      actor: { kind: 'node', tokenId: expect.any(Number) },
      before: { gatewayNetworks: [networkA] },
      after: { gatewayNetworks: ['192.168.98.0/24', '10.24.0.0/24'] },
    });
    expect(allowed).toMatchObject({
      action: 'node.update',
      actor: { kind: 'admin' },
      before: { allowTokenNetworks: false },
      after: { allowTokenNetworks: true },
    });
    await asAdmin('PATCH', `/api/nodes/${nodeA.id}`, { gatewayNetworks: ['192.168.98.0/24'] });
    const [inConsole] = await entries();
    expect(inConsole).toMatchObject({
      action: 'node.update',
      before: { gatewayNetworks: ['192.168.98.0/24', '10.24.0.0/24'] },
      after: { gatewayNetworks: ['192.168.98.0/24'] },
    });
  });

  it("a token's network that the gateway needs later is set aside, with the reason for the operator only", async () => {
    await allow(nodeA, true);
    expect((await setNetworks(nodeA.token, ['10.22.0.0/24', '192.168.88.0/24'])).status).toBe(200);
    const routed = () => t.fakeDataPlane.wireguard.peers.find((peer) => peer.nodeId === nodeA.id)?.allowedIps ?? [];
    expect(routed()).toEqual(expect.arrayContaining(['10.22.0.0/24', '192.168.88.0/24']));
    // The operator publishes a host the gateway reaches through its default route, inside the tenant's network.
    const wiki = await asAdmin('POST', '/api/services/1/http', {
      name: 'wiki',
      domain: 'wiki.example.test',
      backendHost: '10.22.0.8',
      backendPort: 80,
    });
    expect(wiki.status).toBe(201);
    expect(routed()).not.toContain('10.22.0.0/24');
    expect(routed()).toContain('192.168.88.0/24');
    expect((await asAdmin('GET', `/api/nodes/${nodeA.id}`)).body.applyError).toMatch(/10\.22\.0\.0\/24.*10\.22\.0\.8/);
    const seenByTenant = await call(nodeA.token, 'GET', '/api/agent/node');
    expect(seenByTenant.body.applyError).toEqual(expect.any(String));
    expect(JSON.stringify(seenByTenant.body)).not.toContain('10.22.0.8');
    const recorded = (await asAdmin('GET', `/api/audit?action=dataplane.rejected&node=${nodeA.id}`)).body.data as {
      target: { type: string; id: number };
      detail: string;
    }[];
    expect(recorded[0]).toMatchObject({
      target: { type: 'node', id: nodeA.id },
      detail: expect.stringContaining('10.22.0.8'),
    });

    // A route the host gains later: the same.
    t.fakeDataPlane.setHostNetworks(['192.168.1.0/24', '192.168.88.0/25']);
    await asAdmin('DELETE', `/api/services/1/http/${String(wiki.body.id)}`);
    expect(routed()).toContain('10.22.0.0/24');
    expect(routed()).not.toContain('192.168.88.0/24');
    // Once nothing of the gateway's is inside, it is routed again and the reason goes.
    t.fakeDataPlane.setHostNetworks(['192.168.1.0/24']);
    await asAdmin('PATCH', `/api/nodes/${nodeA.id}`, { name: `tenant-a-renamed-${String(worldsA)}` });
    expect(routed()).toEqual(expect.arrayContaining(['10.22.0.0/24', '192.168.88.0/24']));
    expect((await asAdmin('GET', `/api/nodes/${nodeA.id}`)).body.applyError).toBeNull();
  });
});

describe("a node's token never undoes the operator's decisions", () => {
  // One app and node for every case (each case makes its services fresh); the clock only moves forward.
  let clock: Date;
  beforeAll(async () => {
    clock = new Date('2031-03-01T00:00:00.000Z');
    t = await buildTestApp({ now: () => clock, env: { POSTERN_NODE_MAX_PORTS: '50' } });
    admin = await t.login();
    nodeA = (await asAdmin('POST', '/api/nodes', { name: 'tenant-a' })).body as typeof nodeA;
  });
  afterAll(() => t.cleanup());

  type Actor = 'operator' | 'token';
  type Step = [Actor, 'enable' | 'disable' | 'delete' | 'expire', number] | ['time', 'passes'];
  interface Decision {
    name: string;
    createdBy: Actor;
    /** Created with a ttl of its creator's. */
    ttl?: boolean;
    /** Created disabled (an HTTP service whose access is set before it is served). */
    createdDisabled?: boolean;
    steps: Step[];
  }

  // Every case of the matrix: who created the service, what the operator and the token decided, and what each
  // of the token's calls must answer (403: the operator's decision stands). The operator is never refused.
  const decisions: Decision[] = [
    {
      name: "the operator's service, untouched: the token may only make it stricter",
      createdBy: 'operator',
      steps: [
        ['token', 'disable', 200],
        ['token', 'enable', 200],
        ['token', 'delete', 403],
      ],
    },
    {
      name: "the operator's service, disabled by the operator",
      createdBy: 'operator',
      steps: [
        ['operator', 'disable', 200],
        ['token', 'enable', 403],
        ['token', 'disable', 200],
        ['token', 'enable', 403],
        ['token', 'delete', 403],
      ],
    },
    {
      name: "the operator's service, disabled by the token and then by the operator",
      createdBy: 'operator',
      steps: [
        ['token', 'disable', 200],
        ['operator', 'disable', 200],
        ['token', 'enable', 403],
      ],
    },
    {
      name: "the operator's service with the operator's expiry",
      createdBy: 'operator',
      steps: [
        ['operator', 'expire', 200],
        ['token', 'disable', 200],
        ['token', 'enable', 200],
        ['time', 'passes'],
        ['token', 'enable', 403],
        ['token', 'delete', 403],
      ],
    },
    {
      name: "the token's service, untouched",
      createdBy: 'token',
      steps: [
        ['token', 'disable', 200],
        ['token', 'enable', 200],
        ['token', 'delete', 204],
      ],
    },
    {
      name: "the token's service, disabled by the operator, later enabled by the operator",
      createdBy: 'token',
      steps: [
        ['operator', 'disable', 200],
        ['token', 'enable', 403],
        ['token', 'disable', 200],
        ['token', 'enable', 403],
        ['token', 'delete', 403],
        ['operator', 'enable', 200],
        ['token', 'disable', 200],
        ['token', 'enable', 200],
        ['token', 'delete', 204],
      ],
    },
    {
      name: "the token's service with the operator's expiry",
      createdBy: 'token',
      steps: [
        ['operator', 'expire', 200],
        ['token', 'delete', 403],
        ['time', 'passes'],
        ['token', 'enable', 403],
        ['token', 'delete', 403],
      ],
    },
    {
      name: "the token's web service created disabled (its access set first): its own decision to lift",
      createdBy: 'token',
      createdDisabled: true,
      steps: [
        ['token', 'enable', 200],
        ['token', 'delete', 204],
      ],
    },
    {
      name: "the operator's web service created disabled",
      createdBy: 'operator',
      createdDisabled: true,
      steps: [['token', 'enable', 403]],
    },
    {
      name: "the token's service with its own ttl: its own decision to lift",
      createdBy: 'token',
      ttl: true,
      steps: [
        ['time', 'passes'],
        ['token', 'enable', 200],
        ['token', 'delete', 204],
      ],
    },
    {
      name: "the token's service with its own ttl, replaced by the operator's expiry",
      createdBy: 'token',
      ttl: true,
      steps: [
        ['operator', 'expire', 200],
        ['time', 'passes'],
        ['token', 'enable', 403],
        ['token', 'delete', 403],
      ],
    },
  ];

  interface Seen {
    enabled: boolean;
    expiresAt: string | null;
  }

  const OPERATOR_REFUSALS: readonly MessageCode[] = [
    'service_disabled_by_operator',
    'service_expired_by_operator',
    'service_expiry_by_operator',
    'service_created_by_operator',
  ];
  const refusalsSeen = new Set<MessageCode>();

  it.each(
    decisions.map(
      (decision, i) => [decision.name, decision, decision.createdDisabled || i % 2 === 0 ? 'http' : 'tcp'] as const,
    ),
  )('%s', async (_name, decision, type) => {
    const body =
      type === 'http'
        ? { name: 'web', domain: `web-${String(decisions.indexOf(decision))}.a.example.test`, backendPort: 80 }
        : { name: 'ssh', backendPort: 22 };
    const ttl = { ...(decision.ttl ? { ttl: 3600 } : {}), ...(decision.createdDisabled ? { enabled: false } : {}) };
    const created =
      decision.createdBy === 'operator'
        ? await asAdmin('POST', `/api/services/${nodeA.id}/${type}`, { ...body, ...ttl })
        : await call(nodeA.token, 'POST', `/api/agent/services/${type}`, { ...body, ...ttl });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    const consoleUrl = `/api/services/${nodeA.id}/${type}/${id}`;
    const agentUrl = `/api/agent/services/${type}/${id}`;
    const seen = async (): Promise<Seen> => {
      const { enabled, expiresAt } = (await asAdmin('GET', consoleUrl)).body as unknown as Seen;
      return { enabled, expiresAt };
    };
    for (const step of decision.steps) {
      if (step[0] === 'time') {
        clock = new Date(clock.getTime() + 2 * 3600_000);
        await disableExpiredServices(t.deps);
        continue;
      }
      const [actor, action, status] = step;
      const before = status === 403 ? await seen() : null;
      const answer =
        action === 'expire'
          ? await asAdmin('PATCH', consoleUrl, { expiresAt: new Date(clock.getTime() + 3600_000).toISOString() })
          : actor === 'operator'
            ? await asAdmin(
                action === 'delete' ? 'DELETE' : 'PATCH',
                action === 'delete' ? consoleUrl : `${consoleUrl}/${action}`,
              )
            : await call(
                nodeA.token,
                action === 'delete' ? 'DELETE' : 'PATCH',
                action === 'delete' ? agentUrl : `${agentUrl}/${action}`,
              );
      expect(answer.status, `${actor} ${action}: ${JSON.stringify(answer.body)}`).toBe(status);
      if (status === 403) {
        expect(answer.body).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/operator/) });
        // Which of the operator's decisions refused it, for the console and the CLI (docs/api.md "Message codes").
        const messageCode = answer.body.messageCode as MessageCode;
        expect(OPERATOR_REFUSALS).toContain(messageCode);
        expect(messageText(messageCode)).toBe(answer.body.message);
        refusalsSeen.add(messageCode);
        expect(await seen(), `a refused ${action} changed nothing`).toEqual(before);
      }
    }
    // The console can still do everything.
    if ((await asAdmin('GET', consoleUrl)).status === 200) {
      expect((await asAdmin('PATCH', `${consoleUrl}/enable`)).status).toBe(200);
      expect((await asAdmin('DELETE', consoleUrl)).status).toBe(204);
    }
  });

  it('named each kind of refusal by its message code in the table above', () => {
    expect([...refusalsSeen].sort()).toEqual([...OPERATOR_REFUSALS].sort());
  });

  it("enabling never lifts the operator's expiry: the service is not served again for good", async () => {
    const created = await call(nodeA.token, 'POST', '/api/agent/services/tcp', { name: 'ssh', backendPort: 22 });
    const url = `/api/services/${nodeA.id}/tcp/${String(created.body.id)}`;
    const expiresAt = new Date(clock.getTime() + 3600_000).toISOString();
    await asAdmin('PATCH', url, { expiresAt });
    clock = new Date(clock.getTime() + 2 * 3600_000);
    await disableExpiredServices(t.deps);
    await applyChanges(t.deps);
    expect(t.fakeDataPlane.proxy.streams.size).toBe(0);
    const refused = await call(nodeA.token, 'PATCH', `/api/agent/services/tcp/${String(created.body.id)}/enable`);
    expect(refused.status).toBe(403);
    expect((await asAdmin('GET', url)).body).toMatchObject({ enabled: false, expiresAt });
    expect(t.fakeDataPlane.proxy.streams.size).toBe(0);
  });

  it('point 8: refuses an expiresAt more than 366 days ahead (the year 9999 too) on create and edit, console and token', async () => {
    const at = (days: number) => new Date(clock.getTime() + days * 86_400_000).toISOString();
    for (const expiresAt of ['9999-12-31T23:59:59Z', at(367), at(366.01)]) {
      const viaConsole = await asAdmin('POST', `/api/services/${nodeA.id}/tcp`, {
        name: 'x',
        backendPort: 1,
        expiresAt,
      });
      expect(viaConsole.status, expiresAt).toBe(422);
      expect(fieldsOf(viaConsole)).toEqual(['expiresAt']);
      const viaToken = await call(nodeA.token, 'POST', '/api/agent/services/tcp', {
        name: 'x',
        backendPort: 1,
        expiresAt,
      });
      expect(viaToken.status, expiresAt).toBe(422);
      expect(fieldsOf(viaToken)).toEqual(['expiresAt']);
    }
    const within = await asAdmin('POST', `/api/services/${nodeA.id}/tcp`, {
      name: 'x',
      backendPort: 1,
      expiresAt: at(366),
    });
    expect(within.status).toBe(201);
    const url = `/api/services/${nodeA.id}/tcp/${String(within.body.id)}`;
    const edit = await asAdmin('PATCH', url, { expiresAt: '9999-12-31T23:59:59Z' });
    expect(edit.status).toBe(422);
    expect(fieldsOf(edit)).toEqual(['expiresAt']);
    expect((await asAdmin('GET', url)).body.expiresAt).toBe(at(366));
    expect((await asAdmin('DELETE', url)).status).toBe(204);
  });
});
