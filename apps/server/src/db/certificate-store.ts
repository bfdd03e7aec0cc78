import { eq } from 'drizzle-orm';
import type { CertificateStore } from '../dataplane/certs/manager.js';
import type { Db } from './client.js';
import { certificates, domains } from './schema.js';

/** The certificate manager's state, kept in the `certificates` table (one row per domain, cascades on delete). */
export function createDbCertificateStore(db: Db): CertificateStore {
  const idOf = (domain: string) => db.select({ id: domains.id }).from(domains).where(eq(domains.domain, domain)).get()?.id;
  return {
    get(domain) {
      const row = db
        .select({ c: certificates })
        .from(certificates)
        .innerJoin(domains, eq(domains.id, certificates.domainId))
        .where(eq(domains.domain, domain))
        .get()?.c;
      if (!row) return null;
      const { state, issuer, notBefore, notAfter, fingerprint, error, nextAttemptAt, failures } = row;
      return { state, issuer, notBefore, notAfter, fingerprint, error, nextAttemptAt, failures };
    },
    put(domain, record) {
      const domainId = idOf(domain);
      if (domainId === undefined) return; // deleted meanwhile: the cascade took its row
      const values = { ...record, updatedAt: new Date().toISOString() };
      db.insert(certificates).values({ domainId, ...values }).onConflictDoUpdate({ target: certificates.domainId, set: values }).run();
    },
    delete(domain) {
      const domainId = idOf(domain);
      if (domainId !== undefined) db.delete(certificates).where(eq(certificates.domainId, domainId)).run();
    },
  };
}
