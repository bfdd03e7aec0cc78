import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { createCertificateManager, createMemoryCertificateStore } from '../dataplane/certs/manager.js';
import { createSelfSignedPem } from '../dataplane/certs/self-signed.js';
import type { DesiredDomain } from '../dataplane/types.js';
import { firstCertificateFingerprint } from '../lib/pem.js';
import { buildTestApp, TEST_STORE, type TestApp } from '../test/build-test-app.js';
import { postgresAvailable } from '../test/postgres.js';
import { openSharedChallenges } from './acme-answers.js';
import { openSharedCertificates } from './shared-certificates.js';
import { certificatePems, domains } from '../db/schema.js';

// Certificates and HTTP-01 answers live in the database: what one gateway stores, every other gateway's data plane
// loads (told by the announcement), so any of them answers the CA's challenge and serves the certificate.

const apps: TestApp[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const app of apps.reverse()) await app.cleanup();
  apps.length = 0;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

async function addDomain(t: TestApp, domain: string, ssl: 'self-signed' | 'certbot' = 'self-signed'): Promise<number> {
  const row = await t.db.write((tx) => tx.insert(domains).values({ domain, ssl }).returning().get());
  return row.id;
}

/** A certificate manager of one gateway (its own certs dir), sharing certificates through `t`'s database. */
function managerOf(t: TestApp, onInstalled?: (name: string) => void) {
  const dataDir = mkdtempSync(join(tmpdir(), 'postern-shared-'));
  dirs.push(dataDir);
  const shared = openSharedCertificates(t.db, t.deps.secrets);
  const manager = createCertificateManager({
    dataDir,
    ...(onInstalled ? { onInstalled } : {}),
    challenges: openSharedChallenges(t.db, { gatewayId: t.deps.gateway.id }),
    acme: {},
    store: createMemoryCertificateStore(),
    logger: silent,
    issuer: { issue: () => Promise.reject(new Error('no CA here')) },
    shared,
  });
  const pemOf = (name: string): string => readFileSync(join(dataDir, 'certs', `${name}.pem`), 'utf8');
  return { manager, shared, dataDir, pemOf };
}

