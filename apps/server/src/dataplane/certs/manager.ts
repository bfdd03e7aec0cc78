import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFileSync } from '../atomic-write.js';
import type { CertificateAdapter, CertificateInfo, DataPlaneLogger, DesiredDomain } from '../types.js';
import { createAcmeIssuer, type AcmeConfig, type ChallengeStore } from './acme.js';
import type { AcmeSettingsSource } from '../../model/certificates.js';
import { createIssuance } from './issuance.js';
import { createPemFiles, factsOf, firstCertificateFingerprint, readPemText, type PemFiles } from './pem-files.js';
import { PemDigests } from '../proxy/pem-digests.js';
import { createPruner } from './prune.js';
import { assertCertificateName, createRecordedAdoption, orderKey, recordedFacts } from './recorded.js';
import { createRenewalSchedule } from './renewal-schedule.js';
import { markFailed, newPendingRecord, selfSignedRecord, uploadedRecord, type CertificateRecord } from './renewal.js';
import { FALLBACK_NAME, type CertificateIssuer } from './self-signed.js';
import { createSelfSignedRenewal } from './self-signed-renewal.js';
import { createSelfSignedWriter, type SelfSignedWriter } from './self-signed-writer.js';
import { putIfChanged, type CertificateStore, type SharedCertificates } from './store.js';
import { createWorkQueue } from './work-queue.js';

export { createMemoryCertificateStore, type CertificateStore } from './store.js';

// Every domain always has a PEM nginx can serve: self-signed domains a self-signed one; certbot domains a
// self-signed placeholder at once (never dark), replaced in the background by the CA's certificate. Issuance
// runs one domain at a time; state lives in `store` (the `certificates` table) so a restart neither forgets a
// failure's back-off nor re-issues a valid certificate. The periodic check (daily, and at start()) renews both
// kinds: certbot domains through the CA, every self-signed PEM (domains, placeholders, the fallback) in place,
// since the reconciler ensures a domain only when it is new or changes mode.
//
// This file only wires the parts together, one job each:
//   pem-files.ts            the PEMs on disk and what each holds (cached)
//   self-signed-writer.ts   in-process certificate → atomic write, one at a time per name
//   work-queue.ts           the one line issuances and renewals run on, closed until start()
//   issuance.ts             ACME issuance of certbot domains and their stored state
//   self-signed-renewal.ts  the pass renewing self-signed PEMs in place
//   renewal-schedule.ts     the timer: periodic check, or a failed issuance's back-off if sooner
//   prune.ts                forgetting deleted domains
//   recorded.ts             a restart taking the records' word for the PEMs on disk (the push checks each file)

export interface CertificateManagerOptions {
  dataDir: string;
  /** Default `<dataDir>/certs` (combined PEMs nginx serves). */
  certsDir?: string;
  /** Where HTTP-01 answers go (nginx serves them on port 80). */
  challenges: ChallengeStore;
  acme: AcmeConfig & { pollMinMs?: number; pollMaxMs?: number; propagationIntervalMs?: number };
  /** Each domain's CA, challenge and DNS provider, and the shared ACME accounts (the database). */
  acmeSettings?: AcmeSettingsSource | undefined;
  /** The gateway's resolvers (DNS-01 finds zones and their authoritative servers through them). */
  resolvers?: readonly string[] | undefined;
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
  /**
   * Several gateways on one database: the certificate of each domain is stored there and every gateway serves that
   * one (loaded when `DesiredDomain.pemFingerprint` differs from the file). Absent: this gateway's files only.
   */
  shared?: SharedCertificates;
  /** Several gateways: whether this one runs ACME issuance and renewals now (the `certificates` lease). */
  isHolder?: () => boolean;
  /** The PEMs' digests by file identity (shared with the drift check's look at nginx's: each file read once). */
  pemDigests?: PemDigests;
}

