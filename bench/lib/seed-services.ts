import { createRequire } from 'node:module';
import { X509Certificate, createPrivateKey, createPublicKey, webcrypto } from 'node:crypto';
import { chown, copyFile, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { splitPem } from '../../apps/server/src/lib/pem.js';
import { loadSecretBox } from '../../apps/server/src/secrets.js';

// Seeding thousands of services straight into the gateway's SQLite database (server stopped), and their
// self-signed certificates into `<dataDir>/certs/<domain>.pem`: through the API every create would be an
// apply of its own, which is what the benchmark measures, not how it should set up.

// Node's WebCrypto is the one the library expects (its types come from the DOM library, which this package leaves out).
x509.cryptoProvider.set(webcrypto as never);
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;

/** The server's own SQLite driver (the benchmark package does not depend on it directly). */
const requireFromServer = createRequire(new URL('../../apps/server/package.json', import.meta.url));

interface Statement {
  run(...params: unknown[]): unknown;
}
interface SqliteDatabase {
  prepare(sql: string): Statement;
  transaction(fn: () => void): () => void;
  pragma(text: string): unknown;
  close(): void;
}
type SqliteConstructor = new (file: string) => SqliteDatabase;

export const benchDomain = (index: number): string => `d${index}.bench.test`;

/** Runs `work(0..count-1)`, `parallel` at a time (100,000 files at once would exhaust the descriptors). */
async function inParallel(count: number, work: (index: number) => Promise<void>, parallel = 32): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** Finds the SQLite file in the data directory (the server decides its name). */
async function findDatabase(dataDir: string): Promise<string> {
  const names = (await readdir(dataDir)).filter((name) => /\.(db|sqlite3?)$/.test(name));
  if (names.length !== 1 || names[0] === undefined)
    throw new Error(`expected one SQLite file in ${dataDir}, found: ${names.join(', ') || 'none'}`);
  return join(dataDir, names[0]);
}

/**
 * Inserts domains d0..d(count-1).bench.test, each with one HTTP service on `nodeId` at `/`, and the certificate rows
 * the gateway keeps for each (as its certificate manager writes them once it has checked the PEM in `certCache`, and
 * the PEM stored for every gateway): the state of a gateway that has served them before, which is what a restart
 * finds.
 */
export async function seedHttpServices(
  dataDir: string,
  nodeId: number,
  backendHost: string,
  backendPort: number,
  count: number,
  certCache: string,
): Promise<void> {
  const facts: string[][] = [];
  const pems: { key: string; chain: string }[] = [];
  await inParallel(count, async (i) => {
    const pem = await readFile(join(certCache, `${benchDomain(i)}.pem`), 'utf8');
    const parts = splitPem(pem);
    if (parts === null) throw new Error(`${benchDomain(i)}.pem is not a combined PEM`);
    pems[i] = parts;
    const cert = new X509Certificate(pem);
    facts[i] = [
      cert.issuer.replace(/\n/g, ', '),
      new Date(cert.validFrom).toISOString(),
      new Date(cert.validTo).toISOString(),
      cert.fingerprint256,
    ];
  });
  const Database = requireFromServer('better-sqlite3') as SqliteConstructor;
  const db = new Database(await findDatabase(dataDir));
  try {
    db.pragma('foreign_keys = ON');
    const addDomain = db.prepare(`INSERT INTO domains (domain, ssl) VALUES (?, 'self-signed')`);
    const addCertificate = db.prepare(
      `INSERT INTO certificates (domain_id, state, issuer, not_before, not_after, fingerprint, failures, names) VALUES ((SELECT id FROM domains WHERE domain = ?), 'self-signed', ?, ?, ?, ?, 0, ?)`,
    );
    // The PEM every gateway serves, stored when the gateway first made or offered it (certs/manager.ts): without it
    // each boot would offer all of them again, one write each. The cached certificates share one key: sealed once.
    const box = loadSecretBox(dataDir);
    const sealed = new Map<string, string>();
    const sealedKey = (key: string): string => {
      const known = sealed.get(key);
      if (known !== undefined) return known;
      const made = box.encrypt(key);
      sealed.set(key, made);
      return made;
    };
    const at = new Date().toISOString();
    const addPem = db.prepare(
      `INSERT INTO certificate_pems (domain_id, fingerprint, chain, key_enc, created_at, updated_at) VALUES ((SELECT id FROM domains WHERE domain = ?), ?, ?, ?, ?, ?)`,
    );
    const addService = db.prepare(
      `INSERT INTO http_services (node_id, name, domain, path_location, backend_proto, backend_host, backend_port) VALUES (?, ?, ?, '/', 'http', ?, ?)`,
    );
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        addDomain.run(benchDomain(i));
        addService.run(nodeId, `bench-${i}`, benchDomain(i), backendHost, backendPort);
        // The names it covers too, as the manager records them: without them its first look rewrote every row.
        addCertificate.run(benchDomain(i), ...(facts[i] ?? []), JSON.stringify([benchDomain(i)]));
        const pem = pems[i];
        if (pem) addPem.run(benchDomain(i), facts[i]?.[3], pem.chain, sealedKey(pem.key), at, at);
      }
    })();
  } finally {
    db.close();
  }
}

