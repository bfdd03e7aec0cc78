import type { ProxyAdapter } from '../reconciler.js';
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

  const ensureAll = async (domains: readonly DesiredDomain[]): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let domain = domains[next++]; domain !== undefined; domain = domains[next++]) await certs.ensure(domain);
    };
    await Promise.all(Array.from({ length: Math.min(CERTIFICATE_CONCURRENCY, domains.length) }, worker));
  };

  const hasDeleted = (domainNames: readonly string[]): boolean => {
    const current = new Set(domainNames);
    for (const name of ensured.keys()) if (!current.has(name)) return true;
    return false;
  };

  return {
    async ensureChanged(domains) {
      const todo = domains.filter((domain) => ensured.get(domain.domain) !== stateOf(domain));
      // A restart: the domains whose records say which PEM serves them are not read here but where the push reads
      // them anyway; a file gone or replaced is then ensured like the others (which replaces it), and pushed.
      const expected = new Map<string, string>();
      const toEnsure: DesiredDomain[] = [];
      for (const domain of todo) {
        const fingerprint = certs.adoptRecorded?.(domain) ?? null;
        if (fingerprint === null) toEnsure.push(domain);
        else expected.set(domain.domain, fingerprint);
      }
      await ensureAll(toEnsure);
      const differing = new Set(await proxy.publishCertificates(names(todo), expected));
      if (expected.size > 0) certs.confirmRecorded?.([...expected.keys()].filter((name) => !differing.has(name)));
      if (differing.size > 0) {
        const repairs = todo.filter((domain) => differing.has(domain.domain));
        await ensureAll(repairs);
        await proxy.publishCertificates(names(repairs));
      }
      for (const domain of todo) ensured.set(domain.domain, stateOf(domain));
      return names(todo);
    },

    async listForPrune(domainNames) {
      if (!certs.pruneExcept || !certs.listPems) return null;
      if (isPruned && !hasDeleted(domainNames)) return null;
      return certs.listPems();
    },

    async pruneDeleted(domainNames, onDisk) {
      const current = new Set(domainNames);
      const deleted = [...ensured.keys()].filter((name) => !current.has(name));
      // The manager's prune walks the PEMs on disk (200-400 ms at 100,000 files on this machine): only on the first
      // apply (domains deleted while the gateway was down) and when a domain was deleted, not on every change.
      if (certs.pruneExcept && (!isPruned || deleted.length > 0)) {
        const removed = await certs.pruneExcept(domainNames, onDisk ?? undefined);
        if (removed.length > 0) await proxy.unpublishCertificates(removed);
        isPruned = true;
      }
      for (const name of deleted) ensured.delete(name);
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