export interface CertificateManager extends CertificateAdapter {
  ensureFallback(): Promise<void>;
  /**
   * Removes the certificate, key and state of every domain not in `keep` (level-triggered, so a domain deleted
   * while the gateway was down is cleaned up at the next apply too). `onDisk`: the PEMs on disk as `listPems` gave
   * them (absent: listed now). Returns the names removed.
   */
  pruneExcept(keep: readonly string[], onDisk?: readonly string[]): Promise<string[]>;
  listPems(): Promise<string[]>;
  /**
   * Lets issuance begin (call it once nginx answers ACME challenges, i.e. after the boot apply) and arms the
   * renewal timer. `ensure` before that only queues: a CA asked before nginx answers would fail the challenge.
   * `firstCheckAfter`: the first renewal check (and the timer) waits for it. The boot's rebuild: at 100,000 domains a
   * check walks every PEM on disk, read and hashed one after another when nothing read them yet, beside the rebuild
   * and the first changes after it; after the rebuild they are the facts its ensure cached.
   */
  start(firstCheckAfter?: Promise<void>): void;
  stop(): void;
  /** Issue a new certificate now, whatever its expiry; resolves with the outcome. */
  forceRenew(domain: string): Promise<CertificateInfo>;
  /** Queues forceRenew in the background ("renew now"); false when this gateway does not issue, or no such domain. */
  renew(domain: string): boolean;
  /** Resolves once no renewal check, renewal or issuance is queued or running (after start()). */
  idle(): Promise<void>;
  /** Runs the periodic check now, as the timer does (after start()); resolves once its work is done. */
  checkRenewals(): Promise<void>;
  /** Domains whose PEM here is not the one stored for every gateway (drift). */
  differsFromStored(domains: readonly DesiredDomain[]): Promise<string[]>;
}

const DAY_MS = 24 * 3600 * 1000;

function toInfo(record: CertificateRecord): CertificateInfo {
  const { state, issuer, notBefore, notAfter, fingerprint, error } = record;
  return {
    state,
    issuer,
    notBefore,
    notAfter,
    fingerprint,
    error,
    lastAttemptAt: record.lastAttemptAt ?? null,
    names: record.names ?? null,
  };
}

const toInfoOrNull = (record: CertificateRecord | null): CertificateInfo | null =>
  record === null ? null : toInfo(record);

/** The PEM files nginx serves, with what the store recorded of each. */
function pemFilesOf(options: CertificateManagerOptions): PemFiles {
  const { store } = options;
  return createPemFiles({
    certsDir: options.certsDir ?? join(options.dataDir, 'certs'),
    fallbackHost: options.fallbackHost ?? 'localhost',
    // Only states that say which kind the PEM is: a pending or failed CA domain may serve either.
    recorded: (name) => recordedFacts(store, name),
  });
}

/** Where a PEM from the shared store goes: the files, and who is told a certificate changed. */
interface InstallTarget {
  pems: PemFiles;
  logger: DataPlaneLogger;
  onInstalled?: ((name: string) => void) | undefined;
}

/**
 * Writes a PEM another gateway stored (or this one lost) as the file nginx serves. `isFirst`: there was no file (a
 * new domain), so nobody is told of it: the reconciler whose ensure loaded it pushes it, as it does a first
 * self-signed one (self-signed-writer.ts); telling pushed it a second time, with a read of the file. A replaced file
 * (another certificate, or a damaged one) is told of: nginx gets it whatever it held, and a TCP/UDP instance serving
 * the name reloads.
 */
async function install(target: InstallTarget, name: string, pem: string, isFirst: boolean): Promise<void> {
  const { pems } = target;
  mkdirSync(pems.certsDir, { recursive: true, mode: 0o700 });
  // No fsync: the database holds it; a file a power cut lost or cut short is loaded again by the boot's check.
  replaceFileSync(pems.pathOf(name), pem, 0o600);
  pems.forget(name);
  if (isFirst) pems.keepUnpushed(name, pem);
  else target.onInstalled?.(name);
}

/**
 * Makes the file the stored certificate (loaded when the fingerprints differ), or, none stored yet, offers the file
 * (an upgrade from one gateway: its certificates go into the database once; the first offer wins). The database
 * away: the file keeps serving.
 */