/** The shared key of the cached certificates (one key for all keeps making 100,000 quick), made once. */
async function sharedKeys(cacheDir: string): Promise<webcrypto.CryptoKeyPair> {
  const file = join(cacheDir, 'shared.key');
  if (!existsSync(file)) {
    const made = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
    const der = await webcrypto.subtle.exportKey('pkcs8', made.privateKey);
    await writeFile(file, x509.PemConverter.encode(der, 'PRIVATE KEY'), { mode: 0o600 });
  }
  // An older cache holds openssl's SEC1 key: node:crypto reads either form.
  const key = createPrivateKey(await readFile(file, 'utf8'));
  const der = key.export({ type: 'pkcs8', format: 'der' });
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  return {
    privateKey: await webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, true, ['sign']),
    publicKey: await webcrypto.subtle.importKey('spki', spki, ALGORITHM, true, ['verify']),
  };
}

/**
 * Makes self-signed certificates for d0..d(count-1) in `cacheDir` once, in-process (ECDSA P-256 through WebCrypto,
 * under a millisecond each; an `openssl` process per name took minutes for 10,000).
 */
export async function makeCertificates(cacheDir: string, count: number, parallel = 64): Promise<void> {
  const keys = await sharedKeys(cacheDir);
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  await inParallel(
    count,
    async (i) => {
      const domain = benchDomain(i);
      if (existsSync(join(cacheDir, `${domain}.pem`))) return;
      const cert = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: (i + 1).toString(16).padStart(8, '0'),
        name: `CN=${domain}`,
        notBefore: new Date(Date.now() - DAY_MS),
        notAfter: new Date(Date.now() + 825 * DAY_MS),
        keys,
        signingAlgorithm: ALGORITHM,
        extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: domain }])],
      });
      // The server's layout: one combined PEM per name, key first.
      await writeFile(join(cacheDir, `${domain}.pem`), `${keyPem}\n${cert.toString('pem')}\n`, { mode: 0o600 });
    },
    parallel,
  );
}

/**
 * Copies the cached certificates of d0..d(count-1) into the gateway's certificate directory, owned like its fallback.
 */
export async function installCertificates(cacheDir: string, dataDir: string, count: number): Promise<void> {
  const certsDir = join(dataDir, 'certs');
  const owner = await stat(join(certsDir, '_fallback.pem'));
  await inParallel(count, async (i) => {
    const target = join(certsDir, `${benchDomain(i)}.pem`);
    await copyFile(join(cacheDir, `${benchDomain(i)}.pem`), target);
    await chown(target, owner.uid, owner.gid);
  });
}
