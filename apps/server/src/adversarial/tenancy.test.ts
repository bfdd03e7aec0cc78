import { eq } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodes } from '../db/schema.js';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';

// Issue 10 ("Trust boundaries"), tenancy and input validation: one test per item of the issue, each an attack
// that worked before the fix. The details of each rule are tested beside their modules; these are the
// attacker's-eye view, kept together so they are easy to find and run:
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

beforeEach(async () => {
  t = await buildTestApp({
    env: { POSTERN_NODE_MAX_PORTS: '3', POSTERN_NODE_MAX_SERVICES: '5', POSTERN_NODE_MAX_DOMAINS: '2' },
  });
  admin = await t.login();
  nodeA = (await asAdmin('POST', '/api/nodes', { name: 'tenant-a-secret-name' })).body as typeof nodeA;
  nodeB = (await asAdmin('POST', '/api/nodes', { name: 'tenant-b' })).body as typeof nodeB;
});
afterEach(() => t.cleanup());

describe('issue 10, tenancy and input validation', () => {
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
    expect(noDomain.body.errors?.body).toEqual([{ field: 'domain', message: expect.stringContaining('--domain') }]);

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
  it("8. a node token makes its own services stricter than its domain's policy, never weaker (issue 27)", async () => {
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
