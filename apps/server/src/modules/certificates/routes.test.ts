import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { certificateMessages, type AcmeCa, type DnsProvider, type Domain } from '@postern/contract';
import { acmeCas, certificatePems, dnsProviders, domains } from '../../db/schema.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { makeTestCa, makeTestLeaf, uploadBody, type TestCertificate } from '../../test/certificates.js';
import { createApiClient, fieldMessage } from '../services/test-support.js';

// Certificates for real setups (docs/api.md "Certificates"): an operator's own certificate (each refusal, and the key
// never answered), DNS providers and certificate authorities (their secrets never answered), wildcard domains' rules.
// One app for the file: each test names domains of its own.

let t: TestApp;
let api: ReturnType<typeof createApiClient>;
let ca: TestCertificate;

beforeAll(async () => {
  t = await buildTestApp();
  api = createApiClient(t, await t.login());
  ca = await makeTestCa();
});
afterAll(async () => {
  await t.cleanup();
});

async function newDomain(domain: string, extra: Record<string, unknown> = {}): Promise<Domain> {
  const { status, body } = await api<Domain>('POST', '/api/domains', { domain, ...extra });
  expect(status, JSON.stringify(body)).toBe(201);
  return body;
}

const DAY_MS = 24 * 3600 * 1000;

