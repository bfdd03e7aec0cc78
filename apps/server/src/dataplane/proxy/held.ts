import { createHash } from 'node:crypto';
import { ControlError, type ControlClient, type Refusal } from '../nginx/control-client.js';
import { certsBytes } from '../nginx/dict-sizes.js';

export const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

/**
 * A certificate read back from an nginx whose Lua module does not tell lengths (GET /digest `cert_bytes`), or one not
 * read yet: a self-signed ECDSA PEM (key and certificate) is ~1 KB, a CA's chain with an RSA key 3-6 KB.
 */
export const UNKNOWN_CERT_BYTES = 2048;

/** gw_certs bytes of one entry (dict-sizes.ts certsBytes). */
export const certBytes = (name: string, length: number): number => certsBytes([[name, length]]);

/**
 * The certificates nginx holds: name → MD5 of the PEM as pushed (or read back), and its length when known; with what
 * they take in gw_certs kept as they change, so sizing a push costs what the push holds, not what nginx holds (a sum
 * over 100,000 certificates for every part of a boot's push, and for every new domain, cost seconds).
 */
export class HeldCertificates {
  private readonly hashes = new Map<string, string>();
  private readonly lengths = new Map<string, number>();
  /** gw_certs bytes of everything held (a length not known: UNKNOWN_CERT_BYTES). */
  private heldBytes = 0;
  private knownLengths = 0;

  get size(): number {
    return this.hashes.size;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  /** The typical length of a PEM held (what a certificate not read yet is counted at). */
  get typicalLength(): number {
    return this.lengths.size > 0 ? Math.ceil(this.knownLengths / this.lengths.size) : UNKNOWN_CERT_BYTES;
  }

  md5Of(name: string): string | undefined {
    return this.hashes.get(name);
  }

  /** What `name` takes in gw_certs now (0: not held). */
  bytesOf(name: string): number {
    return this.hashes.has(name) ? certBytes(name, this.lengths.get(name) ?? UNKNOWN_CERT_BYTES) : 0;
  }

  set(name: string, hash: string, length?: number): void {
    this.delete(name);
    this.hashes.set(name, hash);
    if (length !== undefined) {
      this.lengths.set(name, length);
      this.knownLengths += length;
    }
    this.heldBytes += this.bytesOf(name);
  }

  delete(name: string): void {
    this.heldBytes -= this.bytesOf(name);
    this.hashes.delete(name);
    const length = this.lengths.get(name);
    if (length !== undefined) this.knownLengths -= length;
    this.lengths.delete(name);
  }

  clear(): void {
    this.hashes.clear();
    this.lengths.clear();
    this.heldBytes = 0;
    this.knownLengths = 0;
  }

  names(): IterableIterator<string> {
    return this.hashes.keys();
  }
}

/** What nginx holds for a host: the text pushed, or the MD5 read back from it. */
export type Held = { text: string; md5?: undefined } | { text?: undefined; md5: string };

export const isSame = (entry: Held | undefined, json: string): boolean =>
  entry !== undefined && (entry.text !== undefined ? entry.text === json : entry.md5 === md5(json));

/** What nginx's access module holds (docs/ACCESS.md). */
export interface HeldAccess {
  key: string | null;
  refs: Set<string>;
  revoked: Set<string>;
}

/**
 * What the running nginx holds, as far as this control plane knows: routes by host and their version, certificates,
 * HTTP-01 answers, access policies. Each part may be unknown (null: nginx adopted, restarted, reloaded or changed
 * behind our back, a push failed midway); it is then read back from nginx (GET /digest) before the next push, so a
 * push is always only what differs.
 */
export class NginxHolds {
  /** Routes nginx holds, by host; null: unknown, read back before the next push. */
  routes: Map<string, Held> | null = null;
  /** The version nginx's routes are at: the base of the next push. */
  version: string | null = null;
  /** Certificates nginx holds. */
  readonly certs = new HeldCertificates();
  /**
   * HTTP-01 answers handed to nginx, by token; null: unknown (nginx adopted or restarted), the next sync sets them all.
   * Answers of orders that ended while unknown may linger in nginx; they answer nothing anyone asks for.
   */
  challenges: Map<string, string> | null = null;
  /** What nginx's access module holds; null: unknown, learnt from its digest before the next push. */
  access: HeldAccess | null = null;
  /** Pushes refused for lack of room, by dictionary (since this control plane started). */
  readonly refusedPushes = new Map<string, number>();
  private sequence = 0;
  private readonly bootId = Date.now().toString(36);

  constructor(private readonly control: ControlClient) {}

  /** A version no push of this control plane used before. */
  nextVersion(): string {
    return `${this.bootId}.${++this.sequence}`;
  }

  /** Reads back what a running nginx (adopted, restarted, reloaded, or changed behind our back) holds. */
  async learn(): Promise<void> {
    const digest = await this.control.get<{
      version: string | null;
      hosts: Record<string, string>;
      certs: Record<string, string>;
      /** The PEMs' lengths (absent from an older Lua module). */
      cert_bytes?: Record<string, number>;
    }>('/digest');
    this.version = digest.version;
    this.routes = new Map(Object.entries(digest.hosts).map(([host, hash]) => [host, { md5: hash }]));
    this.challenges = null;
    this.access = null;
    this.certs.clear();
    const lengths = digest.cert_bytes ?? {};
    for (const [name, hash] of Object.entries(digest.certs)) {
      const length = lengths[name];
      this.certs.set(name, hash, typeof length === 'number' && Number.isSafeInteger(length) ? length : undefined);
    }
  }

  /** The routes nginx holds, read back first when unknown. */
  async knownRoutes(): Promise<Map<string, Held>> {
    if (this.routes === null) await this.learn();
    return this.routes as Map<string, Held>;
  }

  /** The refusal of a push nginx had no room for (counted), or null for any other error. */
  countRefusal(err: unknown): Refusal | null {
    const refusal = err instanceof ControlError ? err.refusal : null;
    if (refusal) this.refusedPushes.set(refusal.dict, (this.refusedPushes.get(refusal.dict) ?? 0) + 1);
    return refusal;
  }

  /** Routes and certificates are read back before the next push (GET /digest), so only what differs is pushed. */
  forget(): void {
    this.routes = null;
    this.challenges = null;
    this.access = null;
  }
}
