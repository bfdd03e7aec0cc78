import { firstCertificateFingerprint, readPemText } from '../certs/pem-files.js';
import { pemPath } from '../certs/self-signed.js';
import { mib, type ControlClient, type Refusal } from '../nginx/control-client.js';
import { nextTurn } from '../nginx/routes.js';
import { NO_ROOM } from '../reconcile/problems.js';
import { NoRoomError } from '../types.js';
import type { PublishGiven } from '../reconciler.js';
import { forEachSliced } from '../sliced.js';
import type { DictionaryGrowth } from './growth.js';
import { certBytes, md5, type NginxHolds } from './held.js';

/**
 * Bytes of PEMs per push: a boot at 100,000 self-signed domains pushes ~75 MB of PEMs, ~10 parts (500 certificates a
 * part made it 200, and each was sized against everything held: O(n) a part). Smaller than the control socket takes
 * (64 MiB: render-main.ts) so the files of the next part are read while nginx takes this one.
 */
const CERT_BYTES_PER_PUSH = 8 * 1024 * 1024;
/** Files read side by side (one after the other cost 2.9 s at 10,000; together 1.1 s)... */
const PEMS_READ_AT_ONCE = 32;
/** ...NAMES_PER_READ names at a time, the next ones while the caller pushes. */
const NAMES_PER_READ = 2048;

const readPem = (certsDir: string, name: string): Promise<string | null> => readPemText(pemPath(certsDir, name));

/** PEMs of `names` (null: missing or unreadable), PEMS_READ_AT_ONCE files at a time. */
async function readPems(certsDir: string, names: readonly string[]): Promise<(string | null)[]> {
  const pems: (string | null)[] = new Array<string | null>(names.length).fill(null);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < names.length; i = next++) pems[i] = await readPem(certsDir, names[i] as string);
  };
  await Promise.all(Array.from({ length: Math.min(PEMS_READ_AT_ONCE, names.length) }, worker));
  return pems;
}

/** The PEMs of `names` in order, NAMES_PER_READ at a time, the next ones read while the caller handles these. */
async function* readAhead(certsDir: string, names: readonly string[]): AsyncGenerator<[string, string | null][]> {
  const slice = (at: number): readonly string[] => names.slice(at, at + NAMES_PER_READ);
  let reading = names.length > 0 ? readPems(certsDir, slice(0)) : null;
  for (let at = 0; reading !== null; at += NAMES_PER_READ) {
    const pems = await reading;
    reading = at + NAMES_PER_READ < names.length ? readPems(certsDir, slice(at + NAMES_PER_READ)) : null;
    yield slice(at).map((name, j) => [name, pems[j] ?? null]);
  }
}

/** The PEMs of `names`: those `made` gives first, as they are, then the others read from disk (readAhead). */
async function* pemsOf(
  certsDir: string,
  names: readonly string[],
  made: ReadonlyMap<string, string> | undefined,
): AsyncGenerator<[string, string | null][]> {
  if (made === undefined || made.size === 0) {
    yield* readAhead(certsDir, names);
    return;
  }
  const given = names.filter((name) => made.has(name));
  if (given.length > 0) yield given.map((name) => [name, made.get(name) ?? null]);
  yield* readAhead(
    certsDir,
    names.filter((name) => !made.has(name)),
  );
}

/** A PEM of a part to push, with its MD5 and byte length (each computed once). */
interface PartPem {
  pem: string;
  md5: string;
  bytes: number;
}

/** PEMs looked at (fingerprint, MD5) between two turns of the event loop. */
const HASHED_PER_TURN = 512;

/** Certificates handed to nginx (POST /certs): the PEMs on disk that differ from what nginx holds. */
export class CertificatePusher {
  constructor(
    private readonly control: ControlClient,
    private readonly certsDir: string,
    private readonly holds: NginxHolds,
    private readonly growth: DictionaryGrowth,
  ) {}

