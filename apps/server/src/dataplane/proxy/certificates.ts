import { readPemText } from '../certs/pem-files.js';
import { pemPath } from '../certs/self-signed.js';
import { mib, type ControlClient, type Refusal } from '../nginx/control-client.js';
import { certsBytes } from '../nginx/dict-sizes.js';
import { NO_ROOM } from '../reconcile/problems.js';
import { NoRoomError } from '../types.js';
import type { DictionaryGrowth } from './growth.js';
import { md5, type NginxHolds } from './held.js';

/** Certificates per push: a full push at 10,000 domains is ~10-50 MB of PEMs. */
const CERTS_PER_PUSH = 500;
const PEMS_READ_AT_ONCE = 32;
/**
 * A certificate read back from an nginx whose Lua module does not tell lengths (GET /digest `cert_bytes`), or one not
 * read yet: a self-signed ECDSA PEM (key and certificate) is ~1 KB, a CA's chain with an RSA key 3-6 KB.
 */
const UNKNOWN_CERT_BYTES = 2048;

const readPem = (certsDir: string, name: string): Promise<string | null> => readPemText(pemPath(certsDir, name));

/** PEMs of `names`, read PEMS_READ_AT_ONCE at a time (one after the other cost 2.9 s at 10,000; together 1.1 s). */
export async function readPems(certsDir: string, names: readonly string[]): Promise<(string | null)[]> {
  const pems: (string | null)[] = [];
  for (let i = 0; i < names.length; i += PEMS_READ_AT_ONCE) {
    pems.push(...(await Promise.all(names.slice(i, i + PEMS_READ_AT_ONCE).map((name) => readPem(certsDir, name)))));
  }
  return pems;
}

/** Certificates handed to nginx (POST /certs): the PEMs on disk that differ from what nginx holds. */
export class CertificatePusher {
  constructor(
    private readonly control: ControlClient,
    private readonly certsDir: string,
    private readonly holds: NginxHolds,
    private readonly growth: DictionaryGrowth,
  ) {}

  /**
   * Pushes the current PEMs of `names` that nginx does not hold yet. When one does not fit (the certificate dictionary
   * at its ceiling), the others are still pushed, one by one, and NoRoomError names those left out.
   */
  async publish(names: readonly string[]): Promise<void> {
    if (this.holds.routes === null) await this.holds.learn();
    // Room for all of them first, from what nginx holds and the typical size of a PEM: one grow (a reload) for a
    // boot's 100,000 new certificates instead of one every time the parts pushed so far reach GROW_AT.
    this.growth.needs.gw_certs = this.estimate(names);
    await this.growth.grow();
    const refused: string[] = [];
    let refusal: Refusal | null = null;
    for (let i = 0; i < names.length; i += CERTS_PER_PUSH) {
      const batch = await this.changedPems(names.slice(i, i + CERTS_PER_PUSH));
      if (Object.keys(batch).length === 0) continue;
      this.growth.needs.gw_certs = this.need(batch);
      // The estimate fell short and the dictionary grew: it reloaded from the snapshot, which may lack the parts
      // pushed before this one, so they are looked at again (those nginx holds as they are cost a read each).
      if (await this.growth.grow()) i = -CERTS_PER_PUSH;
      if (i < 0) continue;
      try {
        await this.push(batch);
      } catch (err) {
        if (this.holds.countRefusal(err) === null) throw err;
        for (const [name, pem] of Object.entries(batch)) {
          await this.push({ [name]: pem }).catch((single: unknown) => {
            const why = this.holds.countRefusal(single);
            if (why === null) throw single;
            refusal = why;
            refused.push(name);
          });
        }
      }
    }
    const last = refusal as Refusal | null;
    if (last !== null && refused.length > 0)
      throw new NoRoomError(
        `${NO_ROOM}the certificate of this domain: its certificate dictionary is full at ` +
          `${mib(last.capacity)} MiB and cannot grow further. The domain's services are not served; the next change ` +
          'tries again.',
        refused,
      );
  }

  async unpublish(names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    await this.control.post('/certs', { del: names });
    for (const name of names) {
      this.holds.certs.delete(name);
      this.holds.certSizes.delete(name);
    }
  }

  /** The PEMs on disk of `names` that nginx does not hold as they are. */
  private async changedPems(names: readonly string[]): Promise<Record<string, string>> {
    const batch: Record<string, string> = {};
    const pems = await readPems(this.certsDir, names);
    names.forEach((name, j) => {
      const pem = pems[j];
      if (pem != null && this.holds.certs.get(name) !== md5(pem)) batch[name] = pem;
    });
    return batch;
  }

  /** gw_certs as it would be with every one of `names` held, those not held yet at the typical size of a PEM. */
  private estimate(names: readonly string[]): number {
    const sizes = new Map<string, number>();
    let total = 0;
    for (const size of this.holds.certSizes.values()) total += size;
    const known = this.holds.certSizes.size;
    const typical = known > 0 ? Math.ceil(total / known) : UNKNOWN_CERT_BYTES;
    for (const name of this.holds.certs.keys()) sizes.set(name, this.holds.certSizes.get(name) ?? typical);
    for (const name of names) if (!sizes.has(name)) sizes.set(name, typical);
    return certsBytes(sizes);
  }

  /** gw_certs as it would be with `batch` pushed. */
  private need(batch: Readonly<Record<string, string>>): number {
    const sizes = new Map<string, number>();
    for (const name of this.holds.certs.keys()) sizes.set(name, this.holds.certSizes.get(name) ?? UNKNOWN_CERT_BYTES);
    for (const [name, pem] of Object.entries(batch)) sizes.set(name, Buffer.byteLength(pem));
    return certsBytes(sizes);
  }

  private async push(batch: Record<string, string>): Promise<void> {
    await this.control.post('/certs', { set: batch });
    for (const [name, pem] of Object.entries(batch)) {
      this.holds.certs.set(name, md5(pem));
      this.holds.certSizes.set(name, Buffer.byteLength(pem));
    }
  }
}
