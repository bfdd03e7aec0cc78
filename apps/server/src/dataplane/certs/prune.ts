import { forEachSliced } from '../sliced.js';
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
      // Each pass a slice at a time: at a boot `keep`, the files and the known domains are 100,000 names each, and in
      // one turn they held the changes beside it ~250-320 ms (bench/README.md).
      const wanted = new Set([FALLBACK_NAME]);
      await forEachSliced(keep, (name) => wanted.add(name));
      const removed: string[] = [];
      const seen = new Set<string>();
      const visit = (name: string): void => {
        if (wanted.has(name) || seen.has(name)) return;
        seen.add(name);
        removed.push(name);
      };
      await forEachSliced(onDisk ?? (await pems.listNames()), visit);
      await forEachSliced([...known.keys()], visit);
      for (const name of removed) await remove(name);
      if (removed.length > 0) {
        options.logger.info({ domains: removed }, 'certificate: removed certificates of deleted domains');
      }
      return removed;
    },
  };
}
