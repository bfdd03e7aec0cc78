// What a new domain's certificate step costs (bench/README.md "certificates.ts"): making the self-signed PEM and
// writing it, the way the gateway does it against the ways it replaced, interleaved in one run so background load hits
// all alike, first with libuv's thread pool idle, then with it busy the way a boot's push or a drift check keeps it (32
// PEM files read at a time, without end). Makers: the gateway's (createSelfSignedPem: node:crypto on the main thread,
// @peculiar/x509 encoding), the WebCrypto one it replaced (key, signature and export as pool jobs) and the `openssl
// req -x509` process before that. Writers: the gateway's (replaceFileSync: temp + rename, synchronous, no fsync) and
// the one it replaced (writeFileAtomic: temp + fsync + rename + fsync of the directory, each call a pool job). Prints
// p50/p99 of each. No root, no network; needs openssl on PATH for that baseline only.
import { execFile } from 'node:child_process';
import { createHash, randomBytes, webcrypto } from 'node:crypto';
import { readFile as readFileCallback } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  PemConverter,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509CertificateGenerator,
} from '@peculiar/x509';
import { replaceFileSync, writeFileAtomic } from '@postern/server/src/dataplane/atomic-write.js';
import { createSelfSignedPem } from '@postern/server/src/dataplane/certs/self-signed.js';
import { percentile, printTable } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const run = promisify(execFile);
const readFileOnce = promisify(readFileCallback);

/** The replaced path, as the gateway ran it: one openssl process per name, the key through a private temp dir. */
async function opensslSelfSigned(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'postern-bench-cert-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    await run('openssl', [
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
      '825',
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=DNS:${name}`,
    ]);
    return `${await readFile(keyFile, 'utf8')}${await readFile(certFile, 'utf8')}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** The replaced in-process maker (until 2026-11-28), as the gateway ran it: every WebCrypto call a pool job. */
async function webCryptoSelfSigned(name: string): Promise<string> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const publicKeyBits = Buffer.from(await webcrypto.subtle.exportKey('raw', keys.publicKey));
  const notBefore = new Date();
  const cert = await X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomBytes(16).toString('hex').replace(/^./, '1'),
      name: [{ CN: [name] }],
      notBefore,
      notAfter: new Date(notBefore.getTime() + 825 * 24 * 3600 * 1000),
      keys,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new BasicConstraintsExtension(false, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true),
        new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth]),
        new SubjectAlternativeNameExtension([{ type: 'dns', value: name }]),
        new SubjectKeyIdentifierExtension(createHash('sha1').update(publicKeyBits).digest('hex')),
      ],
    },
    webcrypto,
  );
  const keyDer = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return `${PemConverter.encode(keyDer, 'PRIVATE KEY')}\n${cert.toString('pem')}\n`;
}

/**
 * Keeps libuv's pool busy as a boot's push or a drift check does: `width` reads of a PEM file always in flight (the
 * gateway reads 32 at a time). Returns the stop.
 */
function busyPool(file: string, width: number): () => Promise<void> {
  let isStopped = false;
  const reader = async (): Promise<void> => {
    while (!isStopped) await readFileOnce(file, 'utf8');
  };
  const readers = Array.from({ length: width }, reader);
  return async () => {
    isStopped = true;
    await Promise.all(readers);
  };
}

type Step = (name: string, dir: string) => Promise<unknown>;

const pemText = await createSelfSignedPem('write.example.test');
const steps: [string, Step][] = [
  ['make: node:crypto, main thread (gateway)', (name) => createSelfSignedPem(name)],
  ['make: WebCrypto, pool jobs (replaced)', (name) => webCryptoSelfSigned(name)],
  ['make: openssl process (replaced before)', (name) => opensslSelfSigned(name)],
  [
    'write: rename, sync, no fsync (gateway)',
    async (name, dir) => replaceFileSync(join(dir, `${name}.pem`), pemText, 0o600),
  ],
  ['write: fsync file + dir (replaced)', (name, dir) => writeFileAtomic(join(dir, `${name}.pem`), pemText, 0o600)],
];

const dir = await mkdtemp(join(tmpdir(), 'postern-bench-certs-'));
try {
  const readMe = join(dir, 'busy.pem');
  await writeFile(readMe, pemText);
  // Warm-up: the first call loads the library and the curve tables.
  for (const [, step] of steps) await step('warm.example.test', dir);
  const rows: string[][] = [];
  const loads: string[] = [];
  for (const phase of ['pool idle', 'pool busy (32 reads)'] as const) {
    const stop = phase === 'pool idle' ? null : busyPool(readMe, 32);
    const times = steps.map((): number[] => []);
    loads.push(`${phase}: ${(loadavg()[0] ?? 0).toFixed(2)}`);
    for (let i = 0; i < ROUNDS; i++) {
      for (const [at, [, step]] of steps.entries()) {
        const start = performance.now();
        await step(`d${i}.example.test`, dir);
        times[at]?.push(performance.now() - start);
      }
    }
    await stop?.();
    for (const [at, [label]] of steps.entries()) {
      const values = times[at] ?? [];
      rows.push([phase, label, percentile(values, 50).toFixed(2), percentile(values, 99).toFixed(2)]);
    }
  }
  console.log(`load average at each phase's start: ${loads.join(', ')}; ${ROUNDS} rounds, the steps interleaved`);
  printTable(['libuv pool', 'step', 'p50 ms', 'p99 ms'], rows);
} finally {
  await rm(dir, { recursive: true, force: true });
}
