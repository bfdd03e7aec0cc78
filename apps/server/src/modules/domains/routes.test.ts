import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { Domain, HttpService, ListResponse } from '@postern/contract';
import { AppError } from '../../errors.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { createApiClient, fieldMessage, insertNode } from '../services/test-support.js';
import { createDomain } from './service.js';

let t: TestApp;
let api: ReturnType<typeof createApiClient>;

beforeEach(async () => {
  t = await buildTestApp();
  api = createApiClient(t, await t.login());
});
afterEach(async () => {
  await t.cleanup();
});

describe('creating domains', () => {
  test('answers 401 without a session token', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/domains', payload: { domain: 'example.com' } });
    expect(response.statusCode).toBe(401);
  });

  test('defaults to self-signed and shows the certificate the data plane serves', async () => {
    const { status, body } = await api<Domain>('POST', '/api/domains', { domain: 'App.Example.com' });
    expect(status).toBe(201);
    expect(body).toMatchObject({ domain: 'app.example.com', ssl: 'self-signed' });
    expect(body.certificate).toMatchObject({ state: 'self-signed' });
    expect(t.fakeDataPlane.lastState?.domains).toEqual([
      {
        domainId: body.id,
        domain: 'app.example.com',
        ssl: 'self-signed',
        pemFingerprint: null,
        challenge: 'http-01',
        dnsProviderId: null,
        acmeCaId: null,
      },
    ]);
  });

  test('a new or edited domain costs its own host and certificate, not the whole route table', async () => {
    await api('POST', '/api/domains', { domain: 'first.example.com' });
    const syncs = t.fakeDataPlane.proxy.routeSyncs;
    const patches = t.fakeDataPlane.proxy.patches.length;
    const { body } = await api<Domain>('POST', '/api/domains', { domain: 'second.example.com' });
    expect(t.fakeDataPlane.certs.info('second.example.com')).not.toBeNull();
    expect(t.fakeDataPlane.proxy.certificates.has('second.example.com')).toBe(true);
    const edited = await api('PATCH', `/api/domains/${body.id}`, { ssl: 'self-signed' });
    expect(edited.status).toBe(200);
    expect(t.fakeDataPlane.proxy.patches.length).toBe(patches + 2);
    expect(t.fakeDataPlane.proxy.routeSyncs).toBe(syncs);
  });

  test('keeps certbot, and skipValidation forces self-signed', async () => {
    expect((await api<Domain>('POST', '/api/domains', { domain: 'a.example.com', ssl: 'certbot' })).body.ssl).toBe(
      'certbot',
    );
    expect(
      (await api<Domain>('POST', '/api/domains', { domain: 'b.example.com', skipValidation: true })).body.ssl,
    ).toBe('self-signed');
    const contradiction = await api('POST', '/api/domains', {
      domain: 'c.example.com',
      ssl: 'certbot',
      skipValidation: true,
    });
    expect(contradiction.status).toBe(422);
    expect(fieldMessage(contradiction.body, 'ssl')).toBe('This field must be one of self-signed');
  });

  test('answers 422 with the spec messages', async () => {
    const missing = await api('POST', '/api/domains', {});
    expect(fieldMessage(missing.body, 'domain')).toBe('This field is required');
    const invalid = await api('POST', '/api/domains', { domain: 'not a domain' });
    expect(invalid.status).toBe(422);
    expect(fieldMessage(invalid.body, 'domain')).toBe('This field must contain a valid domain name');
    const badSsl = await api('POST', '/api/domains', { domain: 'x.example.com', ssl: 'acme' });
    expect(fieldMessage(badSsl.body, 'ssl')).toBe('This field must be one of self-signed, certbot');
  });

  test('refuses a domain that already exists, whatever its case', async () => {
    await api('POST', '/api/domains', { domain: 'example.com' });
    const again = await api('POST', '/api/domains', { domain: 'EXAMPLE.com' });
    expect(again.status).toBe(422);
    expect(fieldMessage(again.body, 'domain')).toBe('The domain example.com already exists');
  });

  test('a certbot domain that fails the injected check is refused on domain', async () => {
    const checkDomain = () =>
      Promise.resolve({ ok: false as const, message: 'example.org does not point at this gateway' });
    const attempt = createDomain(t.deps, { domain: 'example.org', ssl: 'certbot' }, { checkDomain });
    await expect(attempt).rejects.toEqual(expect.any(AppError));
    await expect(attempt).rejects.toMatchObject({
      code: 'validation',
      fields: [{ field: 'domain', message: 'example.org does not point at this gateway' }],
    });
    // skipValidation bypasses the check (and makes it self-signed).
    const skipped = await createDomain(t.deps, { domain: 'example.org', skipValidation: true }, { checkDomain });
    expect(skipped.ssl).toBe('self-signed');
  });
});