async function syncWithShared(target: InstallTarget, shared: SharedCertificates, domain: DesiredDomain): Promise<void> {
  const { pems, logger } = target;
  const name = domain.domain;
  const stored = domain.pemFingerprint ?? null;
  // No file (a new domain): nothing to read, nor a trip through libuv's pool to find that out.
  const isFirst = !existsSync(pems.pathOf(name));
  const local = isFirst ? null : await pems.read(name);
  if (stored !== null && local?.fingerprint === stored) return;
  try {
    if (stored !== null) {
      const pem = await shared.load(name);
      if (pem !== null) await install(target, name, pem, isFirst);
      return;
    }
    if (local === null) return; // nothing to offer: ensure makes one, and offers it
    const pem = await readPemText(pems.pathOf(name));
    if (pem === null) return;
    const winner = await shared.offer(name, pem, null);
    if (winner !== null && firstCertificateFingerprint(winner) !== local.fingerprint)
      await install(target, name, winner, false);
  } catch (err) {
    logger.warn({ err, domain: name }, 'certificate: could not load the shared certificate; serving the one here');
  }
}

/**
 * The domains whose served file is not the stored certificate (forgotten by the cache, so a repair loads it). The
 * file itself, not the cache of what this gateway wrote: drift is a file removed or replaced behind its back. A file
 * unchanged since the last check (`digests`: inode, size and times) is a stat, not a read: every drift check (every
 * minute, and 3 s after each change) read all 100,000 PEMs at the supported size, one after another, beside changes.
 */
async function differsFromStored(
  pems: PemFiles,
  digests: PemDigests,
  domains: readonly DesiredDomain[],
): Promise<string[]> {
  const stored = domains.filter((domain) => domain.pemFingerprint != null);
  const onDisk = await digests.fingerprintsOf(
    pems.certsDir,
    stored.map((domain) => domain.domain),
  );
  const differing: string[] = [];
  for (const [i, domain] of stored.entries()) {
    if (onDisk[i] === domain.pemFingerprint) continue;
    pems.forget(domain.domain);
    differing.push(domain.domain);
  }
  return differing;
}

function acmeIssuerOf(options: CertificateManagerOptions): CertificateIssuer {
  return createAcmeIssuer({
    ...options.acme,
    dataDir: options.dataDir,
    challenges: options.challenges,
    settings: options.acmeSettings,
    resolvers: options.resolvers,
    logger: options.logger,
  });
}

/**
 * The operator's own certificate: the one stored for every gateway (loaded by syncWithShared), described as it is.
 * None here (the store unreachable at the upload): a placeholder serves and the domain shows the failure.
 */
async function ensureUploaded(
  {
    pems,
    store,
    selfSigned,
    now,
  }: { pems: PemFiles; store: CertificateStore; selfSigned: SelfSignedWriter; now: () => number },
  domain: DesiredDomain,
): Promise<CertificateRecord> {
  const name = domain.domain;
  const facts = await pems.read(name);
  if (facts !== null && domain.pemFingerprint != null && facts.fingerprint === domain.pemFingerprint) {
    const record = uploadedRecord(factsOf(facts));
    putIfChanged(store, name, record);
    return record;
  }
  const placeholder = await selfSigned.ensureServable(name, false);
  const failed = markFailed(
    selfSignedRecord(factsOf(placeholder)),
    'the uploaded certificate is not available on this gateway; a self-signed one serves meanwhile',
    now(),
  );
  store.put(name, failed);
  return failed;
}

