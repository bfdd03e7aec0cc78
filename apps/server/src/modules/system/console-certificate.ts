import { createHash, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SystemInfo } from '@postern/contract';

// The certificate nginx serves on the console's host (POSTERN_PUBLIC_HOST): the data plane's fallback certificate,
// one combined PEM (key first, then the chain) at <dataDir>/certs/_fallback.pem. Only the certificate is read
// from it; the key never leaves this function.

export type ConsoleCertificate = NonNullable<SystemInfo['certificate']>;

export function consoleCertificatePath(dataDir: string): string {
  return join(dataDir, 'certs', '_fallback.pem');
}

/** `sha256:<base64 of SHA-256(SubjectPublicKeyInfo DER)>`, what `postern connect --pin` takes. */
export function certificatePin(certificate: X509Certificate): string {
  const spki = certificate.publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('base64')}`;
}

/** The console host's certificate and its pin; null when there is none (data plane off, not created yet). */
export async function readConsoleCertificate(dataDir: string): Promise<ConsoleCertificate | null> {
  let pem: string;
  try {
    pem = await readFile(consoleCertificatePath(dataDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  // X509Certificate takes the first CERTIFICATE block (the leaf) and skips the key before it.
  const certificate = new X509Certificate(pem);
  // Self-signed: it names itself as issuer and its own key signed it. Not checkIssued(): OpenSSL's check also wants
  // the keyCertSign key usage, which a server leaf (the gateway's own, CA:FALSE) does not carry.
  const selfSigned = certificate.issuer === certificate.subject && certificate.verify(certificate.publicKey);
  return { selfSigned, pin: certificatePin(certificate) };
}

/** `https://<POSTERN_PUBLIC_HOST>`, with the port when it is not HTTPS's default. */
export function consolePublicUrl(config: { publicHost: string; httpsPort: number }): string {
  return `https://${config.publicHost}${config.httpsPort === 443 ? '' : `:${config.httpsPort}`}`;
}
