import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSelfSignedCertificates, pemPath } from './self-signed.js';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('self-signed certificates', () => {
  let dir = '';
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'postern-certs-')); });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

  it('writes one private combined PEM whose CN and SAN are the domain, ECDSA P-256', async () => {
    const certs = createSelfSignedCertificates({ certsDir: dir, fallbackHost: '203.0.113.1', logger: silent });
    const info = await certs.ensure({ domainId: 1, domain: 'app.example.com', ssl: 'self-signed' });
    const pem = await readFile(pemPath(dir, 'app.example.com'), 'utf8');
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe('CN=app.example.com');
    expect(cert.subjectAltName).toBe('DNS:app.example.com');
    expect(createPrivateKey(pem).asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect((await stat(pemPath(dir, 'app.example.com'))).mode & 0o777).toBe(0o600);
    expect(info).toMatchObject({ state: 'self-signed', issuer: 'CN=app.example.com', fingerprint: cert.fingerprint256, error: null });
    expect(certs.info('app.example.com')).toEqual(info);
  });

  it('keeps a valid certificate across calls, and marks ACME domains pending until issued', async () => {
    const certs = createSelfSignedCertificates({ certsDir: dir, fallbackHost: 'gw.example.com', logger: silent });
    const first = await certs.ensure({ domainId: 1, domain: 'a.example.com', ssl: 'certbot' });
    const second = await certs.ensure({ domainId: 1, domain: 'a.example.com', ssl: 'certbot' });
    expect(second.fingerprint).toBe(first.fingerprint);
    expect(second.state).toBe('pending');
  });

  it('makes a fallback certificate for the default host, by IP', async () => {
    const certs = createSelfSignedCertificates({ certsDir: dir, fallbackHost: '203.0.113.1', logger: silent });
    await certs.ensureFallback();
    const cert = new X509Certificate(await readFile(pemPath(dir, '_fallback'), 'utf8'));
    expect(cert.subjectAltName).toBe('IP Address:203.0.113.1');
  });

  it('refuses a name that is not a host', async () => {
    const certs = createSelfSignedCertificates({ certsDir: dir, fallbackHost: 'gw.example.com', logger: silent });
    await expect(certs.ensure({ domainId: 1, domain: '../x', ssl: 'self-signed' })).rejects.toThrow('invalid domain');
  });
});