  /**
   * Pushes the current PEMs of `names` that nginx does not hold yet, each file read once, those `made` gives not read
   * (a new domain's, just written: a read waits in libuv's pool behind what a boot or a drift check queued there).
   * `expected`: names whose file must be that certificate (its fingerprint, as recorded: reconcile/certificates.ts):
   * a file missing or holding another is not pushed, and its name returned. When one does not fit (the certificate
   * dictionary at its ceiling), the others are still pushed and NoRoomError names those left out.
   */
  async publish(names: readonly string[], { expected, made }: PublishGiven = {}): Promise<string[]> {
    if (this.holds.routes === null) await this.holds.learn();
    // Room for all of them first, from what nginx holds and the typical size of a PEM: one grow (a reload) for a
    // boot's 100,000 new certificates instead of one every time the parts pushed so far reach GROW_AT.
    this.growth.needs.gw_certs = await this.estimate(names);
    await this.growth.grow();
    const refused = new Refused();
    for (;;) {
      const differing: string[] = [];
      let part = new Map<string, PartPem>();
      let partBytes = 0;
      let isReloaded = false;
      for await (const read of pemsOf(this.certsDir, names, made)) {
        // A fingerprint and an MD5 per PEM (~20-50 µs): a boot's 2,048 a read were one turn of 100 ms under load.
        let inTurn = 0;
        for (const [name, pem] of read) {
          if (++inTurn === HASHED_PER_TURN) {
            inTurn = 0;
            await nextTurn();
          }
          const want = expected?.get(name);
          if (want !== undefined && (pem === null || firstCertificateFingerprint(pem) !== want)) {
            differing.push(name);
            continue;
          }
          const digest = pem === null ? null : md5(pem);
          if (pem === null || this.holds.certs.md5Of(name) === digest) continue;
          part.set(name, { pem, md5: digest as string, bytes: Buffer.byteLength(pem) });
          partBytes += name.length + pem.length;
        }
        if (partBytes < CERT_BYTES_PER_PUSH) continue;
        isReloaded = await this.pushPart(part, refused);
        if (isReloaded) break;
        part = new Map<string, PartPem>();
        partBytes = 0;
      }
      // The estimate fell short and the dictionary grew: it reloaded from the snapshot, which may lack the parts
      // pushed before this one, so everything is looked at again (those nginx holds as they are cost a read each).
      if (!isReloaded && part.size > 0) isReloaded = await this.pushPart(part, refused);
      if (isReloaded) continue;
      refused.throwIfAny();
      return differing;
    }
  }

  async unpublish(names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    await this.control.post('/certs', { del: names });
    for (const name of names) this.holds.certs.delete(name);
  }

  /**
   * Pushes `part` (or grows the dictionary first: true, nothing pushed). A part nginx has no room for is pushed in
   * halves, down to single certificates: those that do not fit are left out (`pushing`).
   */
  private async pushPart(part: ReadonlyMap<string, PartPem>, refused: Refused): Promise<boolean> {
    const { certs } = this.holds;
    let bytes = certs.bytes;
    for (const [name, pem] of part) bytes += certBytes(name, pem.bytes) - certs.bytesOf(name);
    this.growth.needs.gw_certs = bytes;
    if (await this.growth.grow()) return true;
    await this.pushFitting([...part], refused);
    return false;
  }

  private async pushFitting(entries: [string, PartPem][], refused: Refused): Promise<void> {
    try {
      await this.push(entries);
    } catch (err) {
      const why = this.holds.countRefusal(err);
      if (why === null) throw err;
      const [first] = entries;
      if (entries.length === 1 && first !== undefined) {
        refused.add(first[0], why);
        return;
      }
      const half = Math.ceil(entries.length / 2);
      await this.pushFitting(entries.slice(0, half), refused);
      await this.pushFitting(entries.slice(half), refused);
    }
  }

  /**
   * gw_certs as it would be with every one of `names` held, those not held yet at the typical size of a PEM (a slice
   * at a time: a boot's 100,000 names took ~90 ms in one turn).
   */
  private async estimate(names: readonly string[]): Promise<number> {
    const { certs } = this.holds;
    const typical = certs.typicalLength;
    let bytes = certs.bytes;
    const seen = new Set<string>();
    await forEachSliced(names, (name) => {
      if (seen.has(name)) return;
      seen.add(name);
      if (certs.md5Of(name) === undefined) bytes += certBytes(name, typical);
    });
    return bytes;
  }

  private async push(entries: readonly [string, PartPem][]): Promise<void> {
    await this.control.post('/certs', { set: Object.fromEntries(entries.map(([name, { pem }]) => [name, pem])) });
    for (const [name, pem] of entries) this.holds.certs.set(name, pem.md5, pem.bytes);
  }
}

/** One publish's certificates refused for lack of room, and why. */
class Refused {
  readonly names: string[] = [];
  private refusal: Refusal | null = null;

  add(name: string, why: Refusal): void {
    this.names.push(name);
    this.refusal = why;
  }

  throwIfAny(): void {
    const last = this.refusal;
    if (last === null || this.names.length === 0) return;
    throw new NoRoomError(
      `${NO_ROOM}the certificate of this domain: its certificate dictionary is full at ` +
        `${mib(last.capacity)} MiB and cannot grow further. The domain's services are not served; the next change ` +
        'tries again.',
      this.names,
    );
  }
}