describe('uploading your own certificate', () => {
  test('serves a checked chain and key for the domain, and never answers or stores the key in the clear', async () => {
    const domain = await newDomain('own.example.com');
    const leaf = await makeTestLeaf(ca, ['own.example.com', 'www.own.example.com']);
    const { status, body } = await api<Domain>('POST', `/api/domains/${domain.id}/certificate`, uploadBody(leaf, ca));
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ id: domain.id, ssl: 'uploaded' });
    const keyBody = leaf.keyPem.split('\n')[1] ?? '';
    expect(keyBody.length).toBeGreaterThan(20);
    expect(JSON.stringify(body)).not.toContain(keyBody);
    expect(JSON.stringify((await api('GET', `/api/domains/${domain.id}`)).body)).not.toContain(keyBody);
    expect(JSON.stringify((await api('GET', '/api/certificates')).body)).not.toContain(keyBody);

    // Stored for every gateway: the chain as sent, the key encrypted with the secret key.
    const row = await t.db.select().from(certificatePems).where(eq(certificatePems.domainId, domain.id)).get();
    expect(row?.chain).toContain(leaf.pem.split('\n')[1]);
    expect(row?.chain).toContain(ca.pem.split('\n')[1]);
    expect(row?.keyEnc).not.toContain(keyBody);
    expect(t.deps.secrets.decrypt(row?.keyEnc ?? '')).toContain('PRIVATE KEY');
    expect(t.fakeDataPlane.lastState?.domains.find((d) => d.domainId === domain.id)).toMatchObject({
      ssl: 'uploaded',
      pemFingerprint: row?.fingerprint,
    });

    // The certificates view names it as uploaded; "renew now" is refused (no CA renews it).
    const view = (await api<{ domain: string; method: string }[]>('GET', '/api/certificates')).body;
    expect(view.find((c) => c.domain === 'own.example.com')).toMatchObject({ method: 'uploaded' });
    const renew = await api('POST', `/api/certificates/${domain.id}/renew`);
    expect(renew).toMatchObject({ status: 400, body: { message: certificateMessages.renewNotAcme } });
  });

  test('takes a wildcard certificate for a name it covers', async () => {
    const domain = await newDomain('shop.wild.example.com');
    const leaf = await makeTestLeaf(ca, ['*.wild.example.com']);
    const { status } = await api('POST', `/api/domains/${domain.id}/certificate`, uploadBody(leaf, ca));
    expect(status).toBe(200);
  });

  test('refuses, with the field and what to do, and changes nothing', async () => {
    const domain = await newDomain('checked.example.com');
    const leaf = await makeTestLeaf(ca, ['checked.example.com']);
    const other = await makeTestLeaf(ca, ['other.example.com']);
    const otherCa = await makeTestCa('Another CA');
    const signedByOther = await makeTestLeaf(otherCa, ['checked.example.com']);
    const expired = await makeTestLeaf(ca, ['checked.example.com'], {
      notBefore: new Date(Date.now() - 100 * DAY_MS),
      notAfter: new Date(Date.now() - DAY_MS),
    });
    const future = await makeTestLeaf(ca, ['checked.example.com'], {
      notBefore: new Date(Date.now() + 10 * DAY_MS),
      notAfter: new Date(Date.now() + 100 * DAY_MS),
    });
    const belowOnly = await makeTestLeaf(ca, ['*.checked.example.com']);
    const cases: [string, { certificate: string; privateKey: string }, string, string | RegExp][] = [
      [
        'a key of another certificate',
        { ...uploadBody(leaf, ca), privateKey: other.keyPem },
        'privateKey',
        certificateMessages.keyMismatch,
      ],
      [
        'a certificate for another domain',
        uploadBody(other, ca),
        'certificate',
        certificateMessages.namesDoNotCover('checked.example.com', ['other.example.com']),
      ],
      [
        'a wildcard, which does not cover its apex',
        uploadBody(belowOnly, ca),
        'certificate',
        /not for checked\.example\.com/,
      ],
      [
        'the chain in the wrong order',
        { certificate: [ca.pem, leaf.pem].join('\n'), privateKey: ca.keyPem },
        'certificate',
        certificateMessages.chainOrder(0),
      ],
      [
        'an issuer that did not sign it',
        uploadBody(signedByOther, ca),
        'certificate',
        certificateMessages.chainOrder(0),
      ],
      ['an expired certificate', uploadBody(expired, ca), 'certificate', /expired on/],
      ['a certificate not valid yet', uploadBody(future, ca), 'certificate', /not valid before/],
      [
        'no PEM at all',
        { certificate: 'hello', privateKey: 'world' },
        'certificate',
        certificateMessages.certificatePem,
      ],
      [
        'a key that is no key',
        { certificate: leaf.pem, privateKey: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----' },
        'privateKey',
        certificateMessages.privateKeyPem,
      ],
    ];
    for (const [what, body, field, message] of cases) {
      const answer = await api('POST', `/api/domains/${domain.id}/certificate`, body);
      expect(answer.status, what).toBe(422);
      const said = fieldMessage(answer.body, field);
      if (typeof message === 'string') expect(said, what).toBe(message);
      else expect(said, what).toMatch(message);
    }
    expect((await api<Domain>('GET', `/api/domains/${domain.id}`)).body.ssl).toBe('self-signed');
    expect(
      await t.db.select().from(certificatePems).where(eq(certificatePems.domainId, domain.id)).get(),
    ).toBeUndefined();
  });

  test('switching to uploaded needs an upload first; switching away lets the CA or a self-signed one take over', async () => {
    const domain = await newDomain('switch.example.com');
    const early = await api('PATCH', `/api/domains/${domain.id}`, { ssl: 'uploaded' });
    expect(early.status).toBe(422);
    expect(fieldMessage(early.body, 'ssl')).toBe(certificateMessages.uploadFirst);
    const leaf = await makeTestLeaf(ca, ['switch.example.com']);
    expect((await api('POST', `/api/domains/${domain.id}/certificate`, uploadBody(leaf, ca))).status).toBe(200);
    const back = await api<Domain>('PATCH', `/api/domains/${domain.id}`, { ssl: 'self-signed' });
    expect(back).toMatchObject({ status: 200, body: { ssl: 'self-signed' } });
  });

  test('answers 404 for a domain that does not exist', async () => {
    const leaf = await makeTestLeaf(ca, ['nowhere.example.com']);
    expect((await api('POST', '/api/domains/999999/certificate', uploadBody(leaf, ca))).status).toBe(404);
  });
});

