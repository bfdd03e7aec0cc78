import type { CertificateRecord, CertificateStore } from '../../model/certificates.js';

// `db/certificate-store.ts` is the real store (the `certificates` table); this one is for tests and tools.
export type { CertificateStore, SharedCertificates } from '../../model/certificates.js';

export function createMemoryCertificateStore(): CertificateStore & { records: Map<string, CertificateRecord> } {
  const records = new Map<string, CertificateRecord>();
  return {
    records,
    get: (domain) => records.get(domain) ?? null,
    put: (domain, record) => void records.set(domain, record),
    delete: (domain) => void records.delete(domain),
  };
}

/** Writes the record only when it differs: at 10,000 domains a periodic pass must not rewrite unchanged rows. */
export function putIfChanged(store: CertificateStore, name: string, record: CertificateRecord): void {
  const stored = store.get(name);
  const keys = Object.keys(record) as (keyof CertificateRecord)[];
  // `names` is a list: compared by value, or every pass would rewrite every row.
  const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  const isSame = stored !== null && keys.every((key) => same(stored[key], record[key]));
  if (!isSame) store.put(name, record);
}
