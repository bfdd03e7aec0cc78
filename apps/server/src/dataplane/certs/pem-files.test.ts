import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPemFiles, firstCertificateFingerprint, type RecordedFacts } from './pem-files.js';
import { createSelfSignedPem } from './self-signed.js';

// A boot at 10,000 domains reads every PEM: one whose fingerprint the store recorded is taken at its record's word
// (hashing it costs a twentieth of parsing it); any other PEM is parsed and checked as before.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'postern-pems-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('PEM files', () => {
  it("computes a PEM's fingerprint exactly as X509Certificate does (key first, then the certificate)", async () => {
    const pem = await createSelfSignedPem('a.example.test');
    expect(firstCertificateFingerprint(pem)).toBe(new X509Certificate(pem).fingerprint256);
    expect(firstCertificateFingerprint('not a pem')).toBeNull();
  });

  it('uses the recorded facts for the recorded PEM, and parses a PEM that was replaced since', async () => {
    const pem = await createSelfSignedPem('a.example.test');
    await writeFile(join(dir, 'a.example.test.pem'), pem);
    const recorded = new Map<string, RecordedFacts>([
      [
        'a.example.test',
        {
          fingerprint: new X509Certificate(pem).fingerprint256,
          issuer: 'as recorded',
          notBefore: '2026-01-01T00:00:00.000Z',
          notAfter: '2028-01-01T00:00:00.000Z',
          isSelfSigned: true,
        },
      ],
    ]);
    const pems = createPemFiles({
      certsDir: dir,
      fallbackHost: 'gw.example.test',
      recorded: (name) => recorded.get(name) ?? null,
    });
    expect(await pems.read('a.example.test')).toMatchObject({
      issuer: 'as recorded',
      notAfter: '2028-01-01T00:00:00.000Z',
      isSelfSigned: true,
    });

    // Replaced behind the store's back: the record no longer describes it.
    await writeFile(join(dir, 'a.example.test.pem'), await createSelfSignedPem('a.example.test'));
    pems.forget('a.example.test');
    expect(await pems.read('a.example.test')).toMatchObject({ issuer: 'CN=a.example.test', isSelfSigned: true });

    // A PEM for another name under this name's file is refused whatever the store says of the name.
    await writeFile(join(dir, 'a.example.test.pem'), await createSelfSignedPem('b.example.test'));
    pems.forget('a.example.test');
    expect(await pems.read('a.example.test')).toBeNull();
  });

  // The reconciler pushes a new domain's PEM as it was made (reconcile/certificates.ts): only while it is the file.
  it('hands out a first PEM kept unpushed once, and never once the file was written again or forgotten', () => {
    const pems = createPemFiles({ certsDir: dir, fallbackHost: 'gw.example.test' });
    pems.keepUnpushed('a.example.test', 'first');
    expect(pems.takeUnpushed('a.example.test')).toBe('first');
    expect(pems.takeUnpushed('a.example.test')).toBeNull();

    pems.keepUnpushed('a.example.test', 'first');
    pems.remember('a.example.test', { fingerprint: 'renewed' } as Parameters<typeof pems.remember>[1]);
    expect(pems.takeUnpushed('a.example.test')).toBeNull();

    pems.keepUnpushed('a.example.test', 'first');
    pems.forget('a.example.test');
    expect(pems.takeUnpushed('a.example.test')).toBeNull();
  });
});
