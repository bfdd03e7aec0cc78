import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../dataplane/exec.js';

// Certificates for tests, made by openssl with ECDSA P-256 keys: a throw-away CA that signs leaves, and self-signed
// leaves. Each PEM is the key followed by the certificate, as the gateway stores them. Files live in a temp dir
// of the CA's (or of the call's), removed by `remove()` (or at once).

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'] as const;

export interface TestCa {
  /** The CA's certificate (PEM file). */
  certFile: string;
  /** Key and certificate of `name` (subjectAltName DNS:name), signed by this CA, valid for `days`. */
  issue(name: string, days?: number): Promise<string>;
  /** The certificate (PEM) this CA signs for the public key and names of `csrPem`. */
  signCsr(csrPem: string, days?: number): Promise<string>;
  remove(): Promise<void>;
}

export async function createTestCa(commonName = 'Test CA', days = 30): Promise<TestCa> {
  const dir = await mkdtemp(join(tmpdir(), 'postern-test-ca-'));
  const certFile = join(dir, 'ca.crt');
  const keyFile = join(dir, 'ca.key');
  await runCommand('openssl', [
    'req',
    '-x509',
    ...EC_KEY,
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    String(days),
    '-subj',
    `/CN=${commonName}`,
  ]);
  const sign = ['x509', '-req', '-CA', certFile, '-CAkey', keyFile, '-CAcreateserial'];
  return {
    certFile,
    async issue(name, leafDays = 90) {
      const file = (ext: string) => join(dir, `${name}-${randomBytes(4).toString('hex')}.${ext}`);
      const [key, csr, extFile] = [file('key'), file('csr'), file('ext')];
      await writeFile(extFile, `subjectAltName=DNS:${name}\n`);
      await runCommand('openssl', ['req', '-new', ...EC_KEY, '-keyout', key, '-out', csr, '-subj', `/CN=${name}`]);
      const leaf = await runCommand('openssl', [...sign, '-in', csr, '-days', String(leafDays), '-extfile', extFile]);
      return `${await readFile(key, 'utf8')}${leaf.stdout}`;
    },
    async signCsr(csrPem, leafDays = 90) {
      return (await runCommand('openssl', [...sign, '-days', String(leafDays)], { input: csrPem })).stdout;
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Key and self-signed certificate of `name` (subjectAltName DNS:name), valid for `days` from now. */
export async function selfSignedPem(name: string, days = 30): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'postern-test-cert-'));
  try {
    const [key, crt] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    await runCommand('openssl', [
      'req',
      '-x509',
      ...EC_KEY,
      '-keyout',
      key,
      '-out',
      crt,
      '-days',
      String(days),
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=DNS:${name}`,
    ]);
    return `${await readFile(key, 'utf8')}${await readFile(crt, 'utf8')}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
