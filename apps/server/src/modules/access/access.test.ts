import type { InjectOptions } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { desc, eq } from 'drizzle-orm';
import { accessPolicies, accessSessions } from '../../db/schema.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { createVisitorSession } from './visitor-sessions.js';

// The operator's access API (docs/ACCESS.md): every policy field refused with a field message and nothing
// saved; the rules only the server can check (a way in, a provider, someone on the lists, a domain); secrets never in
// an answer; share links and sessions.

let t: TestApp;
let admin: string;
let nodeId: number;
let serviceId: number;
let domainId: number;

type Method = NonNullable<InjectOptions['method']>;

async function call(method: Method, url: string, payload?: object) {
  const response = await t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${admin}` },
    ...(payload ? { payload } : {}),
  });
  const body = response.body
    ? response.json<Record<string, unknown> & { errors?: { body: { field: string; message: string }[] } }>()
    : {};
  return { status: response.statusCode, body, text: response.body };
}

const fields = (answer: Awaited<ReturnType<typeof call>>) => answer.body.errors?.body.map((e) => e.field) ?? [];

beforeEach(async () => {
  t = await buildTestApp();
  admin = await t.login();
  nodeId = ((await call('POST', '/api/nodes', { name: 'n' })).body.id as number) || 0;
  serviceId = (await call('POST', `/api/services/${nodeId}/http`, { name: 'web', domain: 'app.example.test' })).body
    .id as number;
  domainId = ((await call('GET', '/api/domains?search=app.example.test')).body.data as { id: number }[])[0]?.id ?? 0;
});
afterEach(() => t.cleanup());

describe('access policies', () => {
  const domainUrl = () => `/api/domains/${domainId}/access`;
  const serviceUrl = () => `/api/services/${nodeId}/http/${serviceId}/access`;

  it('are public until set, on domains and services', async () => {
    expect((await call('GET', domainUrl())).body).toMatchObject({
      domain: 'app.example.test',
      policy: { mode: 'public' },
    });
    expect((await call('GET', serviceUrl())).body).toMatchObject({
      mode: 'inherit',
      own: null,
      effective: { mode: 'public', source: 'none' },
    });
  });

  it('refuse every bad field with its message, saving nothing', async () => {
    const bad: [string, unknown][] = [
      ['mode', 'open'],
      ['providerId', 'one'],
      ['allowEmails', ['not an email']],
      ['allowEmails', 'ann@corp.test'],
      ['allowEmailDomains', ['corp']],
      ['allowGroups', ['a,b']],
      ['allowGroups', ['']],
      ['password', '12345'],
      ['password', 42],
      ['shareLinks', 'yes'],
      ['bypassPaths', ['hooks']],
      ['bypassPaths', ['/../admin']],
      ['bypassNetworks', ['10.0.0.5/8']],
      ['bypassNetworks', ['::1']],
      ['sessionSeconds', 10],
      ['sessionSeconds', 31 * 24 * 3600],
    ];
    for (const url of [domainUrl(), serviceUrl()]) {
      for (const [field, value] of bad) {
        const answer = await call('PATCH', url, { mode: 'protected', shareLinks: true, [field]: value });
        expect(answer.status, `${field} ${JSON.stringify(value)}`).toBe(422);
        expect(fields(answer), `${field} ${JSON.stringify(value)}`).toEqual([field]);
        expect(answer.body.errors?.body[0]?.message.length).toBeGreaterThan(10);
      }
    }
    expect((await call('GET', domainUrl())).body).toMatchObject({ policy: { mode: 'public' } });
    expect((await call('GET', serviceUrl())).body).toMatchObject({ mode: 'inherit' });
  });

  it('refuse what only the server can judge, saving nothing', async () => {
    const cases: [string, object, string][] = [
      [domainUrl(), { mode: 'protected' }, 'mode'],
      [domainUrl(), { mode: 'protected', providerId: 99 }, 'providerId'],
      [serviceUrl(), { mode: 'inherit', shareLinks: true }, 'shareLinks'],
    ];
    const provider = await call('POST', '/api/access/providers', {
      name: 'corp',
      issuer: 'https://idp.corp.test',
      clientId: 'postern',
    });
    cases.push([domainUrl(), { mode: 'protected', providerId: provider.body.id }, 'allowEmails']);
    for (const [url, body, field] of cases) {
      const answer = await call('PATCH', url, body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(fields(answer), JSON.stringify(body)).toEqual([field]);
    }
    // A service without a domain shares the console host's origin: it cannot be protected.
    const bare = await call('POST', `/api/services/${nodeId}/http`, { name: 'bare', pathLocation: '/bare' });
    const refused = await call('PATCH', `/api/services/${nodeId}/http/${bare.body.id as number}/access`, {
      mode: 'protected',
      shareLinks: true,
    });
    expect(refused.status).toBe(422);
    expect(fields(refused)).toEqual(['mode']);
    expect((await call('GET', domainUrl())).body).toMatchObject({ policy: { mode: 'public' } });
  });

  it('keep the password write-only and let a service override its domain', async () => {
    const set = await call('PATCH', domainUrl(), { mode: 'protected', password: 'open-sesame' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ policy: { mode: 'protected', passwordSet: true } });
    expect(set.text).not.toMatch(/open-sesame|argon2/);
    expect((await call('GET', serviceUrl())).body).toMatchObject({
      effective: { source: 'domain', passwordSet: true },
    });
    // A webhook service on the same domain is made public by the operator.
    const own = await call('PATCH', serviceUrl(), { mode: 'public' });
    expect(own.body).toMatchObject({
      mode: 'public',
      setBy: 'admin',
      effective: { mode: 'public', source: 'service' },
    });
    expect((await call('PATCH', serviceUrl(), { mode: 'inherit' })).body).toMatchObject({
      mode: 'inherit',
      effective: { source: 'domain' },
    });
  });

  it('are recorded in the audit log without the password', async () => {
    await call('PATCH', domainUrl(), { mode: 'protected', password: 'open-sesame', bypassPaths: ['/hooks'] });
    const entries = (await call('GET', '/api/audit?action=access')).body.data as {
      action: string;
      target: { type: string };
      after: Record<string, unknown>;
    }[];
    expect(entries[0]).toMatchObject({
      action: 'access.policy-update',
      target: { type: 'domain' },
      after: { policy: { mode: 'protected', passwordSet: true, bypassPaths: ['/hooks'] } },
    });
    expect(JSON.stringify(entries)).not.toContain('open-sesame');
  });
});

describe('identity providers', () => {
  it('keep the client secret to themselves and cannot be deleted while a policy uses them', async () => {
    const created = await call('POST', '/api/access/providers', {
      name: 'Keycloak',
      issuer: 'https://kc.example.test/realms/main/',
      clientId: 'postern',
      clientSecret: 'kc-client-secret',
      scopes: ['email', 'groups'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      issuer: 'https://kc.example.test/realms/main',
      hasClientSecret: true,
      scopes: ['openid', 'email', 'groups'],
      groupsClaim: 'groups',
    });
    expect(created.text).not.toContain('kc-client-secret');
    const id = created.body.id as number;
    expect(
      (await call('POST', '/api/access/providers', { name: 'Keycloak', issuer: 'https://x.test', clientId: 'c' }))
        .status,
    ).toBe(422);
    await call('PATCH', `/api/domains/${domainId}/access`, {
      mode: 'protected',
      providerId: id,
      allowEmailDomains: ['corp.test'],
    });
    const inUse = await call('DELETE', `/api/access/providers/${id}`);
    expect(inUse.status).toBe(400);
    expect(inUse.body.message).toMatch(/used by 1 access policy/);
    expect((await call('PATCH', `/api/access/providers/${id}`, { clientSecret: null })).body).toMatchObject({
      hasClientSecret: false,
      policies: 1,
    });
  });

  it('answer a failed discovery with the reason on the issuer', async () => {
    const answer = await call('POST', '/api/access/providers/discover', { issuer: 'https://127.0.0.1:1' });
    expect(answer.status).toBe(422);
    expect(fields(answer)).toEqual(['issuer']);
    expect(answer.body.errors?.body[0]?.message).toMatch(/^Discovery at https:\/\/127\.0\.0\.1:1 failed/);
  });
});

describe('share links', () => {
  const linksUrl = () => `/api/services/${nodeId}/http/${serviceId}/share-links`;

  it('exist only where the policy allows them, below the service path, with the URL shown once', async () => {
    expect((await call('POST', linksUrl(), { name: 'x' })).status).toBe(400);
    await call('PATCH', `/api/domains/${domainId}/access`, { mode: 'protected', shareLinks: true });
    const outside = await call('POST', linksUrl(), { name: 'x', pathPrefix: '/' });
    expect(outside.status).toBe(201); // the service is at /: everything is below it
    const created = await call('POST', linksUrl(), { name: 'for Bob', ttl: 3600, pathPrefix: '/reports/' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'for Bob', pathPrefix: '/reports', revoked: false });
    expect(created.body.url).toMatch(
      /^https:\/\/app\.example\.test\/_postern\/access\/share\?token=[A-Za-z0-9_-]{43}$/,
    );
    const list = await call('GET', linksUrl());
    expect(list.text).not.toContain('token');
    expect(list.body.total).toBe(2);
    const revoked = await call('PATCH', `${linksUrl()}/${created.body.id as number}/revoke`);
    expect(revoked.body).toMatchObject({ revoked: true });
    expect((await call('POST', linksUrl(), { name: 'x', ttl: 10 })).status).toBe(422);
    expect((await call('POST', linksUrl(), { name: 'x', expiresAt: '2000-01-01T00:00:00Z' })).status).toBe(422);
  });

  it('refuse a path outside the service', async () => {
    const inner = await call('POST', `/api/services/${nodeId}/http`, {
      name: 'inner',
      domain: 'app.example.test',
      pathLocation: '/app',
    });
    await call('PATCH', `/api/domains/${domainId}/access`, { mode: 'protected', shareLinks: true });
    const answer = await call('POST', `/api/services/${nodeId}/http/${inner.body.id as number}/share-links`, {
      name: 'x',
      pathPrefix: '/apps',
    });
    expect(answer.status).toBe(422);
    expect(fields(answer)).toEqual(['pathPrefix']);
  });
});

describe('what the data plane is told', () => {
  const routesOf = (host: string) =>
    JSON.parse(t.fakeDataPlane.proxy.routes.get(host) ?? '[]') as { s: number; x?: string }[];

  it('names the protecting policy on each route, pushed before the routes and removed after', async () => {
    expect(routesOf('app.example.test')[0]?.x).toBeUndefined();
    await call('PATCH', `/api/domains/${domainId}/access`, {
      mode: 'protected',
      shareLinks: true,
      bypassPaths: ['/hooks'],
    });
    const [protectedRoute] = routesOf('app.example.test');
    expect(protectedRoute?.x).toMatch(/^\d+\.[A-Za-z0-9_-]{12}$/);
    const entry = JSON.parse(t.fakeDataPlane.proxy.access.entries.get(protectedRoute?.x ?? '') ?? '{}') as object;
    expect(entry).toMatchObject({ e: 1, bp: ['/hooks'] });
    expect(t.fakeDataPlane.proxy.access.key).toMatch(/^1 [A-Za-z0-9+/]{43}=$/);
    expect(t.fakeDataPlane.proxy.accessPushes.slice(-2)).toEqual(['sync', 'prune']);
    // A changed policy is a new ref (its connections are cut); the service made public by the operator has none.
    await call('PATCH', `/api/domains/${domainId}/access`, { bypassPaths: [] });
    expect(routesOf('app.example.test')[0]?.x).not.toBe(protectedRoute?.x);
    expect(t.fakeDataPlane.proxy.access.entries.has(protectedRoute?.x ?? '')).toBe(false);
    await call('PATCH', `/api/services/${nodeId}/http/${serviceId}/access`, { mode: 'public' });
    expect(routesOf('app.example.test')[0]?.x).toBeUndefined();
  });

  it('pushes revocations, and sets aside a protected service that lost its domain rather than serve it open', async () => {
    await call('PATCH', `/api/domains/${domainId}/access`, { mode: 'protected', shareLinks: true });
    const [policy] = await t.db.select().from(accessPolicies).where(eq(accessPolicies.domainId, domainId));
    if (!policy) throw new Error('no policy');
    await createVisitorSession(t.deps, {
      policy,
      serviceId,
      host: 'app.example.test',
      method: 'share',
      address: '127.0.0.1',
    });
    const sessions = await call('GET', `/api/services/${nodeId}/http/${serviceId}/visitor-sessions`);
    const [session] = sessions.body.data as { id: number }[];
    const [row] = await t.db.select().from(accessSessions).where(eq(accessSessions.policyId, policy.id));
    expect(t.fakeDataPlane.proxy.access.revoked.has(row?.sid ?? '')).toBe(false);
    const revoked = await call(
      'PATCH',
      `/api/services/${nodeId}/http/${serviceId}/visitor-sessions/${session?.id ?? 0}/revoke`,
    );
    expect(revoked.body).toMatchObject({ revoked: true, method: 'share' });
    expect(t.fakeDataPlane.proxy.access.revoked.has(row?.sid ?? '')).toBe(true);
    // The service's own protected policy stays while the operator moves it off its domain: not served.
    await call('PATCH', `/api/services/${nodeId}/http/${serviceId}/access`, { mode: 'protected', shareLinks: true });
    const moved = await call('PATCH', `/api/services/${nodeId}/http/${serviceId}`, {
      domain: null,
      pathLocation: '/moved',
    });
    expect(moved.status).toBe(400);
    expect(moved.body).toMatchObject({ code: 'dataplane_rejected' });
    expect(moved.body.message).toMatch(/access policy needs a domain/);
    expect(t.fakeDataPlane.proxy.routes.get('')).toBeUndefined();
  });
});

describe('revocation by a policy edit', () => {
  it('ends the sessions an edit no longer lets in, and every cookie when the password changes', async () => {
    const provider = await call('POST', '/api/access/providers', {
      name: 'corp',
      issuer: 'https://idp.corp.test',
      clientId: 'postern',
    });
    await call('PATCH', `/api/domains/${domainId}/access`, {
      mode: 'protected',
      providerId: provider.body.id,
      allowEmailDomains: ['corp.test'],
      allowEmails: ['guest@partner.test'],
      allowGroups: ['ops'],
      password: 'open-sesame',
      shareLinks: true,
    });
    const [policy] = await t.db.select().from(accessPolicies).where(eq(accessPolicies.domainId, domainId));
    if (!policy) throw new Error('no policy');
    const session = async (method: 'sso' | 'password' | 'share', email: string | null, groups: string[] = []) => {
      await createVisitorSession(t.deps, {
        policy,
        serviceId,
        host: 'app.example.test',
        method,
        email,
        groups,
        address: '127.0.0.1',
      });
      const [row] = await t.db.select().from(accessSessions).orderBy(desc(accessSessions.id)).limit(1);
      return row?.sid ?? '';
    };
    const guest = await session('sso', 'guest@partner.test');
    const staff = await session('sso', 'ann@corp.test');
    const operator = await session('sso', 'op@elsewhere.test', ['ops']);
    const shared = await session('share', null);
    const typed = await session('password', null);
    const revoked = () => t.fakeDataPlane.proxy.access.revoked;

    // The guest is taken off the list and the ops group dropped: those two are out, nobody else.
    await call('PATCH', `/api/domains/${domainId}/access`, { allowEmails: [], allowGroups: [] });
    expect([guest, operator].every((sid) => revoked().has(sid))).toBe(true);
    expect([staff, shared, typed].some((sid) => revoked().has(sid))).toBe(false);
    // Share links turned off: the share-link session is out.
    await call('PATCH', `/api/domains/${domainId}/access`, { shareLinks: false });
    expect(revoked().has(shared)).toBe(true);
    // A new password: a new epoch, which no cookie made before carries.
    const epochOf = () =>
      [...t.fakeDataPlane.proxy.access.entries.values()].map((json) => (JSON.parse(json) as { e: number }).e);
    expect(epochOf()).toEqual([1]);
    await call('PATCH', `/api/domains/${domainId}/access`, { password: 'another-one' });
    expect(epochOf()).toEqual([2]);
  });
});
