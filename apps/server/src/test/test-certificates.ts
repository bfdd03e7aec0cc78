import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

// Certificates made in-process for tests of uploaded certificates (a CA, certificates it signs, their keys as PEM):
// ECDSA P-256 through WebCrypto, a few milliseconds each.

// Node's WebCrypto is the one the library expects; its types come from the DOM library, which this package leaves out.
x509.cryptoProvider.set(webcrypto as never);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;

export interface TestCertificate {
  cert: x509.X509Certificate;
  keys: webcrypto.CryptoKeyPair;
  /** The certificate as PEM. */
  pem: string;
  /** Its private key as unencrypted PKCS#8 PEM. */
  keyPem: string;
}

let serial = 1;

async function keyPemOf(keys: webcrypto.CryptoKeyPair): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function newKeys(): Promise<webcrypto.CryptoKeyPair> {
  return await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
}

/** A self-signed CA certificate named `name`, valid from yesterday for a year. */
export async function makeTestCa(name = 'Postern Test CA'): Promise<TestCertificate> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: String(serial++).padStart(2, '0'),
    name: `CN=${name}`,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 365 * DAY_MS),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  return { cert, keys, pem: cert.toString('pem'), keyPem: await keyPemOf(keys) };
}

/** A server certificate for `names` signed by `issuer`; validity as given (default: from yesterday for 90 days). */
export async function makeTestLeaf(
  issuer: TestCertificate,
  names: readonly string[],
  validity: { notBefore?: Date; notAfter?: Date } = {},
): Promise<TestCertificate> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: String(serial++).padStart(2, '0'),
    subject: `CN=${names[0] ?? 'no-name'}`,
    issuer: issuer.cert.subject,
    notBefore: validity.notBefore ?? new Date(Date.now() - DAY_MS),
    notAfter: validity.notAfter ?? new Date(Date.now() + 90 * DAY_MS),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value }))),
    ],
  });
  return { cert, keys, pem: cert.toString('pem'), keyPem: await keyPemOf(keys) };
}

/** The body of an upload: the leaf, then its issuers; the leaf's key. */
export function uploadBody(leaf: TestCertificate, ...issuers: TestCertificate[]) {
  return { certificate: [leaf, ...issuers].map((c) => c.pem).join('\n'), privateKey: leaf.keyPem };
}
