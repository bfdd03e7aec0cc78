import { X509Certificate } from 'node:crypto';
import { mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readPemText } from '../certs/pem-files.js';
import { createSelfSignedPem } from '../certs/self-signed.js';
import type { ControlClient } from '../nginx/control-client.js';
import { routesAndCertificatesDrift } from './drift.js';
import { md5 } from './held.js';
import { PemDigests, SETTLED_MS } from './pem-digests.js';

const names = ['a.test', 'b.test', 'c.test'];
const pemOf = (name: string): string => `-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----\n`;

describe('the drift check reads only the PEMs that changed since it last looked', () => {
  let dir = '';
  let reads: string[] = [];
  /** Files written by the tests are brand new: a clock past SETTLED_MS lets the cache keep what it read. */
  let clockAhead = SETTLED_MS + 1000;
  const counted = (): PemDigests =>
    new PemDigests(
      (path) => {
        reads.push(path);
        return readPemText(path);
      },
      () => Date.now() + clockAhead,
    );
  /** nginx holds the PEMs as first written. */
  const control = {
    get: () => Promise.resolve({ hosts: {}, certs: Object.fromEntries(names.map((name) => [name, md5(pemOf(name))])) }),
  } as unknown as ControlClient;
  const drift = (digests: PemDigests): Promise<string[]> =>
    routesAndCertificatesDrift(control, new Map(), names, dir, digests, () => Promise.resolve());

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postern-pem-digests-'));
    reads = [];
    clockAhead = SETTLED_MS + 1000;
    for (const name of names) await writeFile(join(dir, `${name}.pem`), pemOf(name));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('reads no file when nothing on disk changed', async () => {
    const digests = counted();
    expect(await drift(digests)).toEqual([]);
    expect(reads).toHaveLength(names.length);
    reads = [];
    expect(await drift(digests)).toEqual([]);
    expect(await digests.of(dir, names)).toEqual(names.map((name) => md5(pemOf(name))));
    expect(reads).toEqual([]);
  });

  // What the shared store records of each domain's PEM, compared at every drift check (certs/manager.ts).
  it("gives each PEM's first certificate's fingerprint, reading only a file that changed", async () => {
    const [first, second] = [await createSelfSignedPem('a.test'), await createSelfSignedPem('a.test')];
    await writeFile(join(dir, 'a.test.pem'), first);
    const digests = counted();
    const fingerprintOf = (pem: string): string => new X509Certificate(pem).fingerprint256;
    expect(await digests.fingerprintsOf(dir, ['a.test', 'none.test'])).toEqual([fingerprintOf(first), null]);
    reads = [];
    expect(await digests.fingerprintsOf(dir, ['a.test'])).toEqual([fingerprintOf(first)]);
    expect(reads).toEqual([]);
    await writeFile(join(dir, 'next.pem'), second);
    await rename(join(dir, 'next.pem'), join(dir, 'a.test.pem'));
    expect(await digests.fingerprintsOf(dir, ['a.test'])).toEqual([fingerprintOf(second)]);
    expect(reads).toEqual([join(dir, 'a.test.pem')]);
  });

  it('finds a PEM edited in place', async () => {
    const digests = counted();
    await drift(digests);
    reads = [];
    await writeFile(join(dir, 'b.test.pem'), `${pemOf('b.test')}# appended by hand\n`);
    expect(await drift(digests)).toEqual(['nginx serves another certificate for b.test than the one on disk']);
    expect(reads).toEqual([join(dir, 'b.test.pem')]);
  });

  it('finds a PEM replaced by another of the same length (renamed into place)', async () => {
    const digests = counted();
    await drift(digests);
    reads = [];
    const forged = pemOf('x.test');
    expect(forged.length).toBe(pemOf('a.test').length);
    await writeFile(join(dir, 'forged.tmp'), forged);
    await rename(join(dir, 'forged.tmp'), join(dir, 'a.test.pem'));
    expect(await drift(digests)).toEqual(['nginx serves another certificate for a.test than the one on disk']);
    expect(reads).toEqual([join(dir, 'a.test.pem')]);
  });

  it('reads a removed PEM put back in its place and compares it', async () => {
    const digests = counted();
    await drift(digests);
    await unlink(join(dir, 'c.test.pem'));
    expect(await digests.of(dir, names)).toEqual([md5(pemOf('a.test')), md5(pemOf('b.test')), null]);
    reads = [];
    await writeFile(join(dir, 'c.test.pem'), pemOf('y.test'));
    expect(await drift(digests)).toEqual(['nginx serves another certificate for c.test than the one on disk']);
    expect(reads).toEqual([join(dir, 'c.test.pem')]);
  });

  it('reads a file changed in the last moments again, even if its identity did not move', async () => {
    // Within one tick of the file system's clock an edit of the same length leaves size, mtime and ctime as they were.
    clockAhead = 0;
    const digests = counted();
    await drift(digests);
    await drift(digests);
    expect(reads).toHaveLength(2 * names.length);
  });
});
