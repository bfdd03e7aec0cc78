import { X509Certificate, createHash, createPrivateKey } from 'node:crypto';
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectKeyIdentifierExtension,
  X509Certificate as ParsedCertificate,
} from '@peculiar/x509';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { holdThreadPool, withinDeadline } from '../../test/thread-pool.js';
import { createSelfSignedPem, describeCertificate } from './self-signed.js';

describe('createSelfSignedPem', () => {
  it('makes one combined PEM (key first) whose CN and SAN are the domain, ECDSA P-256', async () => {
    const pem = await createSelfSignedPem('app.example.com');
    expect(pem.indexOf('PRIVATE KEY')).toBeLessThan(pem.indexOf('CERTIFICATE'));
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe('CN=app.example.com');
    expect(cert.subjectAltName).toBe('DNS:app.example.com');
    expect(createPrivateKey(pem).asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(describeCertificate(pem)).toMatchObject({
      issuer: 'CN=app.example.com',
      isSelfSigned: true,
      fingerprint: cert.fingerprint256,
    });
  });

  it('is a server leaf valid from now for 825 days, signed by its own key, with a fresh key and serial each time', async () => {
    const before = Date.now();
    const pem = await createSelfSignedPem('*.example.com');
    const cert = new X509Certificate(pem);
    expect(cert.subjectAltName).toBe('DNS:*.example.com');
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(pem))).toBe(true);
    expect(cert.ca).toBe(false);
    // Whole seconds in the certificate: notBefore is now, to the second.
    const notBefore = new Date(cert.validFrom).getTime();
    expect(notBefore).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(notBefore).toBeLessThanOrEqual(Date.now());
    expect(new Date(cert.validTo).getTime() - notBefore).toBe(825 * 24 * 3600 * 1000);

    const parsed = new ParsedCertificate(pem.slice(pem.indexOf('-----BEGIN CERTIFICATE-----')));
    expect(parsed.getExtension(BasicConstraintsExtension)).toMatchObject({ ca: false, critical: true });
    expect(parsed.getExtension(KeyUsagesExtension)).toMatchObject({
      usages: KeyUsageFlags.digitalSignature,
      critical: true,
    });
    expect(parsed.getExtension(ExtendedKeyUsageExtension)?.usages).toEqual([ExtendedKeyUsage.serverAuth]);
    expect(parsed.serialNumber).toMatch(/^[1-7][0-9a-f]{31}$/);
    // The key identifier is SHA-1 of the public key's bits (RFC 5280, 4.2.1.2, method 1): 04 || x || y for P-256.
    const jwk = cert.publicKey.export({ format: 'jwk' });
    const bits = [Buffer.from([4]), Buffer.from(jwk.x ?? '', 'base64url'), Buffer.from(jwk.y ?? '', 'base64url')];
    const keyId = createHash('sha1').update(Buffer.concat(bits)).digest('hex');
    expect(parsed.getExtension(SubjectKeyIdentifierExtension)?.keyId).toBe(keyId);

    const again = new X509Certificate(await createSelfSignedPem('*.example.com'));
    expect(again.serialNumber).not.toBe(cert.serialNumber);
    expect(again.publicKey.equals(cert.publicKey)).toBe(false);
  });

  it("is made while every thread of libuv's pool is held (a boot's file reads, a drift check): no pool job", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'postern-self-signed-'));
    const release = holdThreadPool(dir);
    try {
      const pem = await withinDeadline(createSelfSignedPem('busy.example.com'), 10_000);
      expect(pem === 'still waiting' ? pem : new X509Certificate(pem).subject).toBe('CN=busy.example.com');
    } finally {
      await release();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names an IP address by IP', async () => {
    expect(new X509Certificate(await createSelfSignedPem('203.0.113.1')).subjectAltName).toBe('IP Address:203.0.113.1');
  });

  it('refuses a name that is not a host', async () => {
    await expect(createSelfSignedPem('../x')).rejects.toThrow('invalid certificate name');
  });

  it('refuses a name that would smuggle another name into the certificate', async () => {
    for (const name of [
      'a.test, DNS:bank.example',
      'a.test/CN=bank.example',
      '*.a.test,DNS:*.bank.example',
      'a.test\0',
    ]) {
      await expect(createSelfSignedPem(name), name).rejects.toThrow('invalid certificate name');
    }
  });
});
