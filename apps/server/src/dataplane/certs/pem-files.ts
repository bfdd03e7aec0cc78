import { firstCertificateFingerprint } from '../../lib/pem.js';
import { readFile as readFileCallback } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { isIPv4 } from '../validate.js';
import { certificateNameCovers } from '@postern/contract';
import { FALLBACK_NAME, describeCertificate, pemPath, sanNames } from './self-signed.js';
import type { CertificateInfo } from '../types.js';

const readFileOnce = promisify(readFileCallback);

/**
 * A PEM's text, or null when it cannot be read. Through fs.readFile's callback, not fs/promises: a boot reads every
 * PEM (100,000 at the largest size we support) two or three times, and fs/promises' readFile (a FileHandle, four
 * trips through the thread pool, garbage) had ~70 s of self time in a gateway's profile (a boot at 100,000, a drift
 * run, four changes). 20,000 PEMs read 32 at a time on this machine at load 22: 840-907 ms of CPU and 0.9-3.1 s with
 * fs/promises, 535-569 ms and 0.55-0.64 s this way. A synchronous read costs less CPU still (~7 µs), but it holds the
 * event loop and, on a loaded machine, gets one thread's share of the CPU instead of the thread pool's: a boot at
 * 100,000 with synchronous reads took 445 s (load 25) against 180 s (load 20) before (bench/README.md).
 */
export function readPemText(path: string): Promise<string | null> {
  return readFileOnce(path, 'utf8').catch(() => null);
}

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
  /** Records what was just written, so the next read costs nothing (an unpushed earlier text is no longer the file). */
  remember(name: string, facts: PemFacts): void;
  /** Drops the cached facts (and an unpushed first PEM): something else (the ACME issuer) replaced the file. */
  forget(name: string): void;
  /**
   * The text of a name's first PEM, just written here, for the reconciler that asked to push as it is: reading it
   * back is a trip through libuv's pool, which a change waited for behind whatever filled the pool after a boot.
   */
  keepUnpushed(name: string, pem: string): void;
  /** The text `keepUnpushed` kept for the name, still the file's (handed out once), or null: read the file. */
  takeUnpushed(name: string): string | null;
  /** Deletes the PEM (if any) and its cached facts. */
  remove(name: string): Promise<void>;
  /** Names of the PEMs on disk (temp files of atomic writes excluded). */
  listNames(): Promise<string[]>;
}

export { firstCertificateFingerprint };

export function factsOf(
  facts: PemFacts,
): Pick<CertificateInfo, 'issuer' | 'notBefore' | 'notAfter' | 'fingerprint' | 'names'> {
  const { issuer, notBefore, notAfter, fingerprint, names } = facts;
  return { issuer, notBefore, notAfter, fingerprint, names: names ?? null };
}

const sanFor = (name: string): string => (isIPv4(name) ? `IP Address:${name}` : `DNS:${name}`);

/** Whether the certificate is for `name`: an IP address listed, a DNS name listed or covered by a wildcard listed. */
export function covers(facts: Pick<PemFacts, 'subjectAltName'>, name: string): boolean {
  const entries = facts.subjectAltName?.split(', ') ?? [];
  if (isIPv4(name)) return entries.includes(sanFor(name));
  return sanNames(facts.subjectAltName).some((san) => certificateNameCovers(san, name));
}

/** What the certificate store recorded of the PEM last seen for a name (its facts were checked then). */
export interface RecordedFacts {
  fingerprint: string;
  issuer: string | null;
  notBefore: string | null;
  notAfter: string | null;
  isSelfSigned: boolean;
  /** The names it covers (null: recorded before they were). */
  names?: string[] | null;
}

/** The facts of a PEM that is the recorded one (same fingerprint), as recorded: no parsing. */
export function factsOfRecorded(recorded: RecordedFacts, coveredName: string): PemFacts {
  const { fingerprint, issuer, notBefore, notAfter, isSelfSigned } = recorded;
  const names = recorded.names ?? [coveredName];
  return {
    fingerprint,
    issuer,
    notBefore,
    notAfter,
    isSelfSigned,
    names,
    subjectAltName: names.map(sanFor).join(', '),
  };
}

/** First PEMs kept in memory for their push: a change makes one or a few; more are read back from their files. */
const UNPUSHED_KEPT = 256;

export function createPemFiles(options: {
  certsDir: string;
  fallbackHost: string;
  /**
   * The facts recorded for a name. When the PEM on disk is the one recorded (same fingerprint), they are used as they
   * are: parsing 10,000 certificates at boot cost 0.45 ms each (4.5 s); hashing one costs 0.02 ms.
   */
  recorded?: (name: string) => RecordedFacts | null;
}): PemFiles {
  const { certsDir, fallbackHost } = options;
  // Only the manager and its issuer write these files, so the cache stays true as long as the issuer's writes
  // call forget(): then neither an apply nor the periodic check at 10,000 domains re-reads and parses every file.
  const cache = new Map<string, PemFacts>();
  /** First PEMs not pushed yet, the oldest dropped past UNPUSHED_KEPT (a full run making thousands reads them). */
  const unpushed = new Map<string, string>();
  const pathOf = (name: string): string => pemPath(certsDir, name);
  const coveredNameOf = (name: string): string => (name === FALLBACK_NAME ? fallbackHost : name);

  return {
    certsDir,
    pathOf,
    coveredNameOf,

    async read(name) {
      const cached = cache.get(name);
      if (cached) return cached;
      const pem = await readPemText(pathOf(name));
      if (pem === null) return null;
      const recorded = options.recorded?.(name);
      if (recorded && recorded.fingerprint === firstCertificateFingerprint(pem)) {
        // Recorded only after it was read here and found to cover its name.
        const facts = factsOfRecorded(recorded, coveredNameOf(name));
        cache.set(name, facts);
        return facts;
      }
      try {
        const facts = describeCertificate(pem);
        if (!covers(facts, coveredNameOf(name))) return null;
        cache.set(name, facts);
        return facts;
      } catch {
        return null; // corrupt: the caller replaces it
      }
    },

    remember(name, facts) {
      cache.set(name, facts);
      unpushed.delete(name);
    },
    forget(name) {
      cache.delete(name);
      unpushed.delete(name);
    },

    keepUnpushed(name, pem) {
      unpushed.delete(name);
      unpushed.set(name, pem);
      if (unpushed.size > UNPUSHED_KEPT) unpushed.delete(unpushed.keys().next().value as string);
    },

    takeUnpushed(name) {
      const pem = unpushed.get(name) ?? null;
      unpushed.delete(name);
      return pem;
    },

    async remove(name) {
      cache.delete(name);
      unpushed.delete(name);
      await unlink(pathOf(name)).catch(() => undefined);
    },

    async listNames() {
      const files = await readdir(certsDir).catch(() => []);
      return files.filter((file) => file.endsWith('.pem') && !file.startsWith('.')).map((file) => file.slice(0, -4));
    },
  };
}
