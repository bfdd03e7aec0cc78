import { X509Certificate } from 'node:crypto';
import { chown, mkdir, mkdtemp, readFile, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic, type FileOwner } from '../atomic-write.js';
import { runCommand } from '../exec.js';
import type { CertificateAdapter, CertificateInfo, DataPlaneLogger, DesiredDomain } from '../types.js';
import { assertHost, isIPv4 } from '../validate.js';
import { RENEW_BEFORE_MS } from './renewal.js';

// Certificates nginx serves are ONE combined PEM per name (key + chain) under `<dataDir>/certs/<name>.pem`,
// replaced by an atomic rename: nginx reads the file per handshake, and separate key/cert files could be read
// mid-swap as a mismatched pair.

export const FALLBACK_NAME = '_fallback';
const VALID_DAYS = 825;

/** The seam for ACME (another issue): given a domain whose mode is 'certbot', obtain and write its PEM. */
export interface CertificateIssuer {
  issue(domain: string, pemPath: string): Promise<void>;
}

export interface SelfSignedCertificatesOptions {
  certsDir: string;
  /** Name the fallback certificate is made for (the gateway's public host). */
  fallbackHost: string;
  logger: DataPlaneLogger;
  opensslBin?: string;
  now?: () => number;
  /** Owner of the PEM files: nginx workers (unprivileged) read them on each handshake. */
  owner?: FileOwner;
  /** ACME issuer; without it 'certbot' domains keep a self-signed placeholder in state 'pending'. */
  issuer?: CertificateIssuer;
}

export function pemPath(certsDir: string, name: string): string {
  return join(certsDir, `${name}.pem`);
}

/** Issuer, validity and SHA-256 fingerprint of the certificate in a combined PEM. */
export function describeCertificate(pem: string): Omit<CertificateInfo, 'state' | 'error'> & { subjectAltName: string | undefined; isSelfSigned: boolean } {
  const cert = new X509Certificate(pem);
  return {
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

/** An ECDSA P-256 self-signed certificate for `name` (CN and SAN), as one combined PEM (key first). */
export async function createSelfSignedPem(name: string, opensslBin = 'openssl'): Promise<string> {
  assertHost(name, 'certificate name');
  const san = isIPv4(name) ? `IP:${name}` : `DNS:${name}`;
  // openssl writes the key to a file; a private temp dir (0700) keeps it unreadable to others.
  const dir = await mkdtemp(join(tmpdir(), 'postern-cert-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    await runCommand(opensslBin, [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', String(VALID_DAYS),
      '-subj', `/CN=${name}`, '-addext', `subjectAltName=${san}`,
    ]);
    return `${await readFile(keyFile, 'utf8')}${await readFile(certFile, 'utf8')}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface SelfSignedCertificates extends CertificateAdapter {
  /** The certificate served for unknown SNI and the default host. */
  ensureFallback(): Promise<void>;
}

export function createSelfSignedCertificates(options: SelfSignedCertificatesOptions): SelfSignedCertificates {
  const { certsDir, logger, now = Date.now } = options;
  const infos = new Map<string, CertificateInfo>();

  /** Keeps a current certificate that covers `name` (self-signed or issued), otherwise makes a new one. */
  async function ensurePem(name: string, coveredName: string): Promise<ReturnType<typeof describeCertificate>> {
    const path = pemPath(certsDir, name);
    const existing = await readFile(path, 'utf8').catch(() => null);
    if (existing !== null) {
      try {
        const facts = describeCertificate(existing);
        const covers = facts.subjectAltName?.split(', ').some((entry) => entry === `DNS:${coveredName}` || entry.startsWith(`IP Address:${coveredName}`));
        if (covers && Date.parse(facts.notAfter ?? '') - now() > RENEW_BEFORE_MS) {
          // A file from an earlier run may belong to another worker user; nginx must be able to read it.
          if (options.owner) await chown(path, options.owner.uid, options.owner.gid);
          return facts;
        }
      } catch {
        // Unreadable or corrupt: replace it below.
      }
    }
    // 0711: workers may open a file they know the name of, nobody may list the directory.
    await mkdir(certsDir, { recursive: true, mode: 0o711 });
    const pem = await createSelfSignedPem(coveredName, options.opensslBin);
    await writeFileAtomic(path, pem, 0o600, options.owner);
    logger.info({ name: coveredName }, 'certificate: created self-signed certificate');
    return describeCertificate(pem);
  }

  return {
    async ensureFallback() {
      await ensurePem(FALLBACK_NAME, options.fallbackHost);
    },

    async ensure(domain: DesiredDomain) {
      const name = assertHost(domain.domain, 'domain');
      // Every apply ensures every domain: at 10,000 domains, re-reading each PEM would dominate the apply time.
      const known = infos.get(name);
      const fitsMode = domain.ssl === 'certbot' ? known?.state === 'pending' || known?.state === 'valid' : known?.state === 'self-signed' || known?.state === 'valid';
      if (known && fitsMode && Date.parse(known.notAfter ?? '') - now() > RENEW_BEFORE_MS) return known;
      let info: CertificateInfo;
      try {
        const facts = await ensurePem(name, name);
        const isPending = domain.ssl === 'certbot' && facts.isSelfSigned;
        info = {
          state: facts.isSelfSigned ? (isPending ? 'pending' : 'self-signed') : 'valid',
          issuer: facts.issuer, notBefore: facts.notBefore, notAfter: facts.notAfter, fingerprint: facts.fingerprint, error: null,
        };
        if (isPending && options.issuer) {
          // ACME runs in the background; nginx serves the placeholder until the issued PEM replaces it.
          const placeholder = info;
          options.issuer.issue(name, pemPath(certsDir, name)).then(async () => {
            const facts = describeCertificate(await readFile(pemPath(certsDir, name), 'utf8'));
            infos.set(name, { state: 'valid', issuer: facts.issuer, notBefore: facts.notBefore, notAfter: facts.notAfter, fingerprint: facts.fingerprint, error: null });
          }).catch((err: unknown) => {
            infos.set(name, { ...placeholder, state: 'failed', error: err instanceof Error ? err.message : String(err) });
          });
        }
      } catch (err) {
        info = { state: 'failed', issuer: null, notBefore: null, notAfter: null, fingerprint: null, error: err instanceof Error ? err.message : String(err) };
      }
      infos.set(name, info);
      return info;
    },

    async remove(domain) {
      infos.delete(domain);
      await unlink(pemPath(certsDir, assertHost(domain, 'domain'))).catch(() => undefined);
    },

    info: (domain) => infos.get(domain) ?? null,
  };
}