describe('reading, editing and deleting domains', () => {
  test('lists domains page by page with the total', async () => {
    for (let i = 0; i < 12; i++) await api('POST', '/api/domains', { domain: `d${i}.example.com` });
    const { status, body } = await api<ListResponse<Domain>>('GET', '/api/domains?page=2&limit=10');
    expect(status).toBe(200);
    expect(body).toMatchObject({ page: 2, limit: 10, total: 12 });
    expect(body.data.map((d) => d.domain)).toEqual(['d10.example.com', 'd11.example.com']);
    const badLimit = await api('GET', '/api/domains?limit=1000');
    expect(fieldMessage(badLimit.body, 'limit')).toBe('This field must be less than or equal to 100');
  });

  test('narrows the list to names containing the search text', async () => {
    for (const domain of ['shop.example.com', 'blog.example.com', 'shop.example.org'])
      await api('POST', '/api/domains', { domain });
    const { body } = await api<ListResponse<Domain>>('GET', '/api/domains?search=SHOP');
    expect(body.data.map((d) => d.domain)).toEqual(['shop.example.com', 'shop.example.org']);
    expect(body.total).toBe(2);
    expect((await api<ListResponse<Domain>>('GET', '/api/domains?search=%25')).body.total).toBe(0);
  });

  test('gets one by id and 404s for unknown ids', async () => {
    const { body: created } = await api<Domain>('POST', '/api/domains', { domain: 'example.com' });
    expect((await api('GET', `/api/domains/${created.id}`)).body).toEqual(created);
    expect((await api('GET', '/api/domains/9999')).status).toBe(404);
    expect((await api('PATCH', '/api/domains/9999', { ssl: 'certbot' })).status).toBe(404);
    expect((await api('DELETE', '/api/domains/9999')).status).toBe(404);
  });

  test('a rename carries the services along', async () => {
    const node = await insertNode(t.deps);
    const { body: svc } = await api<HttpService>('POST', `/api/services/${node.id}/http`, {
      name: 'web',
      domain: 'old.example.com',
      pathLocation: '/',
    });
    const { body: tcp } = await api<{ port: number }>('POST', `/api/services/${node.id}/tcp`, {
      name: 'db',
      domain: 'old.example.com',
      ssl: true,
      backendPort: 5432,
    });
    const domainId = (await api<ListResponse<Domain>>('GET', '/api/domains')).body.data[0]?.id;
    const plane = t.fakeDataPlane;
    const syncs = [plane.proxy.routeSyncs, plane.proxy.streamSyncs];
    const renamed = await api<Domain>('PATCH', `/api/domains/${domainId}`, {
      domain: 'new.example.com',
      ssl: 'certbot',
    });
    expect(renamed.body).toMatchObject({ domain: 'new.example.com', ssl: 'certbot' });
    // A scoped run: the old host and certificate go, the TLS service's instance serves the new name's certificate.
    expect([plane.proxy.routeSyncs, plane.proxy.streamSyncs]).toEqual(syncs);
    expect(plane.proxy.patches.at(-1)).toEqual({ set: ['new.example.com'], del: ['old.example.com'] });
    expect(plane.proxy.routes.has('old.example.com')).toBe(false);
    expect(plane.certs.info('old.example.com')).toBeNull();
    expect(plane.proxy.streamPatches.at(-1)).toEqual({ started: [`tcp-${tcp.port}`], stopped: [] });
    expect(plane.proxy.streams.get(`tcp-${tcp.port}`)?.certName).toBe('new.example.com');
    const moved = await api<HttpService>('GET', `/api/services/${node.id}/http/${svc.id}`);
    expect(moved.body).toMatchObject({
      domain: 'new.example.com',
      ssl: 'certbot',
      publicAccess: 'https://new.example.com/',
    });
  });

  test('a rename onto an existing domain is refused', async () => {
    await api('POST', '/api/domains', { domain: 'taken.example.com' });
    const { body } = await api<Domain>('POST', '/api/domains', { domain: 'mine.example.com' });
    const clash = await api('PATCH', `/api/domains/${body.id}`, { domain: 'taken.example.com' });
    expect(fieldMessage(clash.body, 'domain')).toBe('The domain taken.example.com already exists');
  });

  test('deleting a domain still used by services is refused with the count', async () => {
    const node = await insertNode(t.deps);
    await api('POST', `/api/services/${node.id}/http`, { name: 'a', domain: 'used.example.com', pathLocation: '/' });
    await api('POST', `/api/services/${node.id}/tcp`, { name: 'b', domain: 'used.example.com', backendPort: 22 });
    const domainId = (await api<ListResponse<Domain>>('GET', '/api/domains')).body.data[0]?.id;
    const refused = await api('DELETE', `/api/domains/${domainId}`);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      message: 'The domain used.example.com is used by 2 services. Delete them or move them to another domain first.',
      code: 'bad_request',
    });
  });

  test('deleting an unused domain removes it from the API and the data plane', async () => {
    const { body } = await api<Domain>('POST', '/api/domains', { domain: 'gone.example.com' });
    expect(t.fakeDataPlane.certs.info('gone.example.com')).not.toBeNull();
    const syncs = t.fakeDataPlane.proxy.routeSyncs;
    expect((await api('DELETE', `/api/domains/${body.id}`)).status).toBe(204);
    expect((await api('GET', `/api/domains/${body.id}`)).status).toBe(404);
    expect(t.fakeDataPlane.lastState?.domains).toEqual([]);
    // A scoped run: its certificate goes, nothing else is pushed.
    expect(t.fakeDataPlane.certs.info('gone.example.com')).toBeNull();
    expect(t.fakeDataPlane.proxy.certificates.has('gone.example.com')).toBe(false);
    expect(t.fakeDataPlane.proxy.routeSyncs).toBe(syncs);
  });
});

