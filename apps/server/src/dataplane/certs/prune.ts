import type { DataPlaneLogger, DesiredDomain } from '../types.js';
import type { PemFiles } from './pem-files.js';
import { FALLBACK_NAME } from './self-signed.js';
import type { CertificateStore } from './store.js';

/** Forgets domains: their PEM, cached facts and stored state. */
export interface Pruner {
  remove(name: string): Promise<void>;
  /**
   * Removes every domain not in `keep` (the fallback always stays), also ones deleted while the gateway was
   * down: it walks the PEMs on disk as well as the domains known since boot. Returns the names removed.
   */
  pruneExcept(keep: readonly string[], onDisk?: readonly string[]): Promise<string[]>;
}

export function createPruner(options: {
  pems: PemFiles;
  store: CertificateStore;
  known: Map<string, DesiredDomain>;
  logger: DataPlaneLogger;
}): Pruner {
  const { pems, store, known } = options;

  async function remove(name: string): Promise<void> {
    known.delete(name);
    store.delete(name);
    await pems.remove(name);
  }

  return {
    remove,
    async pruneExcept(keep, onDisk) {
      const wanted = new Set([...keep, FALLBACK_NAME]);
      const stale = new Set(onDisk ?? (await pems.listNames()));
      for (const name of known.keys()) stale.add(name);
      const removed = [...stale].filter((name) => !wanted.has(name));
      for (const name of removed) await remove(name);
      if (removed.length > 0) {
        options.logger.info({ domains: removed }, 'certificate: removed certificates of deleted domains');
      }
      return removed;
    },
  };
}