export function createCertificateManager(options: CertificateManagerOptions): CertificateManager {
  const { store, logger, now = Date.now } = options;
  /** Domains the reconciler asked for, with their mode: the renewal check walks these. */
  const known = new Map<string, DesiredDomain>();
  const pems = pemFilesOf(options);
  const selfSigned = createSelfSignedWriter({
    pems,
    logger,
    now,
    onInstalled: options.onInstalled,
    shared: options.shared,
  });
  const queue = createWorkQueue();
  const issuer = options.issuer ?? acmeIssuerOf(options);
  const issuance = createIssuance({
    issuer,
    store,
    pems,
    selfSigned,
    known,
    queue,
    logger,
    now,
    onInstalled: options.onInstalled,
    onSettled: () => schedule.rearm(),
    shared: options.shared,
    isHolder: options.isHolder,
  });
  const selfSignedRenewal = createSelfSignedRenewal({ pems, selfSigned, issuance, store, known, queue, logger });
  const schedule = createRenewalSchedule({
    checkIntervalMs: options.checkIntervalMs ?? DAY_MS,
    now,
    known,
    store,
    issuance,
    logger,
    runPass: () => selfSignedRenewal.queueDue(),
    isHolder: options.isHolder,
  });
  const pruner = createPruner({ pems, store, known, logger });
  let isStopped = false;
  const digests = options.pemDigests ?? new PemDigests();
  const adoption = createRecordedAdoption({ pems, store, known, now, isShared: options.shared !== undefined });

  async function idle(): Promise<void> {
    await schedule.passDone();
    await queue.drained(); // read after the pass: it may have queued renewals
  }

  return {
    async ensureFallback() {
      const facts = await pems.read(FALLBACK_NAME);
      if (selfSigned.isNeeded(FALLBACK_NAME, facts)) await selfSigned.write(FALLBACK_NAME);
    },

    async ensure(domain) {
      const name = assertCertificateName(domain.domain);
      const previous = known.get(name);
      known.set(name, domain);
      // A certbot domain whose issuance runs here keeps its file: the issued certificate may be on disk before it is
      // stored for every gateway (the issuance stores it, and the next change loads nothing then).
      if (options.shared && !(domain.ssl === 'certbot' && issuance.isIssuing(name)))
        await syncWithShared({ pems, logger, onInstalled: options.onInstalled }, options.shared, domain);
      try {
        if (domain.ssl === 'uploaded') return toInfo(await ensureUploaded({ pems, store, selfSigned, now }, domain));
        if (domain.ssl === 'certbot') {
          const record = issuance.recordPem(name, await selfSigned.ensureServable(name, true));
          // Another CA, challenge or DNS provider: the operator expects a certificate made that way, now.
          if (previous?.ssl === 'certbot' && orderKey(previous) !== orderKey(domain)) void issuance.issue(name);
          return toInfo(record);
        }
        const record = selfSignedRecord(factsOf(await selfSigned.ensureServable(name, false)));
        putIfChanged(store, name, record);
        return toInfo(record);
      } catch (err) {
        // No servable PEM could be made (disk full, unwritable directory): report it, the reconciler goes on.
        const reason = err instanceof Error ? err.message : String(err);
        logger.error({ domain: name, reason }, 'certificate: could not prepare a certificate');
        const failed = markFailed(store.get(name) ?? newPendingRecord(), reason, now());
        store.put(name, failed);
        return toInfo(failed);
      }
    },

    adoptRecorded: (domain) => adoption.adopt(domain),
    confirmRecorded: (names) => adoption.confirm(names),

    remove: (domain) => pruner.remove(assertCertificateName(domain)),
    pruneExcept: (keep, onDisk) => pruner.pruneExcept(keep, onDisk),
    listPems: () => pems.listNames(),
    takeUnpushed: (name) => pems.takeUnpushed(name),

    info: (domain) => toInfoOrNull(store.get(domain)),

    start(firstCheckAfter) {
      queue.open();
      isStopped = false;
      if (firstCheckAfter === undefined) schedule.start();
      else
        void firstCheckAfter.then(() => {
          if (!isStopped) schedule.start();
        });
    },

    stop() {
      isStopped = true;
      schedule.stop();
    },

    async forceRenew(domain) {
      const name = assertCertificateName(domain);
      if (known.get(name)?.ssl !== 'certbot') throw new Error(`${name} does not use a CA-issued certificate`);
      await issuance.issue(name);
      schedule.rearm();
      const record = store.get(name);
      if (record === null) throw new Error(`${name} was removed during the renewal`);
      return toInfo(record);
    },

    renew(domain) {
      if (options.isHolder?.() === false || known.get(domain)?.ssl !== 'certbot') return false;
      void this.forceRenew(domain).catch((err: unknown) =>
        logger.error({ err, domain }, 'certificate: the renewal asked for could not run'),
      );
      return true;
    },

    idle,

    checkRenewals() {
      schedule.checkNow();
      return idle();
    },

    differsFromStored: (domains) => differsFromStored(pems, digests, domains),
  };
}
