import { mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import type { CertificateAdapter, CertificateInfo, DataPlaneLogger, DesiredDomain } from '../types.js';
import { assertHost, isIPv4 } from '../validate.js';
import { createAcmeIssuer, describeAcmeError, type AcmeConfig, type ChallengeStore } from './acme.js';
import {
  decideNextAction, isDueForRenewal, markFailed, markIssued, markPending, newPendingRecord, selfSignedRecord,
  type CertificateRecord,
} from './renewal.js';
import { FALLBACK_NAME, createSelfSignedPem, describeCertificate, pemPath, type CertificateIssuer } from './self-signed.js';

// Every domain always has a PEM nginx can serve: self-signed domains a self-signed one; certbot domains a
// self-signed placeholder at once (never dark), replaced in the background by the CA's certificate. Issuance
// runs one domain at a time; state lives in `store` (the `certificates` table) so a restart neither forgets a
// failure's back-off nor re-issues a valid certificate. The periodic check (daily, and at start()) renews both
// kinds: certbot domains through the CA, every self-signed PEM (domains, placeholders, the fallback) in place,
// since the reconciler ensures a domain only when it is new or changes mode.

/** Certificate state per domain name. Synchronous, like better-sqlite3. */
export interface CertificateStore {
  get(domain: string): CertificateRecord | null;
  put(domain: string, record: CertificateRecord): void;
  delete(domain: string): void;
}

export function createMemoryCertificateStore(): CertificateStore & { records: Map<string, CertificateRecord> } {
  const records = new Map<string, CertificateRecord>();
  return {
    records,
    get: (domain) => records.get(domain) ?? null,
    put: (domain, record) => void records.set(domain, record),
    delete: (domain) => void records.delete(domain),
  };
}

export interface CertificateManagerOptions {
  dataDir: string;
  /** Default `<dataDir>/certs` (combined PEMs nginx serves). */
  certsDir?: string;
  /** Where HTTP-01 answers go (nginx serves them on port 80). */
  challenges: ChallengeStore;
  acme: AcmeConfig & { pollMinMs?: number; pollMaxMs?: number };
  store: CertificateStore;
  logger: DataPlaneLogger;
  now?: () => number;
  /** Name of the fallback certificate (unknown SNI): the gateway's public host. */
  fallbackHost?: string;
  /** Replaces the ACME issuer built from `acme` (unit tests). */
  issuer?: CertificateIssuer;
  /** How often renewals are checked; default daily. */
  checkIntervalMs?: number;
  /** Told after a PEM was written (created, renewed, issued): nginx must be given the new one. */
  onInstalled?: (name: string) => void;
  opensslBin?: string;
}

export interface CertificateManager extends CertificateAdapter {
  ensureFallback(): Promise<void>;
  /**
   * Removes the certificate, key and state of every domain not in `keep` (level-triggered, so a domain deleted
   * while the gateway was down is cleaned up at the next apply too). Returns the names removed.
   */
  pruneExcept(keep: readonly string[]): Promise<string[]>;
  /**
   * Lets issuance begin (call it once nginx answers ACME challenges, i.e. after the boot apply) and arms the
   * renewal timer. `ensure` before that only queues: a CA asked before nginx answers would fail the challenge.
   */
  start(): void;
  stop(): void;
  /** Issue a new certificate now, whatever its expiry; resolves with the outcome. */
  forceRenew(domain: string): Promise<CertificateInfo>;
  /** Resolves once no renewal check, renewal or issuance is queued or running (after start()). */
  idle(): Promise<void>;
  /** Runs the periodic check now, as the timer does (after start()); resolves once its work is done. */
  checkRenewals(): Promise<void>;
}

const DAY_MS = 24 * 3600 * 1000;
// setTimeout cannot wait longer than ~24.8 days; renewals are checked far more often anyway.
const MAX_TIMER_MS = 2 ** 31 - 1;

type PemFacts = ReturnType<typeof describeCertificate>;

function toInfo(record: CertificateRecord): CertificateInfo {
  const { state, issuer, notBefore, notAfter, fingerprint, error } = record;
  return { state, issuer, notBefore, notAfter, fingerprint, error };
}

function factsOf(facts: PemFacts): Pick<CertificateInfo, 'issuer' | 'notBefore' | 'notAfter' | 'fingerprint'> {
  return { issuer: facts.issuer, notBefore: facts.notBefore, notAfter: facts.notAfter, fingerprint: facts.fingerprint };
}

function covers(facts: PemFacts, name: string): boolean {
  const wanted = isIPv4(name) ? `IP Address:${name}` : `DNS:${name}`;
  return facts.subjectAltName?.split(', ').includes(wanted) ?? false;
}

export function createCertificateManager(options: CertificateManagerOptions): CertificateManager {
  const { store, logger, now = Date.now } = options;
  const fallbackHost = options.fallbackHost ?? 'localhost';
  const certsDir = options.certsDir ?? join(options.dataDir, 'certs');
  const issuer = options.issuer ?? createAcmeIssuer({
    ...options.acme, dataDir: options.dataDir, challenges: options.challenges, logger,
  });
  const checkIntervalMs = options.checkIntervalMs ?? DAY_MS;
  /** Domains the reconciler asked for, with their mode: the renewal check walks these. */
  const known = new Map<string, DesiredDomain>();
  /** Issuance per domain, queued or running; the chain runs them one at a time. */
  const queued = new Map<string, Promise<void>>();
  /** Self-signed renewals on the chain: serialised with issuance, so a renewal never overwrites a just-issued PEM. */
  const renewalsQueued = new Set<string>();
  /** Self-signed PEMs being written: ensure() and a renewal of the same name share one certificate. */
  const writing = new Map<string, Promise<PemFacts>>();
  let markStarted = (): void => undefined;
  let chain = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  let timer: NodeJS.Timeout | null = null;
  let isRunning = false;
  let checkPass: Promise<void> = Promise.resolve();
  let isPassWaiting = false;
  // What each PEM (only this manager and its issuer write them) holds, so neither an apply nor the periodic
  // check at 10,000 domains re-reads and parses 10,000 files or rewrites 10,000 unchanged rows.
  const factsCache = new Map<string, PemFacts>();

  /** The name a PEM is made for: the fallback's is the gateway's public host. */
  function coveredNameOf(name: string): string {
    return name === FALLBACK_NAME ? fallbackHost : name;
  }

  async function readFacts(name: string): Promise<PemFacts | null> {
    const cached = factsCache.get(name);
    if (cached) return cached;
    const pem = await readFile(pemPath(certsDir, name), 'utf8').catch(() => null);
    if (pem === null) return null;
    try {
      const facts = describeCertificate(pem);
      if (!covers(facts, coveredNameOf(name))) return null;
      factsCache.set(name, facts);
      return facts;
    } catch {
      return null; // corrupt: replaced below
    }
  }

  function putIfChanged(name: string, record: CertificateRecord): void {
    const stored = store.get(name);
    const isSame = stored !== null && (Object.keys(record) as (keyof CertificateRecord)[]).every((key) => stored[key] === record[key]);
    if (!isSame) store.put(name, record);
  }

  function writeSelfSigned(name: string): Promise<PemFacts> {
    const inFlight = writing.get(name);
    if (inFlight) return inFlight;
    const run = createAndWriteSelfSigned(name).finally(() => writing.delete(name));
    writing.set(name, run);
    return run;
  }

  async function createAndWriteSelfSigned(name: string): Promise<PemFacts> {
    // Only nginx's masters (root) read these: they hand certificates to the workers in memory.
    await mkdir(certsDir, { recursive: true, mode: 0o700 });
    const pem = await createSelfSignedPem(coveredNameOf(name), options.opensslBin);
    // Atomic rename: a crash leaves the old PEM or the new one, never half of one.
    await writeFileAtomic(pemPath(certsDir, name), pem, 0o600);
    const facts = describeCertificate(pem);
    logger.info({ domain: name, notAfter: facts.notAfter }, 'certificate: created self-signed certificate');
    factsCache.set(name, facts);
    options.onInstalled?.(name);
    return facts;
  }

  /**
   * Whether a self-signed PEM must be made: none servable, or a self-signed one (the fallback: whatever it
   * is, nothing else renews it) within the renew-before window. A CA-issued one is left to the ACME path.
   */
  function needsSelfSigned(name: string, facts: PemFacts | null): boolean {
    if (facts === null) return true;
    if (!facts.isSelfSigned && name !== FALLBACK_NAME) return false;
    return isDueForRenewal(facts.notAfter, now());
  }

  /** The PEM in use if it covers the name and is fresh enough, else a new self-signed one. */
  async function ensureServable(name: string, allowIssued: boolean): Promise<PemFacts> {
    const facts = await readFacts(name);
    if (facts === null || (!facts.isSelfSigned && !allowIssued)) return writeSelfSigned(name);
    return needsSelfSigned(name, facts) ? writeSelfSigned(name) : facts;
  }

  async function issue(name: string): Promise<void> {
    if (known.get(name)?.ssl !== 'certbot') return;
    const before = store.get(name) ?? newPendingRecord();
    store.put(name, markPending(before));
    try {
      await issuer.issue(name, pemPath(certsDir, name));
    } catch (err) {
      factsCache.delete(name); // an issuer may have replaced the file before failing
      const reason = describeAcmeError(err);
      const current = store.get(name);
      if (current !== null) store.put(name, markFailed(current, reason, now()));
      logger.warn({ domain: name, reason }, 'certificate: ACME issuance failed; the current certificate keeps serving');
      return;
    }
    factsCache.delete(name);
    options.onInstalled?.(name);
    const desired = known.get(name);
    // Removed or switched to self-signed while the CA was working: do not leave the issued PEM behind.
    if (desired === undefined) {
      await unlink(pemPath(certsDir, name)).catch(() => undefined);
      return;
    }
    if (desired.ssl !== 'certbot') {
      await writeSelfSigned(name);
      return;
    }
    const facts = await readFacts(name);
    const current = store.get(name) ?? newPendingRecord();
    if (facts === null) store.put(name, markFailed(current, 'the issued certificate could not be read back', now()));
    else store.put(name, markIssued(current, factsOf(facts)));
  }

  function enqueue(name: string): Promise<void> {
    const existing = queued.get(name);
    if (existing) return existing;
    const run = chain
      .then(() => issue(name))
      // issue() records its own failures; this only keeps one unexpected throw from stopping the queue.
      .catch((err: unknown) => logger.error({ err, domain: name }, 'certificate: issuance crashed'))
      .finally(() => {
        queued.delete(name);
        armTimer(); // a failure just set a retry date
      });
    queued.set(name, run);
    chain = run;
    return run;
  }

  function schedule(name: string, record: CertificateRecord): void {
    if (decideNextAction(record, now()).kind === 'issue') void enqueue(name);
  }

  /** Earliest moment something is due: a failed domain's retry, or the periodic renewal check. */
  function armTimer(): void {
    if (!isRunning) return;
    if (timer) clearTimeout(timer);
    let wakeAt = now() + checkIntervalMs;
    for (const name of known.keys()) {
      const record = store.get(name);
      if (record?.state === 'failed' && record.nextAttemptAt !== null) wakeAt = Math.min(wakeAt, Date.parse(record.nextAttemptAt));
    }
    timer = setTimeout(runChecks, Math.min(Math.max(wakeAt - now(), 1000), MAX_TIMER_MS));
    timer.unref();
  }

  function runChecks(): void {
    for (const [name, desired] of known) {
      const record = store.get(name);
      if (desired.ssl === 'certbot' && record !== null) schedule(name, record);
    }
    void requestRenewalPass();
    armTimer();
  }

  /** At most one pass runs and one waits: start(), the timer and checkRenewals() may overlap on a slow disk. */
  function requestRenewalPass(): Promise<void> {
    if (isPassWaiting) return checkPass;
    isPassWaiting = true;
    checkPass = checkPass
      .then(() => {
        isPassWaiting = false;
        return queueDueSelfSigned();
      })
      .catch((err: unknown) => logger.error({ err }, 'certificate: self-signed renewal check crashed'));
    return checkPass;
  }

  /** A PEM someone still wants: the fallback, a domain ensured since boot, or one with state from an earlier run. */
  function isWanted(name: string): boolean {
    return name === FALLBACK_NAME || known.has(name) || store.get(name) !== null;
  }

  async function listPemNames(): Promise<string[]> {
    const files = await readdir(certsDir).catch(() => []);
    return files.filter((file) => file.endsWith('.pem') && !file.startsWith('.')).map((file) => file.slice(0, -4));
  }

  /**
   * Walks the PEMs on disk (so also domains not ensured since boot) and queues a renewal for each self-signed
   * one near expiry. Each PEM is parsed once per run of the manager; later passes use the cached facts.
   */
  async function queueDueSelfSigned(): Promise<void> {
    for (const name of await listPemNames()) {
      if (!isWanted(name)) continue; // a deleted domain's leftover: pruneExcept removes it
      if (needsSelfSigned(name, await readFacts(name))) queueRenewal(name);
    }
  }

  function queueRenewal(name: string): void {
    if (renewalsQueued.has(name)) return;
    renewalsQueued.add(name);
    chain = chain
      .then(() => renewSelfSigned(name))
      .catch((err: unknown) => logger.error({ err, domain: name }, 'certificate: self-signed renewal failed; the current certificate keeps serving'))
      .finally(() => renewalsQueued.delete(name));
  }

  /** Re-checked here: ensure() or the CA may have replaced the PEM since the pass queued it. */
  async function renewSelfSigned(name: string): Promise<void> {
    if (!isWanted(name) || !needsSelfSigned(name, await readFacts(name))) return;
    const facts = await writeSelfSigned(name);
    if (name === FALLBACK_NAME) return;
    if (!isWanted(name)) {
      // Removed while openssl ran: leave nothing behind.
      factsCache.delete(name);
      await unlink(pemPath(certsDir, name)).catch(() => undefined);
      return;
    }
    const stored = store.get(name);
    const mode = known.get(name)?.ssl ?? (stored?.state === 'self-signed' ? 'self-signed' : 'certbot');
    if (mode === 'certbot') recordCertbot(name, facts);
    else putIfChanged(name, selfSignedRecord(factsOf(facts)));
  }

  /** Stores what a certbot domain's PEM now is and queues issuance if that is due. */
  function recordCertbot(name: string, facts: PemFacts): CertificateRecord {
    const stored = store.get(name);
    let record: CertificateRecord;
    if (stored === null || stored.state === 'self-signed' || (stored.state === 'valid' && facts.isSelfSigned)) {
      // First time (or the issued PEM was lost): an issued PEM already on disk counts, a placeholder does not.
      record = facts.isSelfSigned ? newPendingRecord(factsOf(facts)) : markIssued(newPendingRecord(), factsOf(facts));
    } else {
      record = { ...stored, ...factsOf(facts) }; // the facts always describe the PEM nginx serves now
    }
    putIfChanged(name, record);
    schedule(name, record);
    return record;
  }

  async function idle(): Promise<void> {
    await checkPass;
    await chain; // read after the pass: it may have queued renewals
  }

  async function removeDomain(name: string): Promise<void> {
    known.delete(name);
    factsCache.delete(name);
    store.delete(name);
    await unlink(pemPath(certsDir, name)).catch(() => undefined);
  }

  return {
    async ensureFallback() {
      const facts = await readFacts(FALLBACK_NAME);
      if (needsSelfSigned(FALLBACK_NAME, facts)) await writeSelfSigned(FALLBACK_NAME);
    },

    async ensure(domain) {
      const name = assertHost(domain.domain, 'domain');
      known.set(name, domain);
      try {
        if (domain.ssl === 'certbot') return toInfo(recordCertbot(name, await ensureServable(name, true)));
        const record = selfSignedRecord(factsOf(await ensureServable(name, false)));
        putIfChanged(name, record);
        return toInfo(record);
      } catch (err) {
        // No servable PEM could be made (openssl missing, disk full): report it, the reconciler goes on.
        const reason = err instanceof Error ? err.message : String(err);
        logger.error({ domain: name, reason }, 'certificate: could not prepare a certificate');
        const failed = markFailed(store.get(name) ?? newPendingRecord(), reason, now());
        store.put(name, failed);
        return toInfo(failed);
      }
    },

    remove: (domain) => removeDomain(assertHost(domain, 'domain')),

    async pruneExcept(keep) {
      const wanted = new Set([...keep, FALLBACK_NAME]);
      const stale = new Set(await listPemNames());
      for (const name of known.keys()) stale.add(name);
      const removed = [...stale].filter((name) => !wanted.has(name));
      for (const name of removed) await removeDomain(name);
      if (removed.length > 0) logger.info({ domains: removed }, 'certificate: removed certificates of deleted domains');
      return removed;
    },

    info(domain) {
      const record = store.get(domain);
      return record === null ? null : toInfo(record);
    },

    start() {
      isRunning = true;
      markStarted();
      runChecks();
    },

    stop() {
      isRunning = false;
      if (timer) clearTimeout(timer);
      timer = null;
    },

    async forceRenew(domain) {
      const name = assertHost(domain, 'domain');
      if (known.get(name)?.ssl !== 'certbot') throw new Error(`${name} does not use a CA-issued certificate`);
      await enqueue(name);
      armTimer();
      const record = store.get(name);
      if (record === null) throw new Error(`${name} was removed during the renewal`);
      return toInfo(record);
    },

    idle,

    checkRenewals() {
      runChecks();
      return idle();
    },
  };
}
