import { eq } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateMessages, ruleMessages } from '@postern/contract';
import { certificatePems, domains } from '../db/schema.js';
import { buildRouteTable } from '../dataplane/nginx/routes.js';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';
import { makeTestCa, makeTestLeaf, uploadBody } from '../test/certificates.js';

// Certificates for real setups, from an attacker's side (docs/api.md "Certificates"): a node's token reaches none of
// it (every route is also in auth.test.ts's matrix); a certificate for another name is never served for a domain; a
// token never claims a wildcard, nor a name below someone else's; a wildcard never serves another owner's exact name.

let t: TestApp;
let admin: string;
let nodeA: { id: number; token: string };
let nodeB: { id: number; token: string };

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
const fieldOf = (answer: Answer, field: string) => answer.body.errors?.body.find((e) => e.field === field)?.message;

beforeAll(async () => {
  t = await buildTestApp();
  admin = await t.login();
  nodeA = (await asAdmin('POST', '/api/nodes', { name: 'tenant-a' })).body as typeof nodeA;
  nodeB = (await asAdmin('POST', '/api/nodes', { name: 'tenant-b' })).body as typeof nodeB;
});
afterAll(() => t.cleanup());

describe('certificates, attacked', () => {
  it("a node's token reads and changes nothing of certificates, providers or CAs", async () => {
    const domain = (await asAdmin('POST', '/api/domains', { domain: 'a-owned.example.test', ownerNodeId: nodeA.id }))
      .body as { id: number };
    const leaf = await makeTestLeaf(await makeTestCa(), ['a-owned.example.test']);
    const attempts: [Method, string, object?][] = [
      ['GET', '/api/certificates'],
      ['POST', `/api/certificates/${domain.id}/renew`],
      ['POST', `/api/domains/${domain.id}/certificate`, uploadBody(leaf)],
      ['GET', '/api/certificates/dns-providers'],
      ['POST', '/api/certificates/dns-providers', { name: 'mine', kind: 'cloudflare', secret: 'x' }],
      ['GET', '/api/certificates/authorities'],
      ['POST', '/api/certificates/authorities', { name: 'mine', directoryUrl: 'https://ca.example.test/d' }],
    ];
    // Even on the domain the admin assigned to its own node.
    for (const [method, url, body] of attempts) {
      expect((await call(nodeA.token, method, url, body)).status, `${method} ${url}`).toBe(401);
    }
    expect(
      await t.db.select().from(certificatePems).where(eq(certificatePems.domainId, domain.id)).get(),
    ).toBeUndefined();
  });

  it('a certificate for another name is refused for a domain, whoever signed it', async () => {
    const ca = await makeTestCa();
    const target = (await asAdmin('POST', '/api/domains', { domain: 'shop.example.test' })).body as { id: number };
    for (const names of [
      ['bank.example.test'],
      ['*.example.test.evil'],
      ['shop.example.test.evil'],
      ['*.shop.example.test'],
    ]) {
      const leaf = await makeTestLeaf(ca, names);
      const answer = await asAdmin('POST', `/api/domains/${target.id}/certificate`, uploadBody(leaf, ca));
      expect(answer.status, names.join()).toBe(422);
      expect(fieldOf(answer, 'certificate'), names.join()).toBe(
        certificateMessages.namesDoNotCover('shop.example.test', names),
      );
    }
    expect(
      await t.db.select().from(certificatePems).where(eq(certificatePems.domainId, target.id)).get(),
    ).toBeUndefined();
  });

  it("a node's token never claims a wildcard, nor a name below another owner's wildcard", async () => {
    const wildcard = await call(nodeB.token, 'POST', '/api/agent/services/http', {
      name: 'catch-all',
      domain: '*.tenants.example.test',
      backendPort: 80,
    });
    expect(wildcard.status).toBe(422);
    expect(fieldOf(wildcard, 'domain')).toBe(ruleMessages.domainNotYours);
    expect(await t.db.select().from(domains).where(eq(domains.domain, '*.tenants.example.test')).get()).toBeUndefined();

    // The admin's wildcard, assigned to A: B can publish nothing below it; A can, without a domain of its own.
    await asAdmin('POST', '/api/domains', { domain: '*.a-apps.example.test', ownerNodeId: nodeA.id });
    const below = await call(nodeB.token, 'POST', '/api/agent/services/http', {
      name: 'shadow',
      domain: 'login.a-apps.example.test',
      backendPort: 80,
    });
    expect(below.status).toBe(422);
    expect(fieldOf(below, 'domain')).toBe(ruleMessages.domainNotYours);
    const own = await call(nodeA.token, 'POST', '/api/agent/services/http', {
      name: 'app',
      domain: 'app.a-apps.example.test',
      backendPort: 80,
    });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    expect(
      await t.db.select().from(domains).where(eq(domains.domain, 'login.a-apps.example.test')).get(),
    ).toBeUndefined();
  });

  it("a wildcard's services never answer for another owner's exact name, nor the console's host", () => {
    const route = (serviceId: number, domain: string) => ({
      serviceId,
      nodeId: 1,
      domain,
      pathLocation: '/',
      backendProto: 'http' as const,
      backendHost: '10.0.0.1',
      backendPort: 80,
      allowedIps: [],
      blockedIps: [],
    });
    const table = buildRouteTable(
      [route(1, '*.example.test'), route(2, 'gw.example.test')],
      [
        { domainId: 1, domain: '*.example.test', ssl: 'certbot' },
        { domainId: 2, domain: 'tenant-b.example.test', ssl: 'self-signed' },
      ],
      { reservedHosts: ['gw.example.test'] },
    );
    // nginx looks the exact name up first: an empty list there (404), never the wildcard's.
    expect(table.hosts.get('tenant-b.example.test')).toBe('[]');
    expect(JSON.parse(table.hosts.get('*.example.test') ?? '[]')).toHaveLength(1);
    expect(table.rejected.get(2)).toMatch(/console/);
  });
});
