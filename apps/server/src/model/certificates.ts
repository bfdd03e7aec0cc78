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

/** What is kept per domain. Timestamps are ISO 8601. */
export interface CertificateRecord extends CertificateInfo {
  /** When a failed issuance may be tried again; null = no retry scheduled. */
  nextAttemptAt: string | null;
  /** Consecutive failed issuances (reset by a success). */
  failures: number;
}

/**
 * Certificates shared by every gateway on one database (`db/certificate-store.ts`): one combined PEM (key + chain) per
 * domain, so every gateway serves the same certificate. Absent (unit tests, tools), each gateway keeps its own.
 */
export interface SharedCertificates {
  /** The PEM stored for the domain, or null. */
  load(name: string): Promise<string | null>;
  /**
   * Stores `pem` unless a certificate other than `replacing` (a fingerprint; null: none) is stored by now, in which
   * case that one stays. Returns the PEM stored afterwards (null: the domain is gone). First writer wins: gateways
   * racing to make a domain's self-signed certificate all end up serving one.
   */
  offer(name: string, pem: string, replacing: string | null): Promise<string | null>;
  /** Stores `pem` whatever is stored (a certificate the CA just issued). */
  put(name: string, pem: string): Promise<void>;
}

/** HTTP-01 answers by token, as nginx serves them at `/.well-known/acme-challenge/<token>` on port 80. */
export interface ChallengeStore {
  set(token: string, answer: string): Promise<void>;
  remove(token: string): Promise<void>;
}

/** HTTP-01 answers kept for every gateway (the database); each gateway's nginx loads them when told of a change. */
export interface SharedChallenges extends ChallengeStore {
  /**
   * Resolves once every other live gateway has said it serves the answer `set` stored for `token` (at once when there
   * is no other), or at a deadline, after which waiting longer would not help the order (cluster/acme-answers.ts).
   */
  served(token: string): Promise<void>;
}

/** Certificate state per domain name. Synchronous, like better-sqlite3. */
export interface CertificateStore {
  get(domain: string): CertificateRecord | null;
  put(domain: string, record: CertificateRecord): void;
  delete(domain: string): void;
}
