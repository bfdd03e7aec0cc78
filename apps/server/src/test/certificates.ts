import { webcrypto } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

// The certificate factory for tests: CAs, certificates they sign and self-signed certificates, made in-process
// (ECDSA P-256 through WebCrypto, a few milliseconds each, no openssl and no files unless a test needs one).

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

/** Validity of a certificate; by default from yesterday (no clock-skew surprises) for the maker's default span. */
interface Validity {
  notBefore?: Date;
  notAfter?: Date;
}

let serial = 1;
const nextSerial = () => String(serial++).padStart(2, '0');
const daysFromNow = (days: number) => new Date(Date.now() + days * DAY_MS);
const yesterday = () => new Date(Date.now() - DAY_MS);

async function keyPemOf(keys: webcrypto.CryptoKeyPair): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function newKeys(): Promise<webcrypto.CryptoKeyPair> {
  return await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
}

const namesExtension = (names: readonly string[]) =>
  new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value })));

async function toTestCertificate(cert: x509.X509Certificate, keys: webcrypto.CryptoKeyPair) {
  return { cert, keys, pem: cert.toString('pem'), keyPem: await keyPemOf(keys) };
}

/** A self-signed CA certificate named `name`, valid from yesterday for a year (or `days`). */
export async function makeTestCa(name = 'Postern Test CA', days = 365): Promise<TestCertificate> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: nextSerial(),
    name: `CN=${name}`,
    notBefore: yesterday(),
    notAfter: daysFromNow(days),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  return await toTestCertificate(cert, keys);
}

/** A server certificate for `names` signed by `issuer`; validity as given (default: from yesterday for 90 days). */
export async function makeTestLeaf(
  issuer: TestCertificate,
  names: readonly string[],
  validity: Validity = {},
): Promise<TestCertificate> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: nextSerial(),
    subject: `CN=${names[0] ?? 'no-name'}`,
    issuer: issuer.cert.subject,
    notBefore: validity.notBefore ?? yesterday(),
    notAfter: validity.notAfter ?? daysFromNow(90),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true), namesExtension(names)],
  });
  return await toTestCertificate(cert, keys);
}

/** A self-signed server certificate for `names` (default validity: from yesterday for 30 days). */
async function makeSelfSignedTestLeaf(names: readonly string[], validity: Validity = {}) {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: nextSerial(),
    name: `CN=${names[0] ?? 'no-name'}`,
    notBefore: validity.notBefore ?? yesterday(),
    notAfter: validity.notAfter ?? daysFromNow(30),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true), namesExtension(names)],
  });
  return await toTestCertificate(cert, keys);
}

/** The body of an upload: the leaf, then its issuers; the leaf's key. */
export function uploadBody(leaf: TestCertificate, ...issuers: TestCertificate[]) {
  return { certificate: [leaf, ...issuers].map((c) => c.pem).join('\n'), privateKey: leaf.keyPem };
}

/** A certificate as the gateway stores it on disk: the key, then the certificate, each ending in a newline. */
const gatewayPemOf = (certificate: TestCertificate): string => `${certificate.keyPem}\n${certificate.pem}\n`;

export interface TestCa {
  /** The CA's certificate (PEM file), for a client that trusts it. */
  certFile: string;
  /** Key and certificate of `name` (subjectAltName DNS:name), signed by this CA, valid for `days`. */
  issue(name: string, days?: number): Promise<string>;
  /** The certificate (PEM) this CA signs for the public key, subject and names of `csrPem`. */
  signCsr(csrPem: string, days?: number): Promise<string>;
  remove(): Promise<void>;
}

/** A CA with its certificate in a file of a temp dir (removed by `remove()`), issuing in the gateway's PEM form. */
export async function createTestCa(commonName = 'Test CA', days = 30): Promise<TestCa> {
  const ca = await makeTestCa(commonName, days);
  const dir = await mkdtemp(join(tmpdir(), 'postern-test-ca-'));
  const certFile = join(dir, 'ca.crt');
  await writeFile(certFile, `${ca.pem}\n`);
  return {
    certFile,
    async issue(name, leafDays = 90) {
      return gatewayPemOf(await makeTestLeaf(ca, [name], { notAfter: daysFromNow(leafDays) }));
    },
    async signCsr(csrPem, leafDays = 90) {
      const csr = new x509.Pkcs10CertificateRequest(csrPem);
      const names = csr.extensions.find((extension) => extension instanceof x509.SubjectAlternativeNameExtension);
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: nextSerial(),
        subject: csr.subject,
        issuer: ca.cert.subject,
        notBefore: yesterday(),
        notAfter: daysFromNow(leafDays),
        publicKey: csr.publicKey,
        signingKey: ca.keys.privateKey,
        signingAlgorithm: ALGORITHM,
        extensions: names ? [names] : [],
      });
      return `${cert.toString('pem')}\n`;
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Key and self-signed certificate of `name` (subjectAltName DNS:name), valid for `days` from now. */
export async function selfSignedPem(name: string, days = 30): Promise<string> {
  return gatewayPemOf(await makeSelfSignedTestLeaf([name], { notAfter: daysFromNow(days) }));
}
