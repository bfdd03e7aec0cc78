import { eq } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPath, certificateMessages, routes, ruleMessages } from '@postern/contract';
import { certificatePems, domains } from '../db/schema.js';
import { buildRouteTable } from '../dataplane/nginx/routes.js';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';
import { makeTestCa, makeTestLeaf, uploadBody } from '../test/certificates.js';

// Certificates for real setups, from an attacker's side (docs/api.md "Certificates"): a node's token reaches none of
// it (every route is also in auth.test.ts's matrix); a certificate for another name is never served for a domain; a
// token never claims a wildcard, nor a name below someone else's; a wildcard never serves another owner's exact name;
// no GET route answers a viewer or a node's token with a provider's secret, an EAB HMAC key or an uploaded key.

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

  it("a viewer's session and a node's token find no provider credential, EAB key or uploaded key in any answer", async () => {
    const secrets = {
      tsig: 'dHNpZy1rZXktb2YtdGhlLWF0dGFjay10ZXN0',
      cloudflare: 'cf-token-of-the-attack-test',
      aws: 'AWSsecretOfTheAttackTest0123456789',
      acmeDns: 'acme-dns-password-of-the-attack-test',
      eab: 'ZWFiLWhtYWMta2V5LW9mLXRoZS1hdHRhY2stdGVzdA',
    };
    const providers = [
      {
        name: 'p-tsig',
        kind: 'rfc2136',
        server: 'ns1.example.test',
        keyName: 'k',
        algorithm: 'hmac-sha256',
        secret: secrets.tsig,
      },
      { name: 'p-cf', kind: 'cloudflare', secret: secrets.cloudflare },
      { name: 'p-aws', kind: 'route53', accessKeyId: 'AKIAATTACKTEST000', secret: secrets.aws },
      {
        name: 'p-acme-dns',
        kind: 'acme-dns',
        serverUrl: 'https://auth.example.test',
        username: 'u-1',
        subdomain: 's-1',
        secret: secrets.acmeDns,
      },
    ];
    const ids: Record<string, number> = {};
    for (const body of providers) {
      const created = await asAdmin('POST', '/api/certificates/dns-providers', body);
      expect(created.status, body.kind).toBe(201);
      ids[body.kind] = created.body.id as number;
    }
    const ca = await asAdmin('POST', '/api/certificates/authorities', {
      name: 'eab-ca',
      directoryUrl: 'https://ca.example.test/directory',
      eabKeyId: 'kid-attack',
      eabHmacKey: secrets.eab,
    });
    expect(ca.status).toBe(201);
    const name = 'own-key.example.test';
    const domain = (await asAdmin('POST', '/api/domains', { domain: name, ownerNodeId: nodeA.id })).body as {
      id: number;
    };
    const leaf = await makeTestLeaf(await makeTestCa(), [name]);
    expect((await asAdmin('POST', `/api/domains/${domain.id}/certificate`, uploadBody(leaf))).status).toBe(200);
    // The key's base64 body, one line of it, as any answer could carry it.
    const keyLines = leaf.keyPem.split('\n').filter((line) => line !== '' && !line.startsWith('-----'));
    const needles = [...Object.values(secrets), leaf.keyPem, keyLines.join(''), ...keyLines];

    // A viewer: an account of the least role, made through an invite as any account is.
    const invite = (await asAdmin('POST', '/api/invites', { username: 'viewer@example.test', role: 'viewer' }))
      .body as {
      url: string;
    };
    const token = invite.url.slice(invite.url.indexOf('#') + 1);
    const accepted = await call('', 'POST', '/api/auth/invite/accept', { token, password: 'the-viewers-password' });
    expect(accepted.status).toBe(201);
    const viewer = (
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: 'viewer@example.test', password: 'the-viewers-password' },
      })
    ).json<{ token: string }>().token;

    // Every GET route but the event streams, each :param filled with every id that could name one of them.
    const fillings: Record<string, (string | number)[]> = {
      id: [domain.id, ...Object.values(ids), ca.body.id as number, nodeA.id],
      nodeId: [nodeA.id],
      type: ['http', 'tcp'],
      domain: [name],
    };
    const urls = new Set<string>();
    for (const route of Object.values(routes)) {
      if (route.method !== 'GET' || route.path.endsWith('/stream')) continue;
      let paths: Record<string, string | number>[] = [{}];
      for (const param of route.path.match(/:[A-Za-z]+/g) ?? []) {
        const values = fillings[param.slice(1)] ?? [1];
        paths = paths.flatMap((filled) => values.map((value) => ({ ...filled, [param.slice(1)]: value })));
      }
      for (const params of paths) urls.add(buildPath(route.path, params));
    }
    let answered = 0;
    for (const url of urls) {
      for (const [who, bearer] of [
        ['viewer', viewer],
        ['node', nodeA.token],
      ] as const) {
        const response = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${bearer}` } });
        if (response.statusCode === 200) answered++;
        for (const needle of needles) expect(response.body.includes(needle), `${who} GET ${url}`).toBe(false);
      }
    }
    // The walk reached real answers (the certificates view, the providers, the audit log…), not only refusals.
    expect(answered).toBeGreaterThan(20);
  });
});