describe('domain owners', () => {
  test("a domain is the admin's unless assigned to a node; the answer names the owner", async () => {
    const node = await insertNode(t.deps, { name: 'office' });
    const plain = await api<Domain>('POST', '/api/domains', { domain: 'plain.example.com' });
    expect(plain.body).toMatchObject({ ownerNodeId: null, ownerNodeName: null });
    const owned = await api<Domain>('POST', '/api/domains', { domain: 'owned.example.com', ownerNodeId: node.id });
    expect(owned.status).toBe(201);
    expect(owned.body).toMatchObject({ ownerNodeId: node.id, ownerNodeName: 'office' });
    const list = await api<ListResponse<Domain>>('GET', '/api/domains');
    expect(list.body.data.map((d) => [d.domain, d.ownerNodeName])).toEqual([
      ['plain.example.com', null],
      ['owned.example.com', 'office'],
    ]);
    expect((await api<Domain>('GET', `/api/domains/${owned.body.id}`)).body.ownerNodeName).toBe('office');
  });

  test('the owner changes with PATCH, stays when omitted, and returns to the admin with null', async () => {
    const node = await insertNode(t.deps, { name: 'office' });
    const { body } = await api<Domain>('POST', '/api/domains', { domain: 'x.example.com' });
    expect((await api<Domain>('PATCH', `/api/domains/${body.id}`, { ownerNodeId: node.id })).body.ownerNodeId).toBe(
      node.id,
    );
    expect((await api<Domain>('PATCH', `/api/domains/${body.id}`, { ssl: 'certbot' })).body).toMatchObject({
      ownerNodeId: node.id,
      ssl: 'certbot',
    });
    expect((await api<Domain>('PATCH', `/api/domains/${body.id}`, { ownerNodeId: null })).body.ownerNodeId).toBeNull();
  });

  test('refuses an unknown node and the local node as owner', async () => {
    const unknown = await api('POST', '/api/domains', { domain: 'x.example.com', ownerNodeId: 999 });
    expect(unknown.status).toBe(422);
    expect(fieldMessage(unknown.body, 'ownerNodeId')).toBe('This node does not exist');
    const local = await api('POST', '/api/domains', { domain: 'x.example.com', ownerNodeId: 1 });
    expect(fieldMessage(local.body, 'ownerNodeId')).toBe('The local node cannot own domains');
    const { body } = await api<Domain>('POST', '/api/domains', { domain: 'y.example.com' });
    expect(fieldMessage((await api('PATCH', `/api/domains/${body.id}`, { ownerNodeId: 1 })).body, 'ownerNodeId')).toBe(
      'The local node cannot own domains',
    );
    expect((await api<ListResponse<Domain>>('GET', '/api/domains')).body.total).toBe(1);
  });

  test('deleting a node hands its domains back to the admin', async () => {
    const created = await api<{ id: number }>('POST', '/api/nodes', { name: 'leaving' });
    const { body } = await api<Domain>('POST', '/api/domains', {
      domain: 'kept.example.com',
      ownerNodeId: created.body.id,
    });
    expect((await api('DELETE', `/api/nodes/${created.body.id}`)).status).toBe(204);
    expect((await api<Domain>('GET', `/api/domains/${body.id}`)).body).toMatchObject({
      domain: 'kept.example.com',
      ownerNodeId: null,
      ownerNodeName: null,
    });
  });

  test("the console's host name is no domain entry, whatever its case", async () => {
    for (const domain of ['gateway.test', 'GATEWAY.test']) {
      const refused = await api('POST', '/api/domains', { domain });
      expect(refused.status).toBe(422);
      expect(fieldMessage(refused.body, 'domain')).toBe("This field must not be the console's host name");
    }
    const { body } = await api<Domain>('POST', '/api/domains', { domain: 'other.example.com' });
    expect(
      fieldMessage((await api('PATCH', `/api/domains/${body.id}`, { domain: 'gateway.test' })).body, 'domain'),
    ).toBe("This field must not be the console's host name");
  });
});
