import { nextTurn, PLAN_SLICE_ROWS } from '../nginx/routes.js';
import type { ProxyAdapter } from '../reconciler.js';
import { forEachSliced } from '../sliced.js';
import type { CertificateAdapter, DesiredDomain } from '../types.js';

const names = (domains: readonly DesiredDomain[]): string[] => domains.map((domain) => domain.domain);

/** Certificates ensured side by side (file reads, and new self-signed ones for missing ones). */
const CERTIFICATE_CONCURRENCY = 16;

/**
 * The reconciler's side of certificates: which domains it has ensured (and handed to nginx), with the mode they
 * were ensured for. Renewals and retries are the certificate manager's own timers, so an apply only ensures
 * domains that are new or changed mode.
 */
export interface CertificateSync {
  /** Ensures and publishes the certificates of new or changed domains; returns their names. */
  ensureChanged(domains: readonly DesiredDomain[]): Promise<string[]>;
  /**
   * The PEMs on disk when the next `pruneDeleted` walks them (the first apply, or a domain of `domainNames`' run
   * deleted), else null: listed before a full run's turn to push, so a change beside it does not wait for the walk
   * (100,000 files at the supported size).
   */
  listForPrune(domainNames: readonly string[]): Promise<readonly string[] | null>;
  /**
   * Removes the certificates of deleted domains (call it once nginx no longer routes them). `onDisk`: what
   * `listForPrune` gave (a PEM made since is not on it, so not removed; those of `domainNames` are kept).
   */
  pruneDeleted(domainNames: readonly string[], onDisk?: readonly string[] | null): Promise<void>;
  /**
   * A scoped run's deleted (or renamed) domains: of `names`, those whose certificates it ensured are removed (call it
   * once nginx no longer routes them); returns their names.
   */
  removeGone(names: readonly string[]): Promise<string[]>;
  /** The next apply ensures every domain again. */
  forget(): void;
}

export function createCertificateSync(
  certs: CertificateAdapter,
  proxy: Pick<ProxyAdapter, 'publishCertificates' | 'unpublishCertificates'>,
): CertificateSync {
  /** Domain → its mode and the stored certificate's fingerprint when it was ensured (either changing: again). */
  const ensured = new Map<string, string>();
  /** Whether the PEMs on disk were pruned since the start (or since forget()). */
  let isPruned = false;
  // The order's settings too: another CA, challenge or DNS provider orders a new certificate (the manager decides).
  const stateOf = (domain: DesiredDomain): string =>
    [
      domain.ssl,
      domain.pemFingerprint ?? '',
      domain.challenge ?? '',
      domain.dnsProviderId ?? '',
      domain.acmeCaId ?? '',
    ].join(':');

  /** Ensures `domains`; returns the first PEMs they made, to be pushed as they are (not read back from disk). */
  const ensureAll = async (domains: readonly DesiredDomain[]): Promise<Map<string, string>> => {
    const made = new Map<string, string>();
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let domain = domains[next++]; domain !== undefined; domain = domains[next++]) {
        await certs.ensure(domain);
        const pem = certs.takeUnpushed?.(domain.domain) ?? null;
        if (pem !== null) made.set(domain.domain, pem);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CERTIFICATE_CONCURRENCY, domains.length) }, worker));
    return made;
  };

  /** The names ensured before that are not among `domainNames` (a slice at a time: 100,000 names at a boot). */
  const deletedOf = async (domainNames: readonly string[]): Promise<string[]> => {
    const current = new Set<string>();
    await forEachSliced(domainNames, (name) => current.add(name));
    const deleted: string[] = [];
    await forEachSliced(ensured.keys(), (name) => {
      if (!current.has(name)) deleted.push(name);
    });
    return deleted;
  };

  /** The adopted files found to hold their recorded PEMs: their facts cached, a slice at a time. */
  const confirmSliced = async (confirmed: readonly string[]): Promise<void> => {
    for (let at = 0; at < confirmed.length; at += PLAN_SLICE_ROWS) {
      if (at > 0) await nextTurn();
      certs.confirmRecorded?.(confirmed.slice(at, at + PLAN_SLICE_ROWS));
    }
  };

  return {
    async ensureChanged(domains) {
      // At a boot every domain (100,000 at the supported size) goes through the loops below: each a slice at a time,
      // the event loop free in between for the changes beside the boot (bench/README.md).
      const todo: DesiredDomain[] = [];
      // A restart: the domains whose records say which PEM serves them are not read here but where the push reads
      // them anyway; a file gone or replaced is then ensured like the others (which replaces it), and pushed.
      const expected = new Map<string, string>();
      const toEnsure: DesiredDomain[] = [];
      await forEachSliced(domains, (domain) => {
        if (ensured.get(domain.domain) === stateOf(domain)) return;
        todo.push(domain);
        const fingerprint = certs.adoptRecorded?.(domain) ?? null;
        if (fingerprint === null) toEnsure.push(domain);
        else expected.set(domain.domain, fingerprint);
      });
      const made = await ensureAll(toEnsure);
      const differing = new Set(await proxy.publishCertificates(names(todo), { expected, made }));
      if (expected.size > 0) await confirmSliced([...expected.keys()].filter((name) => !differing.has(name)));
      if (differing.size > 0) {
        const repairs = todo.filter((domain) => differing.has(domain.domain));
        const made = await ensureAll(repairs);
        await proxy.publishCertificates(names(repairs), { made });
      }
      await forEachSliced(todo, (domain) => ensured.set(domain.domain, stateOf(domain)));
      return names(todo);
    },

    async listForPrune(domainNames) {
      if (!certs.pruneExcept || !certs.listPems) return null;
      if (isPruned && (await deletedOf(domainNames)).length === 0) return null;
      return certs.listPems();
    },

    async pruneDeleted(domainNames, onDisk) {
      const deleted = await deletedOf(domainNames);
      // The manager's prune walks the PEMs on disk (200-400 ms at 100,000 files on this machine): only on the first
      // apply (domains deleted while the gateway was down) and when a domain was deleted, not on every change.
      if (certs.pruneExcept && (!isPruned || deleted.length > 0)) {
        const removed = await certs.pruneExcept(domainNames, onDisk ?? undefined);
        if (removed.length > 0) await proxy.unpublishCertificates(removed);
        isPruned = true;
      }
      await forEachSliced(deleted, (name) => ensured.delete(name));
    },

    async removeGone(names) {
      const gone = names.filter((name) => ensured.has(name));
      for (const name of gone) await certs.remove(name);
      if (gone.length > 0) await proxy.unpublishCertificates(gone);
      for (const name of gone) ensured.delete(name);
      return gone;
    },

    forget: () => {
      ensured.clear();
      isPruned = false;
    },
  };
}
