import { readdir, readFile, unlink } from 'node:fs/promises';
import { isIPv4 } from '../validate.js';
import { FALLBACK_NAME, describeCertificate, pemPath } from './self-signed.js';
import type { CertificateInfo } from '../types.js';

/** What a PEM on disk holds, as far as the manager cares. */
export type PemFacts = ReturnType<typeof describeCertificate>;

/** The PEMs nginx serves (`<certsDir>/<name>.pem`), with what each holds cached in memory. */
export interface PemFiles {
  readonly certsDir: string;
  pathOf(name: string): string;
  /** The name a PEM is made for: the fallback's is the gateway's public host. */
  coveredNameOf(name: string): string;
  /** What the PEM holds, or null when it is missing, unreadable or does not cover its name. */
  read(name: string): Promise<PemFacts | null>;
  /** Records what was just written, so the next read costs nothing. */
  remember(name: string, facts: PemFacts): void;
  /** Drops the cached facts: something else (the ACME issuer) replaced the file. */
  forget(name: string): void;
  /** Deletes the PEM (if any) and its cached facts. */
  remove(name: string): Promise<void>;
  /** Names of the PEMs on disk (temp files of atomic writes excluded). */
  listNames(): Promise<string[]>;
}

export function factsOf(facts: PemFacts): Pick<CertificateInfo, 'issuer' | 'notBefore' | 'notAfter' | 'fingerprint'> {
  return { issuer: facts.issuer, notBefore: facts.notBefore, notAfter: facts.notAfter, fingerprint: facts.fingerprint };
}

function covers(facts: PemFacts, name: string): boolean {
  const wanted = isIPv4(name) ? `IP Address:${name}` : `DNS:${name}`;
  return facts.subjectAltName?.split(', ').includes(wanted) ?? false;
}

export function createPemFiles(options: { certsDir: string; fallbackHost: string }): PemFiles {
  const { certsDir, fallbackHost } = options;
  // Only the manager and its issuer write these files, so the cache stays true as long as the issuer's writes
  // call forget(): then neither an apply nor the periodic check at 10,000 domains re-reads and parses every file.
  const cache = new Map<string, PemFacts>();
  const pathOf = (name: string): string => pemPath(certsDir, name);
  const coveredNameOf = (name: string): string => (name === FALLBACK_NAME ? fallbackHost : name);

  return {
    certsDir,
    pathOf,
    coveredNameOf,

    async read(name) {
      const cached = cache.get(name);
      if (cached) return cached;
      const pem = await readFile(pathOf(name), 'utf8').catch(() => null);
      if (pem === null) return null;
      try {
        const facts = describeCertificate(pem);
        if (!covers(facts, coveredNameOf(name))) return null;
        cache.set(name, facts);
        return facts;
      } catch {
        return null; // corrupt: the caller replaces it
      }
    },

    remember: (name, facts) => void cache.set(name, facts),
    forget: (name) => void cache.delete(name),

    async remove(name) {
      cache.delete(name);
      await unlink(pathOf(name)).catch(() => undefined);
    },

    async listNames() {
      const files = await readdir(certsDir).catch(() => []);
      return files.filter((file) => file.endsWith('.pem') && !file.startsWith('.')).map((file) => file.slice(0, -4));
    },
  };
}
