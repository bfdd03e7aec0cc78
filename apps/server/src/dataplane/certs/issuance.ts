import { readFile } from 'node:fs/promises';
import type { DataPlaneLogger, DesiredDomain } from '../types.js';
import { describeAcmeError } from './acme.js';
import { factsOf, type PemFacts, type PemFiles } from './pem-files.js';
import {
  decideNextAction,
  markFailed,
  markIssued,
  markPending,
  newPendingRecord,
  type CertificateRecord,
} from './renewal.js';
import type { CertificateIssuer } from './self-signed.js';
import type { SelfSignedWriter } from './self-signed-writer.js';
import { putIfChanged, type CertificateStore, type SharedCertificates } from './store.js';
import type { WorkQueue } from './work-queue.js';

/** CA-issued certificates of certbot domains: what their state is, and issuance on the manager's work queue. */
export interface Issuance {
  /** Queues an issuance (one per domain at a time); resolves once it ran, its outcome in the store. */
  issue(name: string): Promise<void>;
  /** Queues an issuance if the record says one is due (pending, failed with its back-off over, near expiry). */
  issueIfDue(name: string, record: CertificateRecord): void;
  /** Stores what a certbot domain's PEM now is and queues issuance if that is due. */
  recordPem(name: string, facts: PemFacts): CertificateRecord;
  /**
   * Whether an issuance for the name runs now: from the order until the issued PEM is stored for every gateway. Its
   * file may already be the issued certificate while the store still holds the placeholder; loading the stored one
   * over it then (`syncWithShared`) threw the issued certificate away and ordered again.
   */
  isIssuing(name: string): boolean;
}

export function createIssuance(options: {
  issuer: CertificateIssuer;
  store: CertificateStore;
  pems: PemFiles;
  selfSigned: SelfSignedWriter;
  /** The domains the reconciler asked for, with their mode. */
  known: ReadonlyMap<string, DesiredDomain>;
  queue: WorkQueue;
  logger: DataPlaneLogger;
  now: () => number;
  onInstalled?: ((name: string) => void) | undefined;
  /** After every issuance: a failure just set a retry date the timer must wake for. */
  onSettled: () => void;
  /** Several gateways: where the issued certificate goes so every gateway serves it. */
  shared?: SharedCertificates | undefined;
  /** Several gateways: whether this one runs issuance now (holds the `certificates` lease). */
  isHolder?: (() => boolean) | undefined;
}): Issuance {
  const { issuer, store, pems, known, logger, now } = options;

  /** Names whose issuance runs (see isIssuing). */
  const issuing = new Set<string>();

  async function run(name: string): Promise<void> {
    if (known.get(name)?.ssl !== 'certbot') return;
    // Another gateway orders certificates; it stores them and this one loads them (ensure).
    if (options.isHolder?.() === false) return;
    issuing.add(name);
    try {
      await order(name);
    } finally {
      issuing.delete(name);
    }
  }

  async function order(name: string): Promise<void> {
    const before = store.get(name) ?? newPendingRecord();
    store.put(name, markPending(before, now()));
    try {
      await issuer.issue(name, pems.pathOf(name));
    } catch (err) {
      pems.forget(name); // an issuer may have replaced the file before failing
      const reason = describeAcmeError(err);
      const current = store.get(name);
      if (current !== null) store.put(name, markFailed(current, reason, now()));
      logger.warn({ domain: name, reason }, 'certificate: ACME issuance failed; the current certificate keeps serving');
      return;
    }
    pems.forget(name);
    options.onInstalled?.(name);
    const desired = known.get(name);
    // Removed or switched to self-signed while the CA was working: do not leave the issued PEM behind.
    if (desired === undefined) {
      await pems.remove(name);
      return;
    }
    if (desired.ssl !== 'certbot') {
      await options.selfSigned.write(name);
      return;
    }
    const facts = await pems.read(name);
    const current = store.get(name) ?? newPendingRecord();
    if (facts === null) {
      store.put(name, markFailed(current, 'the issued certificate could not be read back', now()));
      return;
    }
    store.put(name, markIssued(current, factsOf(facts)));
    if (options.shared) {
      try {
        await options.shared.put(name, await readFile(pems.pathOf(name), 'utf8'));
      } catch (err) {
        // Served here only: the other gateways keep the old one. Issued again after the back-off.
        const reason = `the issued certificate could not be stored for the other gateways: ${describeAcmeError(err)}`;
        logger.error({ domain: name, reason }, 'certificate: could not share the issued certificate');
        store.put(name, markFailed(store.get(name) ?? current, reason, now()));
      }
    }
  }

  function issue(name: string): Promise<void> {
    return options.queue.add(`issue:${name}`, () => run(name), {
      // run() records its own failures; this only keeps one unexpected throw from stopping the queue.
      onError: (err) => logger.error({ err, domain: name }, 'certificate: issuance crashed'),
      onSettled: options.onSettled,
    });
  }

  function issueIfDue(name: string, record: CertificateRecord): void {
    if (decideNextAction(record, now()).kind === 'issue') void issue(name);
  }

  return {
    issue,
    issueIfDue,
    isIssuing: (name) => issuing.has(name),
    recordPem(name, facts) {
      const stored = store.get(name);
      let record: CertificateRecord;
      if (stored === null || stored.state === 'self-signed' || (stored.state === 'valid' && facts.isSelfSigned)) {
        // First time (or the issued PEM was lost): an issued PEM already on disk counts, a placeholder does not.
        record = facts.isSelfSigned ? newPendingRecord(factsOf(facts)) : markIssued(newPendingRecord(), factsOf(facts));
      } else {
        record = { ...stored, ...factsOf(facts) }; // the facts always describe the PEM nginx serves now
      }
      putIfChanged(store, name, record);
      issueIfDue(name, record);
      return record;
    },
  };
}
