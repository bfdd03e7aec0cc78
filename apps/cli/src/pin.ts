import { createHash, X509Certificate } from 'node:crypto';
import { CERTIFICATE_PIN_PATTERN } from '@postern/contract';
import { UsageError } from './errors.js';

// Certificate pins: `sha256:` and the base64 SHA-256 of the certificate's SubjectPublicKeyInfo (DER), the form
// the console prints and curl's --pinnedpubkey takes. The same 32 bytes as 64 hex digits (colons allowed, as
// `openssl dgst` or a fingerprint display prints them) are accepted and stored in the base64 form.

export const PIN_FORMAT_HINT =
  "expected sha256: and the base64 (or hex) SHA-256 of the certificate's public key (SubjectPublicKeyInfo)";

export function parsePin(text: string): string {
  const trimmed = text.trim();
  if (CERTIFICATE_PIN_PATTERN.test(trimmed)) return trimmed;
  const hex = /^sha256:((?:[0-9a-f]{2}:?){31}[0-9a-f]{2})$/i.exec(trimmed)?.[1]?.replace(/:/g, '');
  if (hex !== undefined && hex.length === 64) return `sha256:${Buffer.from(hex, 'hex').toString('base64')}`;
  throw new UsageError(`Invalid pin ${JSON.stringify(text)}: ${PIN_FORMAT_HINT}`);
}

/** The pin of a DER certificate, as the gateway presents it. */
export function pinOfCertificate(der: Buffer): string {
  const spki = new X509Certificate(der).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('base64')}`;
}
