import { nextTurn, PLAN_SLICE_ROWS } from '../nginx/routes.js';
import type { DataPlaneLogger, DesiredDomain } from '../types.js';
import type { Issuance } from './issuance.js';
import { factsOf, type PemFiles } from './pem-files.js';
import { selfSignedRecord } from './renewal.js';
import { FALLBACK_NAME } from './self-signed.js';
import type { SelfSignedWriter } from './self-signed-writer.js';
import { putIfChanged, type CertificateStore } from './store.js';
import type { WorkQueue } from './work-queue.js';

/**
 * Renews self-signed PEMs in place: domains, certbot placeholders and the fallback. The reconciler ensures a
 * domain only when it is new or changes mode, so this pass is what keeps them from expiring.
 */
export interface SelfSignedRenewal {
  /**
   * Walks the PEMs on disk (so also domains not ensured since boot) and queues a renewal for each self-signed
   * one near expiry. Each PEM is parsed once per run of the manager; later passes use the cached facts.
   */
  queueDue(): Promise<void>;
}

export function createSelfSignedRenewal(options: {
  pems: PemFiles;
  selfSigned: SelfSignedWriter;
  issuance: Issuance;
  store: CertificateStore;
  known: ReadonlyMap<string, DesiredDomain>;
  queue: WorkQueue;
  logger: DataPlaneLogger;
}): SelfSignedRenewal {
  const { pems, selfSigned, store, known, logger } = options;

  /** A PEM someone still wants: the fallback, a domain ensured since boot, or one with state from an earlier run. */
  function isWanted(name: string): boolean {
    // The operator's own certificate is never replaced, whatever it is (also a self-signed one they uploaded).
    if (known.get(name)?.ssl === 'uploaded') return false;
    return name === FALLBACK_NAME || known.has(name) || store.get(name) !== null;
  }

  /** Re-checked here: ensure() or the CA may have replaced the PEM since the pass queued it. */
  async function renew(name: string): Promise<void> {
    if (!isWanted(name) || !selfSigned.isNeeded(name, await pems.read(name))) return;
    const facts = await selfSigned.write(name);
    if (name === FALLBACK_NAME) return;
    if (!isWanted(name)) {
      await pems.remove(name); // removed while it was being made: leave nothing behind
      return;
    }
    const stored = store.get(name);
    const mode = known.get(name)?.ssl ?? (stored?.state === 'self-signed' ? 'self-signed' : 'certbot');
    if (mode === 'certbot') options.issuance.recordPem(name, facts);
    else putIfChanged(store, name, selfSignedRecord(factsOf(facts)));
  }

  function queueRenewal(name: string): void {
    void options.queue.add(`renew:${name}`, () => renew(name), {
      onError: (err) =>
        logger.error(
          { err, domain: name },
          'certificate: self-signed renewal failed; the current certificate keeps serving',
        ),
    });
  }

  return {
    async queueDue() {
      let inTurn = 0;
      for (const name of await pems.listNames()) {
        // Cached facts resolve at once: 100,000 of them would hold the event loop in one turn (requests, changes).
        if (++inTurn === PLAN_SLICE_ROWS) {
          inTurn = 0;
          await nextTurn();
        }
        if (!isWanted(name)) continue; // a deleted domain's leftover: pruneExcept removes it
        if (selfSigned.isNeeded(name, await pems.read(name))) queueRenewal(name);
      }
    },
  };
}
