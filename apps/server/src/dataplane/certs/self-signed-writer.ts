import { existsSync, mkdirSync } from 'node:fs';
import { replaceFileSync } from '../atomic-write.js';
import type { DataPlaneLogger } from '../types.js';
import type { PemFacts, PemFiles } from './pem-files.js';
import type { SharedCertificates } from './store.js';
import { isDueForRenewal } from './renewal.js';
import { FALLBACK_NAME, createSelfSignedPem, describeCertificate } from './self-signed.js';

/** Makes and replaces self-signed PEMs; one at a time per name. */
export interface SelfSignedWriter {
  /**
   * A new self-signed PEM for the name; a write already running for it is shared. `isFirst`: the name has no PEM
   * yet (ensure's), so nobody is told of it: the reconciler that asked hands it to nginx, and no TCP/UDP instance
   * serves the name before its file is there.
   */
  write(name: string, isFirst?: boolean): Promise<PemFacts>;
  /**
   * Whether a self-signed PEM must be made: none servable, or a self-signed one (the fallback: whatever it
   * is, nothing else renews it) within the renew-before window. A CA-issued one is left to the ACME path.
   */
  isNeeded(name: string, facts: PemFacts | null): boolean;
  /** The PEM in use if it covers the name and is fresh enough (CA-issued only if allowed), else a new one. */
  ensureServable(name: string, allowIssued: boolean): Promise<PemFacts>;
}

export function createSelfSignedWriter(options: {
  pems: PemFiles;
  logger: DataPlaneLogger;
  now: () => number;
  onInstalled?: ((name: string) => void) | undefined;
  /** Several gateways: a domain's self-signed certificate is the one stored first, whoever made it. */
  shared?: SharedCertificates | undefined;
}): SelfSignedWriter {
  const { pems, logger, now } = options;
  /** ensure() and a renewal of the same name share one certificate. */
  const writing = new Map<string, Promise<PemFacts>>();

  async function createAndWrite(name: string, isFirst: boolean): Promise<PemFacts> {
    const started = Date.now();
    // Only nginx's masters (root) read these: they hand certificates to the workers in memory.
    mkdirSync(pems.certsDir, { recursive: true, mode: 0o700 });
    let pem = await createSelfSignedPem(pems.coveredNameOf(name));
    const madeAt = Date.now();
    if (options.shared && name !== FALLBACK_NAME) {
      // The one every gateway serves (so a pin holds whichever answers): ours, unless another gateway stored one
      // first. The database away: ours, offered again at the next ensure.
      const replacing = (await pems.read(name))?.fingerprint ?? null;
      pem =
        (await options.shared.offer(name, pem, replacing).catch((err: unknown) => {
          logger.warn(
            { err, domain: name },
            'certificate: could not share the self-signed certificate; serving it here',
          );
          return null;
        })) ?? pem;
    }
    const offeredAt = Date.now();
    // Atomic rename, no fsync: a crash leaves the old PEM or the new one; a power cut may leave none, an empty or a
    // short one, which the boot finds and makes again (dataplane/README.md "A new domain's certificate").
    replaceFileSync(pems.pathOf(name), pem, 0o600);
    const facts = describeCertificate(pem);
    // Where a change's certificate step goes (bench/apply.ts BENCH_ACCOUNT): made, shared, written.
    const times = { makeMs: madeAt - started, offerMs: offeredAt - madeAt, writeMs: Date.now() - offeredAt };
    logger.info({ domain: name, notAfter: facts.notAfter, ...times }, 'certificate: created self-signed certificate');
    pems.remember(name, facts);
    if (isFirst && name !== FALLBACK_NAME) pems.keepUnpushed(name, pem);
    // A replaced PEM (a renewal, a mode change, the fallback) is told of: a renewal is handed to nginx then, a TCP/UDP
    // instance serving the name reloads from the file. A first one is not: the reconciler that asked pushes it itself,
    // and telling made a second push of it, with a read of the file, beside the next change (dataplane/README.md).
    if (!isFirst || name === FALLBACK_NAME) options.onInstalled?.(name);
    return facts;
  }

  function write(name: string, isFirst = false): Promise<PemFacts> {
    const inFlight = writing.get(name);
    if (inFlight) return inFlight;
    const run = createAndWrite(name, isFirst).finally(() => writing.delete(name));
    writing.set(name, run);
    return run;
  }

  function isNeeded(name: string, facts: PemFacts | null): boolean {
    if (facts === null) return true;
    if (!facts.isSelfSigned && name !== FALLBACK_NAME) return false;
    return isDueForRenewal(facts.notAfter, now());
  }

  return {
    write,
    isNeeded,
    async ensureServable(name, allowIssued) {
      // A new domain has no file: a stat on the main thread (µs) says so, where the read it spares is a trip through
      // libuv's pool, behind a boot's or a drift check's reads.
      if (!existsSync(pems.pathOf(name))) return write(name, true);
      const facts = await pems.read(name);
      if (facts === null) return write(name, true);
      if (!facts.isSelfSigned && !allowIssued) return write(name);
      return isNeeded(name, facts) ? write(name) : facts;
    },
  };
}
