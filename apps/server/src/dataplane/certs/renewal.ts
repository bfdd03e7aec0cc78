import type { CertificateInfo, CertificateRecord } from '../../model/certificates.js';

// The certificate lifecycle as pure functions of (record, now), so every rule is unit-tested without a CA,
// a clock or a disk. The manager only stores what these return and acts on `nextAction`.
//
//   pending ──issued──▶ valid ──fewer than 30 days left──▶ pending (old certificate keeps serving)
//      │                                                      │
//      └──────────────── CA error ──▶ failed ◀────────────────┘
//                                       │ back-off elapsed
//                                       └──▶ pending

export type { CertificateRecord } from '../../model/certificates.js';

export const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;
const MINUTE = 60_000;
/** Delay after the 1st, 2nd, … consecutive failure; the last entry repeats (24 h cap). */
export const BACKOFF_STEPS_MS: readonly number[] = [
  1 * MINUTE,
  5 * MINUTE,
  30 * MINUTE,
  120 * MINUTE,
  360 * MINUTE,
  1440 * MINUTE,
];
const MAX_BACKOFF_MS = 1440 * MINUTE;

export type NextAction = { kind: 'issue' } | { kind: 'wait'; untilMs: number } | { kind: 'none' };

export function backoffDelayMs(failures: number): number {
  const index = Math.min(Math.max(failures, 1), BACKOFF_STEPS_MS.length) - 1;
  return BACKOFF_STEPS_MS[index] ?? MAX_BACKOFF_MS;
}

/** True when the certificate expires within 30 days (or its expiry is unknown). */
export function isDueForRenewal(notAfter: string | null, nowMs: number): boolean {
  if (notAfter === null) return true;
  const expiresMs = Date.parse(notAfter);
  return Number.isNaN(expiresMs) || expiresMs - nowMs < RENEW_BEFORE_MS;
}

/** What the manager should do for a domain that wants a CA-issued certificate. */
export function decideNextAction(record: CertificateRecord, nowMs: number): NextAction {
  switch (record.state) {
    case 'self-signed':
      return { kind: 'none' };
    case 'pending':
      return { kind: 'issue' };
    case 'failed': {
      const untilMs = record.nextAttemptAt === null ? nowMs : Date.parse(record.nextAttemptAt);
      return untilMs <= nowMs ? { kind: 'issue' } : { kind: 'wait', untilMs };
    }
    case 'valid':
      return isDueForRenewal(record.notAfter, nowMs) ? { kind: 'issue' } : { kind: 'none' };
  }
}

type CertificateFacts = Pick<CertificateInfo, 'issuer' | 'notBefore' | 'notAfter' | 'fingerprint' | 'names'>;

const NO_FACTS: CertificateFacts = { issuer: null, notBefore: null, notAfter: null, fingerprint: null, names: null };

export function newPendingRecord(facts: CertificateFacts = NO_FACTS): CertificateRecord {
  return { state: 'pending', ...facts, error: null, nextAttemptAt: null, failures: 0 };
}

/**
 * An issuance starts (first time, retry after failure, or renewal). The facts of the certificate in use are
 * kept: during a renewal the old certificate keeps serving until the new one replaces it. The failure count
 * is kept too, so a retry that fails again backs off further.
 */
export function markPending(record: CertificateRecord, nowMs?: number): CertificateRecord {
  const attempt = nowMs === undefined ? {} : { lastAttemptAt: new Date(nowMs).toISOString() };
  return { ...record, ...attempt, state: 'pending', error: null, nextAttemptAt: null };
}

/**
 * The operator's own certificate (domain mode `uploaded`): valid as uploaded until it ends, never renewed by a CA.
 * An expired one keeps its facts, so the console and the attention list say so.
 */
export function uploadedRecord(facts: CertificateFacts): CertificateRecord {
  return { state: 'valid', ...facts, error: null, nextAttemptAt: null, failures: 0 };
}

export function markIssued(record: CertificateRecord, facts: CertificateFacts): CertificateRecord {
  return { ...record, ...facts, state: 'valid', error: null, nextAttemptAt: null, failures: 0 };
}

/** The CA refused (or could not be reached): keep serving what is in use, retry after the back-off. */
export function markFailed(record: CertificateRecord, error: string, nowMs: number): CertificateRecord {
  const failures = record.failures + 1;
  return {
    ...record,
    state: 'failed',
    error,
    failures,
    nextAttemptAt: new Date(nowMs + backoffDelayMs(failures)).toISOString(),
  };
}

/** The domain is (now) served with a self-signed certificate by choice: no CA involved. */
export function selfSignedRecord(facts: CertificateFacts): CertificateRecord {
  return { state: 'self-signed', ...facts, error: null, nextAttemptAt: null, failures: 0 };
}