describe('the certificates view and "renew now"', () => {
  test('lists every domain with how its certificate is obtained; renews only what a CA issues', async () => {
    const provider = (
      await api<DnsProvider>('POST', '/api/certificates/dns-providers', {
        name: 'cf-view',
        kind: 'cloudflare',
        secret: 't',
      })
    ).body;
    const dns = await newDomain('*.view.example.com', {
      ssl: 'certbot',
      challenge: 'dns-01',
      dnsProviderId: provider.id,
    });
    const http = await newDomain('http.view.example.com', { ssl: 'certbot' });
    const view = (
      await api<{ domain: string; method: string; dnsProviderName: string | null }[]>('GET', '/api/certificates')
    ).body;
    expect(view.find((c) => c.domain === '*.view.example.com')).toMatchObject({
      method: 'dns-01',
      dnsProviderName: 'cf-view',
    });
    expect(view.find((c) => c.domain === 'http.view.example.com')).toMatchObject({
      method: 'http-01',
      dnsProviderName: null,
    });
    for (const id of [dns.id, http.id]) {
      const renewed = await api<{ certificate: { state: string } | null }>('POST', `/api/certificates/${id}/renew`);
      expect(renewed.status).toBe(200);
      expect(renewed.body.certificate?.state ?? 'pending').toBe('pending');
    }
    expect((await api('POST', '/api/certificates/999999/renew')).status).toBe(404);
  });
});

describe('DNS providers and certificate authorities', () => {
  test('keep their secrets: stored encrypted, never answered', async () => {
    const created = await api<DnsProvider>('POST', '/api/certificates/dns-providers', {
      name: 'bind',
      kind: 'rfc2136',
      server: '192.0.2.53',
      keyName: 'postern-key',
      algorithm: 'hmac-sha256',
      secret: 'c2VjcmV0LXRzaWcta2V5LXZhbHVl',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ kind: 'rfc2136', server: '192.0.2.53', hasSecret: true, domains: 0 });
    const everything = JSON.stringify([created.body, (await api('GET', '/api/certificates/dns-providers')).body]);
    expect(everything).not.toContain('c2VjcmV0LXRzaWcta2V5LXZhbHVl');
    const row = await t.db.select().from(dnsProviders).where(eq(dnsProviders.id, created.body.id)).get();
    expect(row?.secretEnc).not.toContain('c2VjcmV0');
    expect(t.deps.secrets.decrypt(row?.secretEnc ?? '')).toBe('c2VjcmV0LXRzaWcta2V5LXZhbHVl');

    const authority = await api<AcmeCa>('POST', '/api/certificates/authorities', {
      name: 'ZeroSSL',
      directoryUrl: 'https://acme.zerossl.com/v2/DV90',
      eabKeyId: 'kid-1',
      eabHmacKey: 'aG1hYy1rZXktb2YtdGhlLWFjY291bnQ',
    });
    expect(authority.status, JSON.stringify(authority.body)).toBe(201);
    expect(authority.body).toMatchObject({ eabKeyId: 'kid-1', hasEabHmacKey: true, isDefault: false });
    const cas = JSON.stringify([authority.body, (await api('GET', '/api/certificates/authorities')).body]);
    expect(cas).not.toContain('aG1hYy1rZXk');
    const caRow = await t.db.select().from(acmeCas).where(eq(acmeCas.id, authority.body.id)).get();
    expect(caRow?.eabHmacEnc).not.toContain('aG1hYy1rZXk');
  });

  test('refuse a provider without what its kind needs, a half EAB pair, and a secret with a line break', async () => {
    const missing = await api('POST', '/api/certificates/dns-providers', { name: 'x', kind: 'rfc2136', secret: 'k' });
    expect(missing.status).toBe(422);
    expect(fieldMessage(missing.body, 'server')).toBeDefined();
    expect(fieldMessage(missing.body, 'keyName')).toBeDefined();
    const injected = await api('POST', '/api/certificates/dns-providers', {
      name: 'y',
      kind: 'cloudflare',
      secret: 'token\nupdate add evil.example.com 60 A 192.0.2.1',
    });
    expect(injected.status).toBe(422);
    expect(fieldMessage(injected.body, 'secret')).toBeDefined();
    const half = await api('POST', '/api/certificates/authorities', {
      name: 'half',
      directoryUrl: 'https://ca.example.test/directory',
      eabKeyId: 'kid',
    });
    expect(half.status).toBe(422);
    expect(fieldMessage(half.body, 'eabHmacKey')).toBe(certificateMessages.eabPair);
  });

  test('one default CA at most; a provider or CA a domain uses cannot be deleted', async () => {
    const first = (
      await api<AcmeCa>('POST', '/api/certificates/authorities', {
        name: 'one',
        directoryUrl: 'https://one.example.test/dir',
        isDefault: true,
      })
    ).body;
    const second = (
      await api<AcmeCa>('POST', '/api/certificates/authorities', {
        name: 'two',
        directoryUrl: 'https://two.example.test/dir',
        isDefault: true,
      })
    ).body;
    const list = (await api<AcmeCa[]>('GET', '/api/certificates/authorities')).body;
    expect(list.filter((c) => c.isDefault).map((c) => c.id)).toEqual([second.id]);

    const provider = (
      await api<DnsProvider>('POST', '/api/certificates/dns-providers', {
        name: 'cf-used',
        kind: 'cloudflare',
        secret: 'token',
      })
    ).body;
    await newDomain('*.used.example.com', {
      ssl: 'certbot',
      challenge: 'dns-01',
      dnsProviderId: provider.id,
      acmeCaId: first.id,
    });
    const refusedProvider = await api('DELETE', `/api/certificates/dns-providers/${provider.id}`);
    expect(refusedProvider).toMatchObject({
      status: 400,
      body: { message: certificateMessages.providerInUse('cf-used', 1) },
    });
    const refusedCa = await api('DELETE', `/api/certificates/authorities/${first.id}`);
    expect(refusedCa).toMatchObject({ status: 400, body: { message: certificateMessages.caInUse('one', 1) } });
    expect(await t.db.select().from(dnsProviders).where(eq(dnsProviders.id, provider.id)).get()).toBeDefined();
    expect((await api('DELETE', `/api/certificates/authorities/${second.id}`)).status).toBe(204);
  });
});

