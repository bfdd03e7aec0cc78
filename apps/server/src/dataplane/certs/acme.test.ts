import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as acme from 'acme-client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../atomic-write.js';
import { createTestCa, type TestCa } from '../../test/certificates.js';
import { runCommand } from '../exec.js';
import type { DataPlaneLogger } from '../types.js';
import { createAcmeIssuer, describeAcmeError, loadOrCreateAccountKey, type AcmeClient } from './acme.js';
import { createSelfSignedPem } from './self-signed.js';

const DOMAIN = 'app.example.com';

let dataDir: string;
let certsDir: string;
let pemFile: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'postern-acme-'));
  certsDir = join(dataDir, 'certs');
  pemFile = join(certsDir, `${DOMAIN}.pem`);
  await mkdir(certsDir, { mode: 0o711 });
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('ACME account key', () => {
  it('is created once, private to the gateway, and reused afterwards', async () => {
    const first = await loadOrCreateAccountKey(dataDir);
    const second = await loadOrCreateAccountKey(dataDir);
    expect(second.equals(first)).toBe(true);
    expect(first.toString()).toContain('PRIVATE KEY');
    const file = join(dataDir, 'acme', 'account.key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dataDir, 'acme'))).mode & 0o777).toBe(0o700);
    expect(await readFile(file)).toEqual(first);
  });
});

describe('describeAcmeError', () => {
  it('keeps the CA reason on one line', () => {
    expect(describeAcmeError(new Error('Invalid response from\n  http://a.example.com/x: 404'))).toBe(
      'Invalid response from http://a.example.com/x: 404',
    );
    expect(describeAcmeError('boom')).toBe('boom');
  });
});

// A fake ACME CA (no network): it records each CSR and signs the CSR's own public key with a throw-away
// openssl CA, so the returned chain is real and belongs to whatever key the issuer put in the CSR.
let testCa: TestCa;
beforeAll(async () => {
  testCa = await createTestCa('Fake ACME CA');
  return () => testCa.remove();
});

interface FakeCa extends AcmeClient {
  csrs: string[];
  chains: string[];
}

function createFakeCa(outcome: { fail?: string } = {}): FakeCa {
  const csrs: string[] = [];
  const chains: string[] = [];
  return {
    csrs,
    chains,
    async auto({ csr }) {
      csrs.push(csr.toString());
      if (outcome.fail !== undefined) throw new Error(outcome.fail);
      const chain = `${await testCa.signCsr(csr.toString())}${await readFile(testCa.certFile, 'utf8')}`;
      chains.push(chain);
      return chain;
    },
  };
}

function createRecordingLogger(): DataPlaneLogger & { warnings: string[] } {
  const warnings: string[] = [];
  const ignore = () => undefined;
  return {
    warnings,
    debug: ignore,
    info: ignore,
    error: ignore,
    warn: (obj, msg) => warnings.push(`${msg ?? ''} ${JSON.stringify(obj)}`),
  };
}

function newIssuer(ca: FakeCa, logger: DataPlaneLogger = createRecordingLogger()) {
  return createAcmeIssuer({
    dataDir,
    logger,
    challenges: { set: () => Promise.resolve(), remove: () => Promise.resolve() },
    createClient: () => Promise.resolve(ca),
  });
}

/** The PEM blocks of a file, in order, each as written (BEGIN line to END line). */
function pemBlocks(pem: string): string[] {
  return pem.match(/-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----/g) ?? [];
}

function keyBlockOf(pem: string): string {
  const block = pemBlocks(pem)[0];
  if (block === undefined || !block.includes('PRIVATE KEY'))
    throw new Error('the PEM does not start with a private key');
  return block;
}

/** The public key a CSR asks to certify; `-verify` also proves the CSR was signed by its private half. */
async function publicKeyOfCsr(csr: string): Promise<KeyObject> {
  const { stdout } = await runCommand('openssl', ['req', '-noout', '-verify', '-pubkey'], { input: csr });
  return createPublicKey(stdout);
}

async function writePlaceholder(): Promise<string> {
  const pem = await createSelfSignedPem(DOMAIN);
  await writeFileAtomic(pemFile, pem, 0o600);
  return pem;
}

describe('ACME issuance', () => {
  it('keeps the served key on issue and on renewal: the CSR carries it and the key block stays byte for byte', async () => {
    const placeholderKey = keyBlockOf(await writePlaceholder());
    const ca = createFakeCa();
    const issuer = newIssuer(ca);

    await issuer.issue(DOMAIN, pemFile);
    const issued = await readFile(pemFile, 'utf8');
    await issuer.issue(DOMAIN, pemFile); // renewal of the CA-issued PEM
    const renewed = await readFile(pemFile, 'utf8');

    const placeholderPublicKey = createPublicKey(placeholderKey);
    expect(ca.csrs).toHaveLength(2);
    for (const csr of ca.csrs) {
      expect((await publicKeyOfCsr(csr)).equals(placeholderPublicKey)).toBe(true);
      expect(acme.crypto.readCsrDomains(csr)).toEqual({ commonName: DOMAIN, altNames: [DOMAIN] });
    }
    expect(keyBlockOf(issued)).toBe(placeholderKey);
    expect(keyBlockOf(renewed)).toBe(placeholderKey);
    expect(new X509Certificate(renewed).fingerprint256).not.toBe(new X509Certificate(issued).fingerprint256);
    expect(new X509Certificate(renewed).checkPrivateKey(createPrivateKey(renewed))).toBe(true);
  });

  it('makes a new P-256 key when the domain has no PEM yet, and writes it with the chain', async () => {
    const ca = createFakeCa();
    await newIssuer(ca).issue(DOMAIN, pemFile);

    const pem = await readFile(pemFile, 'utf8');
    const key = createPrivateKey(keyBlockOf(pem));
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect((await publicKeyOfCsr(ca.csrs[0] ?? '')).equals(createPublicKey(key))).toBe(true);
    const served = new X509Certificate(pem);
    expect(served.issuer).toBe('CN=Fake ACME CA');
    expect(served.checkPrivateKey(key)).toBe(true);
  });

  it.each([
    ['is not base64', () => '-----BEGIN PRIVATE KEY-----\nnot a key at all\n-----END PRIVATE KEY-----\n'],
    [
      'is truncated',
      async () => {
        const [head = '', ...rest] = keyBlockOf(await createSelfSignedPem(DOMAIN)).split('\n');
        return `${head}\n${rest.slice(1).join('\n')}\n`; // first base64 line dropped: a corrupt DER key
      },
    ],
  ])('falls back to a new key when the served key block %s', async (_case, corruptKey) => {
    const placeholder = await createSelfSignedPem(DOMAIN);
    const garbage = await corruptKey();
    await writeFile(pemFile, `${garbage}${pemBlocks(placeholder)[1] ?? ''}\n`, { mode: 0o600 });
    const ca = createFakeCa();
    const logger = createRecordingLogger();

    await newIssuer(ca, logger).issue(DOMAIN, pemFile);

    const pem = await readFile(pemFile, 'utf8');
    const key = createPrivateKey(keyBlockOf(pem));
    expect(pem).not.toContain(garbage.trim());
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect((await publicKeyOfCsr(ca.csrs[0] ?? '')).equals(createPublicKey(key))).toBe(true);
    expect(new X509Certificate(pem).checkPrivateKey(key)).toBe(true);
    expect(logger.warnings).toEqual([expect.stringContaining('unreadable') as string]);
  });

  it('replaces the PEM by one atomic rename: key then chain in one 0600 file, no temp files, open readers keep the old file', async () => {
    const placeholder = await writePlaceholder();
    const ca = createFakeCa();
    // nginx may hold the old file open mid-handshake; a rename leaves that file whole, an in-place write would not.
    const reader = await open(pemFile, 'r');
    try {
      await newIssuer(ca).issue(DOMAIN, pemFile);
      expect(await reader.readFile('utf8')).toBe(placeholder);
    } finally {
      await reader.close();
    }

    const pem = await readFile(pemFile, 'utf8');
    expect(pem).toBe(`${keyBlockOf(placeholder)}\n${ca.chains[0] ?? ''}`);
    expect(pemBlocks(pem).map((block) => /-----BEGIN ([A-Z ]+)-----/.exec(block)?.[1])).toEqual([
      'PRIVATE KEY',
      'CERTIFICATE',
      'CERTIFICATE',
    ]);
    expect((await stat(pemFile)).mode & 0o777).toBe(0o600);
    expect(await readdir(certsDir)).toEqual([`${DOMAIN}.pem`]);
  });

  it('leaves the served PEM untouched when the CA refuses', async () => {
    const placeholder = await writePlaceholder();
    const issuer = newIssuer(createFakeCa({ fail: 'urn:ietf:params:acme:error:rateLimited' }));

    await expect(issuer.issue(DOMAIN, pemFile)).rejects.toThrow('rateLimited');
    expect(await readFile(pemFile, 'utf8')).toBe(placeholder);
    expect(await readdir(certsDir)).toEqual([`${DOMAIN}.pem`]);
  });
});
