import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../exec.js';
import type { CertificateInfo } from '../types.js';
import { isWildcardDomainName } from '@postern/contract';
import { assertHost, isIPv4 } from '../validate.js';

// Certificates are ONE combined PEM per name (key + chain) under `<dataDir>/certs/<name>.pem` (root only),
// replaced by an atomic rename. nginx's masters read them; workers get them in memory (lua/postern.lua).

export const FALLBACK_NAME = '_fallback';
const VALID_DAYS = 825;

/** The seam for ACME (another issue): given a domain whose mode is 'certbot', obtain and write its PEM. */
export interface CertificateIssuer {
  issue(domain: string, pemPath: string): Promise<void>;
}

export function pemPath(certsDir: string, name: string): string {
  return join(certsDir, `${name}.pem`);
}

/** Issuer, validity and SHA-256 fingerprint of the certificate in a combined PEM. */
export function describeCertificate(pem: string): Omit<CertificateInfo, 'state' | 'error' | 'lastAttemptAt'> & {
  subjectAltName: string | undefined;
  isSelfSigned: boolean;
} {
  const cert = new X509Certificate(pem);
  return {
    names: sanNames(cert.subjectAltName),
    issuer: cert.issuer.replace(/\n/g, ', '),
    notBefore: new Date(cert.validFrom).toISOString(),
    notAfter: new Date(cert.validTo).toISOString(),
    fingerprint: cert.fingerprint256,
    subjectAltName: cert.subjectAltName,
    // Issuer = subject: ours (a CA's leaf never names itself). Checking the signature too doubled the cost of
    // reading a PEM, which every domain pays at boot (seconds at 10,000).
    isSelfSigned: cert.issuer === cert.subject,
  };
}

/** The DNS names (and IP addresses) of a subjectAltName as X509Certificate writes it (`DNS:a, IP Address:b`). */
export function sanNames(subjectAltName: string | undefined): string[] {
  return (subjectAltName ?? '')
    .split(', ')
    .map((entry) => /^(?:DNS|IP Address):(.+)$/.exec(entry)?.[1])
    .filter((name): name is string => name !== undefined);
}

/** An ECDSA P-256 self-signed certificate for `name` (CN and SAN), as one combined PEM (key first). */
export async function createSelfSignedPem(name: string, opensslBin = 'openssl'): Promise<string> {
  if (!isWildcardDomainName(name)) assertHost(name, 'certificate name');
  const san = isIPv4(name) ? `IP:${name}` : `DNS:${name}`;
  // openssl writes the key to a file; a private temp dir (0700) keeps it unreadable to others.
  const dir = await mkdtemp(join(tmpdir(), 'postern-cert-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    await runCommand(opensslBin, [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      String(VALID_DAYS),
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=${san}`,
    ]);
    return `${await readFile(keyFile, 'utf8')}${await readFile(certFile, 'utf8')}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