describe('wildcard domains', () => {
  test('take a DNS challenge with a provider, or a self-signed certificate; never *.com or a * inside', async () => {
    const needsDns = await api('POST', '/api/domains', { domain: '*.w1.example.com', ssl: 'certbot' });
    expect(needsDns.status).toBe(422);
    expect(fieldMessage(needsDns.body, 'challenge')).toBe(certificateMessages.wildcardNeedsDns);
    const needsProvider = await api('POST', '/api/domains', {
      domain: '*.w1.example.com',
      ssl: 'certbot',
      challenge: 'dns-01',
    });
    expect(needsProvider.status).toBe(422);
    expect(fieldMessage(needsProvider.body, 'dnsProviderId')).toBe(certificateMessages.dnsNeedsProvider);
    const noProvider = await api('POST', '/api/domains', {
      domain: '*.w1.example.com',
      ssl: 'certbot',
      challenge: 'dns-01',
      dnsProviderId: 999999,
    });
    expect(fieldMessage(noProvider.body, 'dnsProviderId')).toBe(certificateMessages.providerNotFound);
    for (const bad of ['*.com', 'a.*.example.com', '**.example.com', '*example.com', '*.*.example.com']) {
      const answer = await api('POST', '/api/domains', { domain: bad });
      expect(answer.status, bad).toBe(422);
      expect(fieldMessage(answer.body, 'domain'), bad).toBeDefined();
    }
    const selfSigned = await newDomain('*.W2.example.com');
    expect(selfSigned).toMatchObject({ domain: '*.w2.example.com', ssl: 'self-signed' });
    expect(await t.db.select().from(domains).where(eq(domains.domain, '*.w1.example.com')).get()).toBeUndefined();
  });

  test("the admin's web service on a name below a wildcard is served under it, with no domain of its own", async () => {
    await newDomain('*.apps.example.com');
    const node = (await api<{ id: number }>('POST', '/api/nodes', { name: 'wild-node' })).body;
    const created = await api('POST', `/api/services/${node.id}/http`, {
      name: 'app',
      domain: 'app.apps.example.com',
      backendHost: '10.0.0.5',
      backendPort: 80,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(await t.db.select().from(domains).where(eq(domains.domain, 'app.apps.example.com')).get()).toBeUndefined();
    // Its wildcard cannot go while the service lives under it.
    const wildcard = await t.db.select().from(domains).where(eq(domains.domain, '*.apps.example.com')).get();
    expect((await api('DELETE', `/api/domains/${wildcard?.id ?? 0}`)).status).toBe(400);
  });
});
