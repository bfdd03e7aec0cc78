import { createHash } from 'node:crypto';

// Combined PEMs (private key first, then the chain): what nginx serves and what `certificate_pems` stores split.

/** The SHA-256 fingerprint of the PEM's first certificate, as X509Certificate's `fingerprint256` writes it. */
export function firstCertificateFingerprint(pem: string): string | null {
  const begin = '-----BEGIN CERTIFICATE-----';
  const start = pem.indexOf(begin);
  const end = pem.indexOf('-----END CERTIFICATE-----', start);
  if (start < 0 || end < 0) return null;
  const der = Buffer.from(pem.slice(start + begin.length, end), 'base64');
  return createHash('sha256')
    .update(der)
    .digest('hex')
    .toUpperCase()
    .replace(/(..)(?!$)/g, '$1:');
}
/** Where a combined PEM's private key block ends and the chain begins. */
export function splitPem(pem: string): { key: string; chain: string } | null {
  const match = /-----BEGIN ((?:EC |RSA )?PRIVATE KEY)-----[\s\S]+?-----END \1-----\n?/.exec(pem);
  if (!match) return null;
  const chain = pem.slice(0, match.index) + pem.slice(match.index + match[0].length);
  return { key: match[0].trimEnd(), chain: chain.trim() };
}

/** Key first, as the files and acme.ts write it. */
export const joinPem = (key: string, chain: string): string => `${key.trimEnd()}\n${chain.trim()}\n`;
