// A domain's certificate state, as plain data: the data plane's certificate manager (`dataplane/certs/`) decides
// it, `db/certificate-store.ts` keeps it in the `certificates` table, the API shows `CertificateInfo`.

/** Facts about the certificate in use for a domain, shown by the API. */
export interface CertificateInfo {
  state: 'pending' | 'valid' | 'failed' | 'self-signed';
  issuer: string | null;
  notBefore: string | null;
  notAfter: string | null;
  fingerprint: string | null;
  error: string | null;
}

export type CertificateState = CertificateInfo['state'];

/** What is kept per domain. Timestamps are ISO 8601. */
export interface CertificateRecord extends CertificateInfo {
  /** When a failed issuance may be tried again; null = no retry scheduled. */
  nextAttemptAt: string | null;
  /** Consecutive failed issuances (reset by a success). */
  failures: number;
}

/** Certificate state per domain name. Synchronous, like better-sqlite3. */
export interface CertificateStore {
  get(domain: string): CertificateRecord | null;
  put(domain: string, record: CertificateRecord): void;
  delete(domain: string): void;
}