describe.skipIf(TEST_STORE === 'postgres' || !(await postgresAvailable()))('certificates of several gateways', () => {
  test("a certificate and a challenge answer stored through A are loaded by B's data plane", async () => {
    const a = await buildTestApp({ postgres: true });
    apps.push(a);
    const b = await buildTestApp({ sameDatabaseAs: a });
    apps.push(b);
    await addDomain(a, 'shop.example.com', 'certbot');
    // B serves the domain before any certificate is stored, then loads the one stored later. (Announced until B
    // hears it: its LISTEN connection opens in the background after boot.)
    await vi.waitFor(
      async () => {
        await a.db.announce();
        expect(b.fakeDataPlane.certs.loaded.get('shop.example.com')).toBeNull();
      },
      { timeout: 2000, interval: 50 },
    );
    const pem = await createSelfSignedPem('shop.example.com');
    const shared = openSharedCertificates(a.db, a.deps.secrets);
    await shared.put('shop.example.com', pem);
    const fingerprint = firstCertificateFingerprint(pem);
    await vi.waitFor(() => expect(b.fakeDataPlane.certs.loaded.get('shop.example.com')).toBe(fingerprint), {
      timeout: 1000,
      interval: 10,
    });
    expect(await openSharedCertificates(b.db, b.deps.secrets).load('shop.example.com')).toContain(
      pem.slice(pem.indexOf('-----BEGIN CERTIFICATE')).trim(),
    );
    // The key is in the database only encrypted.
    const row = await a.db.select().from(certificatePems).get();
    expect(row?.keyEnc).not.toContain('PRIVATE KEY');
    expect(row?.chain).not.toContain('PRIVATE KEY');

    const challenges = openSharedChallenges(a.db, { gatewayId: a.deps.gateway.id });
    await challenges.set('tok_1', 'tok_1.thumbprint');
    await vi.waitFor(() => expect(b.fakeDataPlane.proxy.challenges.get('tok_1')).toBe('tok_1.thumbprint'), {
      timeout: 1000,
      interval: 10,
    });
    await challenges.remove('tok_1');
    challenges.stop();
    await vi.waitFor(() => expect(b.fakeDataPlane.proxy.challenges.size).toBe(0), { timeout: 1000, interval: 10 });
  }, 20_000);

  test('the CA is told to fetch an answer once every other live gateway said it serves it, not after a sleep', async () => {
    const a = await buildTestApp({ postgres: true });
    apps.push(a);
    const b = await buildTestApp({ sameDatabaseAs: a });
    apps.push(b);
    const late: number[][] = [];
    const challenges = openSharedChallenges(a.db, {
      gatewayId: a.deps.gateway.id,
      deadlineMs: 15_000,
      onLate: (_token, missing) => late.push(missing),
    });
    // B's LISTEN connection opens in the background after boot: a first hand-off may wait for it.
    await vi.waitFor(
      async () => {
        await a.db.announce();
        expect(b.fakeDataPlane.applyCount).toBeGreaterThan(1);
      },
      { timeout: 2000, interval: 50 },
    );
    for (const token of ['tok_a', 'tok_b', 'tok_c']) {
      await challenges.set(token, `${token}.thumbprint`);
      await challenges.served(token);
      // When the hand-off says so, B's nginx serves the answer: the CA may ask either gateway.
      expect(b.fakeDataPlane.proxy.challenges.get(token)).toBe(`${token}.thumbprint`);
    }
    // Each hand-off ended on B's acknowledgement, none on the deadline.
    expect(late).toEqual([]);

    // A live gateway that never says so (an older version, one that is dying) holds an order up to the deadline only.
    const c = await buildTestApp({ sameDatabaseAs: a });
    apps.push(c);
    await c.app.close();
    const quick = openSharedChallenges(a.db, {
      gatewayId: a.deps.gateway.id,
      deadlineMs: 300,
      onLate: (_token, missing) => late.push(missing),
    });
    await quick.set('tok_d', 'tok_d.thumbprint');
    await quick.served('tok_d');
    expect(late).toEqual([[c.deps.gateway.id]]);
    challenges.stop();
    quick.stop();
  }, 30_000);

  test('two gateways ensuring a new domain at once serve one self-signed certificate', async () => {
    const a = await buildTestApp({ postgres: true });
    apps.push(a);
    const b = await buildTestApp({ sameDatabaseAs: a });
    apps.push(b);
    const domainId = await addDomain(a, 'pinned.example.com');
    const ga = managerOf(a);
    const gb = managerOf(b);
    const desired: DesiredDomain = { domainId, domain: 'pinned.example.com', ssl: 'self-signed', pemFingerprint: null };
    const [infoA, infoB] = await Promise.all([ga.manager.ensure(desired), gb.manager.ensure(desired)]);
    expect(infoA.fingerprint).toBe(infoB.fingerprint);
    expect(firstCertificateFingerprint(ga.pemOf('pinned.example.com'))).toBe(infoA.fingerprint);
    expect(firstCertificateFingerprint(gb.pemOf('pinned.example.com'))).toBe(infoA.fingerprint);
    const stored = await a.db.select().from(certificatePems).get();
    expect(stored?.fingerprint).toBe(infoA.fingerprint);

    // A third gateway joining later serves the stored one too, not one of its own.
    const gc = managerOf(b);
    const info = await gc.manager.ensure({ ...desired, pemFingerprint: stored?.fingerprint ?? null });
    expect(info.fingerprint).toBe(infoA.fingerprint);
  }, 20_000);

  test("a new domain's certificate loaded from the store is pushed by the ensure's reconciler only; a replaced one is told of", async () => {
    const a = await buildTestApp({ postgres: true });
    apps.push(a);
    const b = await buildTestApp({ sameDatabaseAs: a });
    apps.push(b);
    const domainId = await addDomain(a, 'loaded.example.com');
    const ga = managerOf(a);
    const desired: DesiredDomain = { domainId, domain: 'loaded.example.com', ssl: 'self-signed', pemFingerprint: null };
    const made = await ga.manager.ensure(desired);
    // B has no PEM for it yet: it loads the stored one, and its reconciler (the ensure's caller) hands it to nginx.
    // Telling of it too (onInstalled: the proxy reads the file and pushes it again) pushed it twice.
    const told: string[] = [];
    const gb = managerOf(b, (name) => told.push(name));
    const loaded = await gb.manager.ensure({ ...desired, pemFingerprint: made.fingerprint });
    expect(loaded.fingerprint).toBe(made.fingerprint);
    expect(firstCertificateFingerprint(gb.pemOf('loaded.example.com'))).toBe(made.fingerprint);
    expect(told).toEqual([]);

    // Another certificate stored for it (a renewal through A): B replaces the file it serves and says so, once.
    const renewed = await createSelfSignedPem('loaded.example.com');
    await ga.shared.put('loaded.example.com', renewed);
    await gb.manager.ensure({ ...desired, pemFingerprint: firstCertificateFingerprint(renewed) });
    expect(gb.pemOf('loaded.example.com')).toBe(renewed);
    expect(told).toEqual(['loaded.example.com']);
  }, 20_000);

  test('certificates on disk from before the upgrade go into the database once and reach the other gateways', async () => {
    const a = await buildTestApp({ postgres: true });
    apps.push(a);
    const b = await buildTestApp({ sameDatabaseAs: a });
    apps.push(b);
    const domainId = await addDomain(a, 'old.example.com');
    const ga = managerOf(a);
    const before = await createSelfSignedPem('old.example.com');
    mkdirSync(join(ga.dataDir, 'certs'), { recursive: true });
    writeFileSync(join(ga.dataDir, 'certs', 'old.example.com.pem'), before, { mode: 0o600 });
    const desired: DesiredDomain = { domainId, domain: 'old.example.com', ssl: 'self-signed', pemFingerprint: null };
    const info = await ga.manager.ensure(desired);
    expect(info.fingerprint).toBe(firstCertificateFingerprint(before));
    const stored = await a.db.select().from(certificatePems).get();
    expect(stored?.fingerprint).toBe(info.fingerprint);

    const gb = managerOf(b);
    await gb.manager.ensure({ ...desired, pemFingerprint: stored?.fingerprint ?? null });
    expect(firstCertificateFingerprint(gb.pemOf('old.example.com'))).toBe(info.fingerprint);
  }, 20_000);
});
