import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { writeFileAtomic } from '../atomic-write.js';
import { createTestCa, selfSignedPem, type TestCa } from '../../test/certificates.js';
import type { DataPlaneLogger } from '../types.js';
import {
  createCertificateManager,
  createMemoryCertificateStore,
  type CertificateManager,
  type CertificateManagerOptions,
} from './manager.js';
import { selfSignedRecord } from './renewal.js';
import { describeCertificate, type CertificateIssuer } from './self-signed.js';
import { waitFor } from '../../test/wait-for.js';
import { firstCertificateFingerprint } from '../../lib/pem.js';
import type { SharedCertificates } from '../../model/certificates.js';

const silent: DataPlaneLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
// Real time: self-signed certificates are dated from the real clock.
const NOW = Date.now();

let ca: TestCa;
let dataDir: string;

function fakeIssuer(outcome: { fail?: string; days?: number } = {}): CertificateIssuer & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async issue(domain, pemPath) {
      calls.push(domain);
      if (outcome.fail !== undefined) throw new Error(outcome.fail);
      // A private CA stands in for an ACME CA: it signs whatever domain it is asked for.
      await writeFileAtomic(pemPath, await ca.issue(domain, outcome.days), 0o600);
    },
  };
}

const managers: CertificateManager[] = [];

function newManager(
  issuer: CertificateIssuer,
  store = createMemoryCertificateStore(),
  over: Partial<CertificateManagerOptions> = {},
) {
  const manager = createCertificateManager({
    dataDir,
    acme: {},
    store,
    logger: silent,
    now: () => NOW,
    issuer,
    challenges: { set: () => Promise.resolve(), remove: () => Promise.resolve() },
    ...over,
  });
  manager.start();
  managers.push(manager);
  return manager;
}

const certbot = (domain: string) => ({ domainId: 1, domain, ssl: 'certbot' as const });
const selfSigned = (domain: string) => ({ domainId: 1, domain, ssl: 'self-signed' as const });
const servedCert = async (domain: string) =>
  new X509Certificate(await readFile(join(dataDir, 'certs', `${domain}.pem`)));
const servedPem = (name: string) => readFile(join(dataDir, 'certs', `${name}.pem`), 'utf8');
const notAfterOf = async (name: string) => Date.parse((await servedCert(name)).validTo);
const DAY = 24 * 3600 * 1000;

/** A self-signed PEM valid for `days` from now, as an earlier run left it on disk. */
async function writeSelfSignedPem(name: string, days: number, coveredName = name): Promise<string> {
  const pem = await selfSignedPem(coveredName, days);
  await mkdir(join(dataDir, 'certs'), { recursive: true });
  await writeFileAtomic(join(dataDir, 'certs', `${name}.pem`), pem, 0o600);
  return pem;
}

