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
  /** When a CA was last asked (null: never; absent: records from before it). */
  lastAttemptAt?: string | null;
  /** The DNS names the certificate in use covers (absent: not read yet). */
  names?: string[] | null;
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

/** A DNS provider that writes DNS-01 challenge records, with its secret decrypted (never logged, never returned). */
export interface DnsProviderConfig {
  id: number;
  name: string;
  kind: 'rfc2136' | 'cloudflare' | 'route53' | 'acme-dns';
  /** The kind's public fields (contract `DnsProviderSchema`): server, port, keyName, algorithm, zone, zoneId, … */
  settings: Readonly<Record<string, string | number | null | undefined>>;
  /** TSIG key (base64), API token, AWS secret access key or acme-dns password. */
  secret: string;
  propagationTimeoutSeconds: number;
}

/** Everything an ACME order for a domain needs beyond its name (db/acme-settings.ts: the domain's CA and provider). */
export interface AcmeOrderSettings {
  directoryUrl: string;
  email?: string | undefined;
  /** External account binding (ZeroSSL, Google Trust Services, pebble's EAB mode). */
  eab?: { kid: string; hmacKey: string } | undefined;
  challenge: 'http-01' | 'dns-01';
  /** dns-01: the provider; absent with dns-01 is an error the order reports. */
  dns?: DnsProviderConfig | undefined;
}

/** Where the ACME issuer gets a domain's settings and the account key of a CA (shared by every gateway). */
export interface AcmeSettingsSource {
  orderSettings(domain: string): Promise<AcmeOrderSettings>;
  /** The account key (PEM) for a directory: the stored one, or `create()`'s, stored for every gateway (first wins). */
  accountKey(directoryUrl: string, create: () => Promise<Buffer>): Promise<Buffer>;
}
