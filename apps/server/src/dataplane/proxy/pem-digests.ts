import { statSync } from 'node:fs';
import { firstCertificateFingerprint, readPemText } from '../certs/pem-files.js';
import { pemPath } from '../certs/self-signed.js';
import { nextTurn } from '../nginx/routes.js';
import { md5 } from './held.js';

/** Files read side by side (as the certificates' push reads them: proxy/certificates.ts). */
const PEMS_AT_ONCE = 32;
/**
 * Synchronous stats per turn of the event loop: ~1 ms of CPU. 2,000 a turn (~8 ms) showed 105-130 ms gaps of a 1 ms
 * timer at load 35 (the process descheduled within a slice); 256 a turn, see bench/README.md "drift-pems.ts".
 */
const STATS_PER_TURN = 256;

/**
 * A file changed this recently may change again within the same tick of the file system's clock (the kernel stamps
 * mtime/ctime with a coarse clock) and keep the identity it was read under; such a file is read again next time.
 * The same rule git applies to its index ("racy git").
 */
export const SETTLED_MS = 2000;

/**
 * What makes a file the one that was read: a write in place moves mtime/ctime (and size); a rename, the inode. The
 * times as node gives them without `bigint` (milliseconds as a double: ~0.2 µs apart today); BigIntStats cost ~2x
 * the CPU of a check at 100,000 files.
 */
interface Identity {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}
/** What a drift check compares: the file's MD5 with nginx's digest, its first certificate with the shared store's. */
interface Digest {
  md5: string;
  fingerprint: string | null;
}
const isSame = (a: Identity, b: Identity): boolean =>
  a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

/**
 * The MD5 of each PEM nginx should serve, as the drift check compares it with nginx's digest. Every check used to read
 * all of them (at 100,000 self-signed domains ~100 MB of files through the libuv pool, beside the first changes after
 * a boot); now a file whose inode, size, mtime and ctime are those it was read with is a stat, and only a new, replaced
 * or edited one is read. ctime cannot be set back by hand, so a file edited with its mtime restored still reads again.
 */
export class PemDigests {
  private readonly known = new Map<string, Identity & Digest>();

  constructor(
    private readonly readText: (path: string) => Promise<string | null> = readPemText,
    private readonly now: () => number = Date.now,
  ) {}

  /** The MD5 of each of `names`' PEM in `certsDir`, in order (null: missing or unreadable). */
  async of(certsDir: string, names: readonly string[], pause = nextTurn): Promise<(string | null)[]> {
    return (await this.digests(certsDir, names, pause)).map((digest) => digest?.md5 ?? null);
  }

  /**
   * The SHA-256 fingerprint of the first certificate of each of `names`' PEM, in order (null: missing, unreadable or
   * no certificate): what the shared store records (certs/manager.ts `differsFromStored`, every drift check).
   */
  async fingerprintsOf(certsDir: string, names: readonly string[], pause = nextTurn): Promise<(string | null)[]> {
    return (await this.digests(certsDir, names, pause)).map((digest) => digest?.fingerprint ?? null);
  }

  private async digests(
    certsDir: string,
    names: readonly string[],
    pause: () => Promise<void>,
  ): Promise<(Digest | null)[]> {
    const digests = new Array<Digest | null>(names.length).fill(null);
    // A stat of a file whose metadata the kernel caches costs ~3 µs synchronously and ~12 µs of this thread's CPU
    // through the pool (promise, callback, Stats object): 100,000 of them are taken here, STATS_PER_TURN a turn.
    const changed: { at: number; path: string; facts: Identity }[] = [];
    for (let at = 0; at < names.length; at++) {
      if (at > 0 && at % STATS_PER_TURN === 0) await pause();
      const path = pemPath(certsDir, names[at] as string);
      const facts = statSync(path, { throwIfNoEntry: false });
      const known = this.known.get(path);
      if (facts === undefined) this.known.delete(path);
      else if (known !== undefined && isSame(known, facts)) digests[at] = known;
      else
        changed.push({
          at,
          path,
          facts: { ino: facts.ino, size: facts.size, mtimeMs: facts.mtimeMs, ctimeMs: facts.ctimeMs },
        });
    }
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < changed.length; i = next++) {
        const { at, path, facts } = changed[i] as (typeof changed)[number];
        digests[at] = await this.read(path, facts);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PEMS_AT_ONCE, changed.length) }, worker));
    // Names no longer asked for (deleted domains) are not kept: the cache holds what the last check looked at.
    if (this.known.size > names.length) {
      const asked = new Set(names.map((name) => pemPath(certsDir, name)));
      for (const path of this.known.keys()) if (!asked.has(path)) this.known.delete(path);
    }
    return digests;
  }

  /** Read after its stat: a write between the two leaves a newer file under the older identity, read next time. */
  private async read(path: string, facts: Identity): Promise<Digest | null> {
    const pem = await this.readText(path);
    if (pem === null) {
      this.known.delete(path);
      return null;
    }
    const digest = { md5: md5(pem), fingerprint: firstCertificateFingerprint(pem) };
    const { ino, size, mtimeMs, ctimeMs } = facts;
    if (this.now() - Math.max(mtimeMs, ctimeMs) >= SETTLED_MS)
      this.known.set(path, { ino, size, mtimeMs, ctimeMs, ...digest });
    else this.known.delete(path);
    return digest;
  }
}
