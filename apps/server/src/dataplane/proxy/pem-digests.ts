import { stat as statCallback, type BigIntStats } from 'node:fs';
import { promisify } from 'node:util';
import { readPemText } from '../certs/pem-files.js';
import { pemPath } from '../certs/self-signed.js';
import { md5 } from './held.js';

const statOnce = promisify(statCallback) as (path: string, options: { bigint: true }) => Promise<BigIntStats>;

/** Files looked at side by side (as the certificates' push reads them: proxy/certificates.ts). */
const PEMS_AT_ONCE = 32;

/**
 * A file changed this recently may change again within the same tick of the file system's clock (the kernel stamps
 * mtime/ctime with a coarse clock) and keep the identity it was read under; such a file is read again next time.
 * The same rule git applies to its index ("racy git").
 */
export const SETTLED_MS = 2000;

/** What makes a file the one that was read: a write in place moves mtime/ctime (and size); a rename, the inode. */
const identityOf = (facts: BigIntStats): string => `${facts.ino}:${facts.size}:${facts.mtimeNs}:${facts.ctimeNs}`;

/**
 * The MD5 of each PEM nginx should serve, as the drift check compares it with nginx's digest. Every check used to read
 * all of them (at 100,000 self-signed domains ~100 MB of files through the libuv pool, beside the first changes after
 * a boot); now a file whose inode, size, mtime and ctime are those it was read with is a stat, and only a new, replaced
 * or edited one is read. ctime cannot be set back by hand, so a file edited with its mtime restored still reads again.
 */
export class PemDigests {
  private readonly known = new Map<string, { identity: string; md5: string }>();

  constructor(
    private readonly readText: (path: string) => Promise<string | null> = readPemText,
    private readonly now: () => number = Date.now,
  ) {}

  /** The MD5 of each of `names`' PEM in `certsDir`, in order (null: missing or unreadable). */
  async of(certsDir: string, names: readonly string[]): Promise<(string | null)[]> {
    const digests = new Array<string | null>(names.length).fill(null);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < names.length; i = next++)
        digests[i] = await this.digestOf(pemPath(certsDir, names[i] as string));
    };
    await Promise.all(Array.from({ length: Math.min(PEMS_AT_ONCE, names.length) }, worker));
    // Names no longer asked for (deleted domains) are not kept: the cache holds what the last check looked at.
    if (this.known.size > names.length) {
      const asked = new Set(names.map((name) => pemPath(certsDir, name)));
      for (const path of this.known.keys()) if (!asked.has(path)) this.known.delete(path);
    }
    return digests;
  }

  private async digestOf(path: string): Promise<string | null> {
    const facts = await statOnce(path, { bigint: true }).catch(() => null);
    if (facts === null) {
      this.known.delete(path);
      return null;
    }
    const identity = identityOf(facts);
    const known = this.known.get(path);
    if (known?.identity === identity) return known.md5;
    // Stat, then read: a write between the two leaves a newer file under the older identity, read again next time.
    const pem = await this.readText(path);
    if (pem === null) {
      this.known.delete(path);
      return null;
    }
    const digest = md5(pem);
    const changedAt = Number((facts.ctimeNs > facts.mtimeNs ? facts.ctimeNs : facts.mtimeNs) / 1_000_000n);
    if (this.now() - changedAt >= SETTLED_MS) this.known.set(path, { identity, md5: digest });
    else this.known.delete(path);
    return digest;
  }
}
