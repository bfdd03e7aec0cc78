import { X509Certificate, createPrivateKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
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

  it('names an IP address by IP', async () => {
    expect(new X509Certificate(await createSelfSignedPem('203.0.113.1')).subjectAltName).toBe('IP Address:203.0.113.1');
  });

  it('refuses a name that is not a host', async () => {
    await expect(createSelfSignedPem('../x')).rejects.toThrow('invalid certificate name');
  });
});
