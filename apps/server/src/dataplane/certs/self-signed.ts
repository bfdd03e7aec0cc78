import { X509Certificate, createHash, generateKeyPairSync, randomBytes, randomFillSync, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509CertificateGenerator,
} from '@peculiar/x509';
import type { CertificateInfo } from '../types.js';
import { isWildcardDomainName } from '@postern/contract';
import { assertHost, isIPv4 } from '../validate.js';

// Certificates are ONE combined PEM per name (key + chain) under `<dataDir>/certs/<name>.pem` (root only),
// replaced by an atomic rename. nginx's masters read them; workers get them in memory (lua/postern.lua).

export const FALLBACK_NAME = '_fallback';
const VALID_DAYS = 825;
const DAY_MS = 24 * 3600 * 1000;
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** The private key as @peculiar/x509 hands it to the provider's sign(): its algorithm gives the signature's form. */
interface SigningKey {
  algorithm: typeof ALGORITHM;
  key: KeyObject;
}

/**
 * The provider @peculiar/x509 signs and draws randomness through, on node:crypto's synchronous calls. WebCrypto (the
 * library's default) runs every generateKey, exportKey and sign as a job on libuv's 4-thread pool, where a change's
 * certificate waited behind the file reads of a boot or a drift check (makeMs 23-177 ms after a boot at 100,000); a
 * P-256 key pair and a signature on the main thread cost ~0.5 ms together at load 19 on this 2-core machine
 * (bench/README.md "certificates.ts").
 * The library encodes; only the signature is ours: SHA-256 over the to-be-signed bytes, r || s as WebCrypto gives it.
 */
const provider = {
  // Unused while the serial is given; synchronous like the rest.
  getRandomValues: (array: Uint8Array): Uint8Array => randomFillSync(array),
  subtle: {
    sign(_algorithm: unknown, signingKey: SigningKey, data: ArrayBuffer): ArrayBuffer {
      const signature = sign('sha256', Buffer.from(data), { key: signingKey.key, dsaEncoding: 'ieee-p1363' });
      return signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.byteLength);
    },
  },
} as never;

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

/**
 * An ECDSA P-256 self-signed certificate for `name` (CN and SAN), as one combined PEM (key first), valid from now for
 * VALID_DAYS. Made in-process on the main thread (node:crypto makes the key and signs, @peculiar/x509 encodes): a few
 * milliseconds and no libuv pool job, where an `openssl` process per domain cost tens. A server leaf: CA:FALSE (a CA
 * certificate served as a leaf is refused outright by some browsers), key usage digitalSignature (ECDHE-ECDSA),
 * extended key usage serverAuth.
 */
export async function createSelfSignedPem(name: string): Promise<string> {
  if (!isWildcardDomainName(name)) assertHost(name, 'certificate name');
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  // The public key's bits: the uncompressed point 04 || x || y.
  const publicKeyBits = Buffer.concat([
    Buffer.of(4),
    Buffer.from(jwk.x ?? '', 'base64url'),
    Buffer.from(jwk.y ?? '', 'base64url'),
  ]);
  const notBefore = new Date();
  const signingKey: SigningKey = { algorithm: ALGORITHM, key: privateKey };
  const cert = await X509CertificateGenerator.create(
    {
      // A random positive 16-byte serial (RFC 5280: at most 20 octets, positive).
      serialNumber: randomSerial(),
      subject: [{ CN: [name] }],
      issuer: [{ CN: [name] }],
      notBefore,
      notAfter: new Date(notBefore.getTime() + VALID_DAYS * DAY_MS),
      publicKey: publicKey.export({ type: 'spki', format: 'der' }),
      signingKey: signingKey as never,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new BasicConstraintsExtension(false, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true),
        new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth]),
        new SubjectAlternativeNameExtension([
          isIPv4(name) ? { type: 'ip', value: name } : { type: 'dns', value: name },
        ]),
        // RFC 5280's method 1: SHA-1 of the public key's bits, hashed here (the library's create() cost a sixth).
        new SubjectKeyIdentifierExtension(createHash('sha1').update(publicKeyBits).digest('hex')),
      ],
    },
    provider,
  );
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  return `${keyPem.trimEnd()}\n${cert.toString('pem')}\n`;
}

/** A random positive serial of 16 bytes, hex (RFC 5280: positive, at most 20 octets; the top byte is never 0). */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x10;
  return bytes.toString('hex');
}