beforeAll(async () => {
  ca = await createTestCa('Test ACME CA');
  return () => ca.remove();
});
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'postern-cert-manager-'));
});
afterEach(async () => {
  for (const manager of managers.splice(0)) manager.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('certificate manager', () => {
  it('serves a self-signed certificate at once, then the CA certificate once issued, telling nginx of the latter', async () => {
    const issuer = fakeIssuer();
    const installed: string[] = [];
    const certs = newManager(issuer, createMemoryCertificateStore(), { onInstalled: (name) => installed.push(name) });
    const first = await certs.ensure(certbot('app.example.com'));
    expect(first).toMatchObject({ state: 'pending', issuer: 'CN=app.example.com', error: null });
    expect((await stat(join(dataDir, 'certs', 'app.example.com.pem'))).mode & 0o777).toBe(0o600);
    await certs.idle();
    const served = await servedCert('app.example.com');
    expect(served.issuer).toBe('CN=Test ACME CA');
    expect(certs.info('app.example.com')).toEqual({
      state: 'valid',
      issuer: 'CN=Test ACME CA',
      notBefore: new Date(served.validFrom).toISOString(),
      notAfter: new Date(served.validTo).toISOString(),
      fingerprint: served.fingerprint256,
      error: null,
      names: ['app.example.com'],
      lastAttemptAt: expect.any(String) as string,
    });
    expect(issuer.calls).toEqual(['app.example.com']);
    // The placeholder, a first PEM, is pushed by the reconciler that asked for it; the CA's replaces it: told.
    expect(installed).toEqual(['app.example.com']);
  });

  it('keeps the issued certificate when a change ensures the domain before it is stored for every gateway', async () => {
    // Several gateways: the issuer writes the issued PEM, then the issuance stores it in the database. A change in
    // between still names the stored placeholder (its desired state was read before): loading that over the file
    // threw the issued certificate away, and the next ensure ordered again (seen in e2e/system/acme-dns.test.ts).
    const issuer = fakeIssuer();
    const stored: { pem: string | null } = { pem: null };
    let isPutting = false;
    let releasePut: () => void = () => undefined;
    const putHeld = new Promise<void>((resolve) => (releasePut = resolve));
    const shared: SharedCertificates = {
      load: () => Promise.resolve(stored.pem),
      offer: (_name, pem) => Promise.resolve((stored.pem ??= pem)),
      async put(_name, pem) {
        isPutting = true;
        await putHeld;
        stored.pem = pem;
      },
    };
    const certs = newManager(issuer, createMemoryCertificateStore(), { shared });
    await certs.ensure(certbot('app.example.com'));
    const placeholder = firstCertificateFingerprint(stored.pem ?? '');
    await waitFor(() => isPutting, { timeoutMs: 10_000, what: 'the issued certificate to be stored' });

    await certs.ensure({ ...certbot('app.example.com'), pemFingerprint: placeholder });
    expect((await servedCert('app.example.com')).issuer).toBe('CN=Test ACME CA');
    releasePut();
    await certs.idle();
    await certs.ensure({
      ...certbot('app.example.com'),
      pemFingerprint: firstCertificateFingerprint(stored.pem ?? ''),
    });
    await certs.idle();
    expect((await servedCert('app.example.com')).issuer).toBe('CN=Test ACME CA');
    expect(issuer.calls).toEqual(['app.example.com']);
  });

  it('orders nothing while another gateway holds the certificates lease, and what is due once it takes it', async () => {
    const issuer = fakeIssuer();
    let isHolder = false;
    const manager = newManager(issuer, createMemoryCertificateStore(), { isHolder: () => isHolder });
    expect((await manager.ensure(certbot('app.example.com'))).state).toBe('pending');
    await manager.checkRenewals();
    expect(issuer.calls).toEqual([]);
    expect((await servedCert('app.example.com')).issuer).toBe('CN=app.example.com');

    isHolder = true; // the holder died: the data plane runs the check when this gateway takes the lease
    await manager.checkRenewals();
    expect(issuer.calls).toEqual(['app.example.com']);
    expect(manager.info('app.example.com')?.state).toBe('valid');
  });

  it('records the CA reason on failure, keeps serving self-signed and retries only after the back-off', async () => {
    let now = NOW;
    const store = createMemoryCertificateStore();
    const issuer = fakeIssuer({
      fail: 'Invalid response from http://app.example.com/.well-known/acme-challenge/x: 404',
    });
    const certs = newManager(issuer, store, { now: () => now });
    await certs.ensure(certbot('app.example.com'));
    await certs.idle();
    expect(certs.info('app.example.com')).toMatchObject({
      state: 'failed',
      error: expect.stringContaining('404') as string,
    });
    expect(store.get('app.example.com')).toMatchObject({
      failures: 1,
      nextAttemptAt: new Date(NOW + 60_000).toISOString(),
    });
    expect((await servedCert('app.example.com')).issuer).toBe('CN=app.example.com');

    await certs.ensure(certbot('app.example.com'));
    await certs.idle();
    expect(issuer.calls).toHaveLength(1); // back-off not over yet
    now += 60_000;
    await certs.ensure(certbot('app.example.com'));
    await certs.idle();
    expect(issuer.calls).toHaveLength(2);
    expect(store.get('app.example.com')).toMatchObject({ state: 'failed', failures: 2 });
  });

  it('does not re-issue a valid certificate after a restart', async () => {
    const store = createMemoryCertificateStore();
    const before = newManager(fakeIssuer(), store);
    await before.ensure(certbot('app.example.com'));
    await before.idle();
    const issued = before.info('app.example.com');

    const issuerAfterRestart = fakeIssuer();
    const after = newManager(issuerAfterRestart, store);
    expect(await after.ensure(certbot('app.example.com'))).toEqual(issued);
    await after.idle();
    expect(issuerAfterRestart.calls).toEqual([]);
  });

  it('renews when fewer than 30 days are left, and on demand', async () => {
    const store = createMemoryCertificateStore();
    const issuer = fakeIssuer({ days: 20 });
    const certs = newManager(issuer, store);
    await certs.ensure(certbot('app.example.com'));
    await certs.idle();
    const first = certs.info('app.example.com');
    expect(first?.state).toBe('valid');
    await certs.ensure(certbot('app.example.com')); // 20 days left: due
    await certs.idle();
    expect(issuer.calls).toHaveLength(2);
    const renewed = await certs.forceRenew('app.example.com');
    expect(issuer.calls).toHaveLength(3);
    expect(renewed.state).toBe('valid');
    expect(renewed.fingerprint).not.toBe(first?.fingerprint);
  });

  it('serves self-signed domains without a CA, also after switching away from certbot', async () => {
    const issuer = fakeIssuer();
    const installed: string[] = [];
    const certs = newManager(issuer, createMemoryCertificateStore(), { onInstalled: (name) => installed.push(name) });
    expect(await certs.ensure(selfSigned('intra.example.com'))).toMatchObject({
      state: 'self-signed',
      issuer: 'CN=intra.example.com',
    });
    expect(installed).toEqual([]); // a first PEM: the reconciler that asked pushes it itself
    await certs.ensure(certbot('app.example.com'));
    await certs.idle();
    installed.length = 0;
    expect(await certs.ensure(selfSigned('app.example.com'))).toMatchObject({
      state: 'self-signed',
      issuer: 'CN=app.example.com',
    });
    expect(installed).toEqual(['app.example.com']); // the CA's PEM replaced: told
    expect((await servedCert('app.example.com')).issuer).toBe('CN=app.example.com');
    expect(issuer.calls).toEqual(['app.example.com']);
    await expect(certs.forceRenew('app.example.com')).rejects.toThrow('does not use a CA-issued certificate');
  });

  it('removes the certificate, its key and its state with the domain', async () => {
    const store = createMemoryCertificateStore();
    const certs = newManager(fakeIssuer(), store);
    await certs.ensure(certbot('app.example.com'));
    await certs.idle();
    await certs.remove('app.example.com');
    await expect(stat(join(dataDir, 'certs', 'app.example.com.pem'))).rejects.toThrow('ENOENT');
    expect(certs.info('app.example.com')).toBeNull();
    expect(store.records.size).toBe(0);
  });

  // A drift check with several gateways: the file each domain serves against the certificate stored for all of them.
  it('finds the domains whose PEM is not the stored one, also a file replaced behind its back', async () => {
    const certs = newManager(fakeIssuer(), createMemoryCertificateStore());
    await certs.ensure(selfSigned('app.example.com'));
    const file = join(dataDir, 'certs', 'app.example.com.pem');
    const stored = firstCertificateFingerprint(await readFile(file, 'utf8'));
    const withStored = { ...selfSigned('app.example.com'), pemFingerprint: stored };
    expect(await certs.differsFromStored([withStored, selfSigned('other.example.com')])).toEqual([]);
    expect(await certs.differsFromStored([{ ...withStored, pemFingerprint: 'another' }])).toEqual(['app.example.com']);
    await writeFileAtomic(file, await selfSignedPem('app.example.com'), 0o600);
    expect(await certs.differsFromStored([withStored])).toEqual(['app.example.com']);
  });

  it('prunes the certificates of domains that are no longer wanted, keeping the fallback', async () => {
    const store = createMemoryCertificateStore();
    const certs = newManager(fakeIssuer(), store, { fallbackHost: 'gw.example.com' });
    await certs.ensureFallback();
    await certs.ensure(selfSigned('keep.example.com'));
    await certs.ensure(selfSigned('gone.example.com'));
    expect(await certs.pruneExcept(['keep.example.com'])).toEqual(['gone.example.com']);
    const files = (await readdir(join(dataDir, 'certs'))).sort();
    expect(files).toEqual(['_fallback.pem', 'keep.example.com.pem']);
    expect([...store.records.keys()]).toEqual(['keep.example.com']);
  });

  describe('timer', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('retries a failed issuance by itself once the back-off is over', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      let now = NOW;
      const issuer = fakeIssuer({ fail: 'rate limited' });
      const certs = newManager(issuer, createMemoryCertificateStore(), { now: () => now });
      await certs.ensure(certbot('app.example.com'));
      await certs.idle();
      expect(issuer.calls).toHaveLength(1);
      now += 60_000;
      vi.advanceTimersByTime(60_000);
      await certs.idle();
      expect(issuer.calls).toHaveLength(2);
      expect(certs.info('app.example.com')?.state).toBe('failed');
    });

    it('renews a valid certificate at the daily check once fewer than 30 days are left', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      let now = NOW;
      const issuer = fakeIssuer({ days: 45 });
      const certs = newManager(issuer, createMemoryCertificateStore(), { now: () => now });
      await certs.ensure(certbot('app.example.com'));
      await certs.idle();
      const first = certs.info('app.example.com')?.fingerprint;
      vi.advanceTimersByTime(24 * 3600 * 1000);
      await certs.idle();
      expect(issuer.calls).toHaveLength(1); // 45 days left: nothing to do
      now += 16 * 24 * 3600 * 1000;
      vi.advanceTimersByTime(24 * 3600 * 1000);
      await certs.idle();
      expect(issuer.calls).toHaveLength(2);
      expect(certs.info('app.example.com')).toMatchObject({ state: 'valid' });
      expect(certs.info('app.example.com')?.fingerprint).not.toBe(first);
    });
  });

  // The reconciler ensures a domain only when it is new or changes mode, so expiring self-signed PEMs are the
  // periodic check's job. Each test starts the clock 25 days back: a PEM valid for 20 more days is then still
  // fresh (45 days left) when ensured, and within the 30-day window once the clock reaches the present.
  describe('self-signed renewal at the periodic check', () => {
    let clock = NOW;
    beforeEach(() => {
      clock = NOW - 25 * DAY;
    });
    const newClockedManager = (
      issuer: CertificateIssuer,
      store = createMemoryCertificateStore(),
      over: Partial<CertificateManagerOptions> = {},
    ) => newManager(issuer, store, { now: () => clock, ...over });

    it('replaces a self-signed domain certificate near expiry in place, and info shows the new one', async () => {
      const old = await writeSelfSignedPem('old.example.com', 20);
      const installed: string[] = [];
      const certs = newClockedManager(fakeIssuer(), undefined, { onInstalled: (name) => installed.push(name) });
      await certs.ensure(selfSigned('old.example.com'));
      expect(await servedPem('old.example.com')).toBe(old); // 45 days left: kept

      clock = NOW;
      await certs.checkRenewals();
      expect(installed).toEqual(['old.example.com']); // a replaced PEM: told, once its file is there
      const served = await servedCert('old.example.com');
      expect(Date.parse(served.validTo)).toBeGreaterThan(NOW + 800 * DAY);
      expect(served).toMatchObject({ subject: 'CN=old.example.com', subjectAltName: 'DNS:old.example.com' });
      expect(certs.info('old.example.com')).toEqual({
        state: 'self-signed',
        issuer: 'CN=old.example.com',
        notBefore: new Date(served.validFrom).toISOString(),
        notAfter: new Date(served.validTo).toISOString(),
        fingerprint: served.fingerprint256,
        error: null,
        names: ['old.example.com'],
        lastAttemptAt: null,
      });
      expect(await readdir(join(dataDir, 'certs'))).toEqual(['old.example.com.pem']); // same path, no temp files left
    });

    it('leaves a fresh self-signed certificate untouched', async () => {
      const certs = newClockedManager(fakeIssuer());
      const before = await certs.ensure(selfSigned('fresh.example.com'));
      const pem = await servedPem('fresh.example.com');
      clock = NOW + 700 * DAY; // still more than 30 days left
      await certs.checkRenewals();
      expect(await servedPem('fresh.example.com')).toBe(pem);
      expect(certs.info('fresh.example.com')).toEqual(before);
    });

    it("renews a domain not ensured since boot from its PEM on disk, and leaves a deleted domain's leftover alone", async () => {
      const store = createMemoryCertificateStore();
      const disk = await writeSelfSignedPem('disk.example.com', 20);
      store.put('disk.example.com', selfSignedRecord(describeCertificate(disk)));
      const leftover = await writeSelfSignedPem('gone.example.com', 20); // no state: pruneExcept's to remove
      clock = NOW;
      const certs = newClockedManager(fakeIssuer(), store);
      await certs.checkRenewals();
      expect(await notAfterOf('disk.example.com')).toBeGreaterThan(NOW + 800 * DAY);
      expect(certs.info('disk.example.com')).toMatchObject({
        state: 'self-signed',
        notAfter: new Date(await notAfterOf('disk.example.com')).toISOString(),
      });
      expect(await servedPem('gone.example.com')).toBe(leftover);
      expect(store.get('gone.example.com')).toBeNull();
    });

    it("walks the PEMs for its first check only once the boot's rebuild has run", async () => {
      const store = createMemoryCertificateStore();
      const disk = await writeSelfSignedPem('disk.example.com', 20);
      store.put('disk.example.com', selfSignedRecord(describeCertificate(disk)));
      clock = NOW;
      const certs = createCertificateManager({
        dataDir,
        acme: {},
        store,
        logger: silent,
        now: () => clock,
        issuer: fakeIssuer(),
        challenges: { set: () => Promise.resolve(), remove: () => Promise.resolve() },
      });
      managers.push(certs);
      let rebuilt: () => void = () => undefined;
      certs.start(new Promise<void>((resolve) => (rebuilt = resolve)));
      await certs.idle();
      expect(await servedPem('disk.example.com')).toBe(disk);
      rebuilt();
      await waitFor(async () => (await notAfterOf('disk.example.com')) > NOW + 800 * DAY, {
        timeoutMs: 10_000,
        what: 'the renewal of disk.example.com',
      });
    });

    it('renews the fallback certificate for the public host', async () => {
      const old = await writeSelfSignedPem('_fallback', 20, 'gw.example.com');
      const certs = newClockedManager(fakeIssuer(), createMemoryCertificateStore(), { fallbackHost: 'gw.example.com' });
      await certs.ensureFallback();
      expect(await servedPem('_fallback')).toBe(old);
      clock = NOW;
      await certs.checkRenewals();
      const served = await servedCert('_fallback');
      expect(Date.parse(served.validTo)).toBeGreaterThan(NOW + 800 * DAY);
      expect(served.subjectAltName).toBe('DNS:gw.example.com');
    });

    it('renews the self-signed placeholder of a certbot domain the CA keeps refusing', async () => {
      await writeSelfSignedPem('app.example.com', 20);
      const certs = newClockedManager(fakeIssuer({ fail: 'rate limited' }));
      await certs.ensure(certbot('app.example.com'));
      await certs.idle();
      clock = NOW;
      await certs.checkRenewals();
      const served = await servedCert('app.example.com');
      expect(served.issuer).toBe('CN=app.example.com');
      expect(Date.parse(served.validTo)).toBeGreaterThan(NOW + 800 * DAY);
      expect(certs.info('app.example.com')).toMatchObject({
        state: 'failed',
        error: 'rate limited',
        notAfter: new Date(served.validTo).toISOString(),
        fingerprint: served.fingerprint256,
      });
    });

    it('leaves a CA-issued certificate near expiry to the ACME path, even when the CA fails', async () => {
      const outcome: { fail?: string; days: number } = { days: 20 };
      const issuer = fakeIssuer(outcome);
      const certs = newClockedManager(issuer);
      await certs.ensure(certbot('app.example.com'));
      await certs.idle();
      const issued = await servedPem('app.example.com');
      expect((await servedCert('app.example.com')).issuer).toBe('CN=Test ACME CA');

      outcome.fail = 'CA unreachable';
      clock = NOW; // 20 days left: due for the CA, never for a self-signed stand-in
      await certs.checkRenewals();
      expect(issuer.calls).toEqual(['app.example.com', 'app.example.com']);
      expect(await servedPem('app.example.com')).toBe(issued);
      expect(certs.info('app.example.com')).toMatchObject({
        state: 'failed',
        issuer: 'CN=Test ACME CA',
        error: 'CA unreachable',
      });
    });

    it('runs on the daily timer', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        await writeSelfSignedPem('old.example.com', 20);
        const certs = newClockedManager(fakeIssuer());
        await certs.ensure(selfSigned('old.example.com'));
        clock = NOW;
        vi.advanceTimersByTime(DAY);
        await certs.idle();
        expect(await notAfterOf('old.example.com')).toBeGreaterThan(NOW + 800 * DAY);
      } finally {
        vi.useRealTimers();
      }
    });
  });
});
