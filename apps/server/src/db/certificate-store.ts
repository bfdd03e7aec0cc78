import { eq, gte, sql } from 'drizzle-orm';
import type { CertificateRecord, CertificateStore } from '../model/certificates.js';
import { firstCertificateFingerprint, splitPem } from '../lib/pem.js';
import { createSingleFlight } from '../lib/serial.js';
import type { SecretBox } from '../secrets.js';
import type { Tx, Store } from './client.js';
import { certificatePems, certificates, domains } from './schema.js';

export interface DbCertificateStore extends CertificateStore {
  /** Resolves when every change made so far is in the database (the next write retried once if one failed). */
  flush(): Promise<void>;
  /**
   * Several gateways: reads the records the holder of the `certificates` lease changed since the last read (a minute
   * of overlap covers clock skew between gateways). The embedded engine has one gateway: nothing to read.
   */
  refresh(): Promise<void>;
}

/**
 * The certificate manager's state, kept in the `certificates` table (one row per domain, cascades on delete).
 *
 * The manager asks for a record per domain many times a pass, synchronously; the rows are read once here (one query,
 * where a read per domain cost seconds at 10,000 domains) and kept in memory, and every change is written behind,
 * in order, one write at a time. A write that fails (database away) stays queued and is retried with the next change
 * or flush; the memory copy is what this gateway acts on meanwhile.
 */
export async function openDbCertificateStore(
  db: Store,
  onError: (err: unknown) => void = () => undefined,
  options: {
    /**
     * Several gateways: whether this one holds the `certificates` lease. Only the holder writes records (it issues);
     * the others keep their changes in memory and read the holder's (refresh). Default: always.
     */
    isHolder?: () => boolean;
  } = {},
): Promise<DbCertificateStore> {
  const records = new Map<string, CertificateRecord>();
  /** The newest `updated_at` read. */
  let watermark = '';
  /**
   * Per read in flight, the domains this gateway wrote meanwhile: on PostgreSQL a read does not wait for a write, so
   * its row may be older than the write that just committed, and the memory copy is the newer one.
   */
  const readsInFlight = new Set<Set<string>>();
  async function read(since: string): Promise<void> {
    const writtenMeanwhile = new Set<string>();
    readsInFlight.add(writtenMeanwhile);
    const rows = await db
      .select({ domain: domains.domain, c: certificates })
      .from(certificates)
      .innerJoin(domains, eq(domains.id, certificates.domainId))
      .where(gte(certificates.updatedAt, since))
      .finally(() => readsInFlight.delete(writtenMeanwhile));
    for (const { domain, c } of rows) {
      if (c.updatedAt > watermark) watermark = c.updatedAt;
      if (dirty.has(domain)) continue; // this gateway's own change, not written yet
      if (writtenMeanwhile.has(domain)) continue; // written while this read ran: the row may be the one before
      const { state, issuer, notBefore, notAfter, fingerprint, error, nextAttemptAt, failures, lastAttemptAt, names } =
        c;
      records.set(domain, {
        state,
        issuer,
        notBefore,
        notAfter,
        fingerprint,
        error,
        nextAttemptAt,
        failures,
        lastAttemptAt,
        names,
      });
    }
  }

  /** Domains whose row must be written (their latest record, or null for a delete), in order of change. */
  const dirty = new Map<string, CertificateRecord | null>();
  await read('');
  const isHolder = options.isHolder ?? (() => true);

  async function writeOne(domain: string, record: CertificateRecord | null): Promise<void> {
    const updatedAt = new Date().toISOString();
    await db.write(async (tx) => {
      const owner = await tx.select({ id: domains.id }).from(domains).where(eq(domains.domain, domain)).get();
      if (owner === undefined) return; // the domain was deleted meanwhile: the cascade took its row
      if (record === null) {
        await tx.delete(certificates).where(eq(certificates.domainId, owner.id)).run();
        return;
      }
      const { state, issuer, notBefore, notAfter, fingerprint, error, nextAttemptAt, failures } = record;
      const lastAttemptAt = record.lastAttemptAt ?? null;
      const names = record.names == null ? null : JSON.stringify(record.names);
      // Plain SQL: drizzle's upsert builder costs ~0.2 ms per call and a cold boot writes a row per domain.
      await tx.run(sql`insert into certificates (domain_id, state, issuer, not_before, not_after, fingerprint, error,
          next_attempt_at, failures, last_attempt_at, names, created_at, updated_at)
        values (${owner.id}, ${state}, ${issuer}, ${notBefore}, ${notAfter}, ${fingerprint}, ${error}, ${nextAttemptAt},
          ${failures}, ${lastAttemptAt}, ${names}, ${updatedAt}, ${updatedAt})
        on conflict (domain_id) do update set state = excluded.state, issuer = excluded.issuer,
          not_before = excluded.not_before, not_after = excluded.not_after, fingerprint = excluded.fingerprint,
          error = excluded.error, next_attempt_at = excluded.next_attempt_at, failures = excluded.failures,
          last_attempt_at = excluded.last_attempt_at, names = excluded.names, updated_at = excluded.updated_at`);
    });
    for (const written of readsInFlight) written.add(domain);
  }

  const drain = createSingleFlight(async () => {
    for (const [domain, record] of dirty) {
      await writeOne(domain, record);
      // A newer change made while this one was written stays queued (the map entry was replaced).
      if (dirty.get(domain) === record) dirty.delete(domain);
    }
  });

  function schedule(domain: string, record: CertificateRecord | null): void {
    if (!isHolder()) return;
    dirty.delete(domain); // re-inserted at the end: writes follow the order of changes
    dirty.set(domain, record);
    drain().catch(onError);
  }

  return {
    get: (domain) => records.get(domain) ?? null,
    put(domain, record) {
      records.set(domain, record);
      schedule(domain, record);
    },
    delete(domain) {
      records.delete(domain);
      schedule(domain, null);
    },
    async flush() {
      while (dirty.size > 0) await drain();
    },
    async refresh() {
      if (db.engine === 'sqlite') return;
      await read(watermark === '' ? '' : new Date(Date.parse(watermark) - 60_000).toISOString());
    },
  };
}

/**
 * Stores `pem` (key first, then the chain) as the certificate every gateway serves for a domain, inside the caller's
 * transaction: the chain in the clear, the key encrypted with the secret key.
 */
export async function storeCertificatePem(tx: Tx, secrets: SecretBox, domainId: number, pem: string): Promise<void> {
  const parts = splitPem(pem);
  const fingerprint = firstCertificateFingerprint(pem);
  if (parts === null || fingerprint === null) throw new Error('not a combined PEM (private key and certificate)');
  const at = new Date().toISOString();
  const values = { fingerprint, chain: parts.chain, keyEnc: secrets.encrypt(parts.key), updatedAt: at };
  await tx
    .insert(certificatePems)
    .values({ domainId, ...values, createdAt: at })
    .onConflictDoUpdate({ target: certificatePems.domainId, set: values })
    .run();
}
