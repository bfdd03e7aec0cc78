import { createRequire } from 'node:module';
import { X509Certificate } from 'node:crypto';
import { chown, copyFile, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../e2e/harness/exec.js';

// Seeding thousands of services straight into the gateway's SQLite database (server stopped), and their
// self-signed certificates into `<dataDir>/certs/<domain>.pem`: through the API every create would be an
// apply of its own, which is what the benchmark measures, not how it should set up.

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

/** Finds the SQLite file in the data directory (the server decides its name). */
async function findDatabase(dataDir: string): Promise<string> {
  const names = (await readdir(dataDir)).filter((name) => /\.(db|sqlite3?)$/.test(name));
  if (names.length !== 1 || names[0] === undefined)
    throw new Error(`expected one SQLite file in ${dataDir}, found: ${names.join(', ') || 'none'}`);
  return join(dataDir, names[0]);
}

/**
 * Inserts domains d0..d(count-1).bench.test, each with one HTTP service on `nodeId` at `/`, and the certificate row
 * the gateway keeps for each (as its certificate manager writes it once it has checked the PEM in `certCache`): the
 * state of a gateway that has served them before, which is what a restart finds.
 */
export async function seedHttpServices(
  dataDir: string,
  nodeId: number,
  backendHost: string,
  backendPort: number,
  count: number,
  certCache: string,
): Promise<void> {
  const facts = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const cert = new X509Certificate(await readFile(join(certCache, `${benchDomain(i)}.pem`), 'utf8'));
      return [
        cert.issuer.replace(/\n/g, ', '),
        new Date(cert.validFrom).toISOString(),
        new Date(cert.validTo).toISOString(),
        cert.fingerprint256,
      ];
    }),
  );
  const Database = requireFromServer('better-sqlite3') as SqliteConstructor;
  const db = new Database(await findDatabase(dataDir));
  try {
    db.pragma('foreign_keys = ON');
    const addDomain = db.prepare(`INSERT INTO domains (domain, ssl) VALUES (?, 'self-signed')`);
    const addCertificate = db.prepare(
      `INSERT INTO certificates (domain_id, state, issuer, not_before, not_after, fingerprint, failures) VALUES ((SELECT id FROM domains WHERE domain = ?), 'self-signed', ?, ?, ?, ?, 0)`,
    );
    const addService = db.prepare(
      `INSERT INTO http_services (node_id, name, domain, path_location, backend_proto, backend_host, backend_port) VALUES (?, ?, ?, '/', 'http', ?, ?)`,
    );
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        addDomain.run(benchDomain(i));
        addService.run(nodeId, `bench-${i}`, benchDomain(i), backendHost, backendPort);
        addCertificate.run(benchDomain(i), ...(facts[i] ?? []));
      }
    })();
  } finally {
    db.close();
  }
}

/** Makes self-signed certificates for d0..d(count-1) in `cacheDir` once (one shared key keeps it quick). */
export async function makeCertificates(cacheDir: string, count: number, parallel = 4): Promise<void> {
  const key = join(cacheDir, 'shared.key');
  if (!existsSync(key)) await run('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  const pending = Array.from({ length: count }, (_, i) => i).filter(
    (i) => !existsSync(join(cacheDir, `${benchDomain(i)}.pem`)),
  );
  const worker = async (): Promise<void> => {
    for (let i = pending.shift(); i !== undefined; i = pending.shift()) {
      const domain = benchDomain(i);
      const certFile = join(cacheDir, `${domain}.crt`);
      await run('openssl', [
        'req',
        '-x509',
        '-key',
        key,
        '-out',
        certFile,
        '-days',
        '825',
        '-subj',
        `/CN=${domain}`,
        '-addext',
        `subjectAltName=DNS:${domain}`,
      ]);
      // The server's layout: one combined PEM per name, key first.
      await writeFile(
        join(cacheDir, `${domain}.pem`),
        `${await readFile(key, 'utf8')}${await readFile(certFile, 'utf8')}`,
        { mode: 0o600 },
      );
      await rm(certFile);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/**
 * Copies the cached certificates of d0..d(count-1) into the gateway's certificate directory, owned like its fallback.
 */
export async function installCertificates(cacheDir: string, dataDir: string, count: number): Promise<void> {
  const certsDir = join(dataDir, 'certs');
  const owner = await stat(join(certsDir, '_fallback.pem'));
  for (let i = 0; i < count; i++) {
    const target = join(certsDir, `${benchDomain(i)}.pem`);
    await copyFile(join(cacheDir, `${benchDomain(i)}.pem`), target);
    await chown(target, owner.uid, owner.gid);
  }
}
