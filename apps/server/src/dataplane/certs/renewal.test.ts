import { describe, expect, it } from 'vitest';
import {
  backoffDelayMs,
  decideNextAction,
  isDueForRenewal,
  markFailed,
  markIssued,
  markPending,
  newPendingRecord,
  selfSignedRecord,
} from './renewal.js';

const DAY = 24 * 3600 * 1000;
const NOW = Date.parse('2026-06-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const facts = (notAfterMs: number) => ({
  issuer: 'CN=Pebble',
  notBefore: iso(NOW - DAY),
  notAfter: iso(notAfterMs),
  fingerprint: 'AB:CD',
});

describe('renewal decision', () => {
  it('renews only when fewer than 30 days are left', () => {
    expect(isDueForRenewal(iso(NOW + 31 * DAY), NOW)).toBe(false);
    expect(isDueForRenewal(iso(NOW + 29 * DAY), NOW)).toBe(true);
    expect(isDueForRenewal(iso(NOW - DAY), NOW)).toBe(true);
    expect(isDueForRenewal(null, NOW)).toBe(true);
  });

  it('issues for pending, leaves a fresh valid certificate alone and renews an ageing one', () => {
    expect(decideNextAction(newPendingRecord(), NOW)).toEqual({ kind: 'issue' });
    const valid = markIssued(newPendingRecord(), facts(NOW + 60 * DAY));
    expect(decideNextAction(valid, NOW)).toEqual({ kind: 'none' });
    expect(decideNextAction(valid, NOW + 31 * DAY)).toEqual({ kind: 'issue' });
  });

  it('never asks a CA for a self-signed domain', () => {
    expect(decideNextAction(selfSignedRecord(facts(NOW + DAY)), NOW)).toEqual({ kind: 'none' });
  });

  it('waits out the back-off after a failure, then retries', () => {
    const failed = markFailed(newPendingRecord(), 'DNS problem', NOW);
    expect(decideNextAction(failed, NOW + 30_000)).toEqual({ kind: 'wait', untilMs: NOW + 60_000 });
    expect(decideNextAction(failed, NOW + 60_000)).toEqual({ kind: 'issue' });
  });
});

describe('back-off', () => {
  it('grows 1 min, 5 min, 30 min, 2 h, 6 h and is capped at 24 h', () => {
    const minutes = [1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffDelayMs(n) / 60_000);
    expect(minutes).toEqual([1, 5, 30, 120, 360, 1440, 1440, 1440]);
  });
});

describe('state transitions', () => {
  it('pending → valid records the certificate facts and clears the failure count', () => {
    const failedTwice = markFailed(markFailed(newPendingRecord(), 'x', NOW), 'y', NOW);
    const valid = markIssued(markPending(failedTwice), facts(NOW + 90 * DAY));
    expect(valid).toMatchObject({ state: 'valid', issuer: 'CN=Pebble', error: null, failures: 0, nextAttemptAt: null });
  });

  it('pending → failed keeps the CA reason and schedules the retry', () => {
    const failed = markFailed(newPendingRecord(), 'urn:ietf:params:acme:error:dns', NOW);
    expect(failed).toMatchObject({
      state: 'failed',
      error: 'urn:ietf:params:acme:error:dns',
      failures: 1,
      nextAttemptAt: iso(NOW + 60_000),
    });
  });

  it('failed → pending on retry keeps counting, so a second failure backs off further', () => {
    const retry = markPending(markFailed(newPendingRecord(), 'x', NOW));
    expect(retry).toMatchObject({ state: 'pending', error: null, failures: 1 });
    expect(markFailed(retry, 'x', NOW).nextAttemptAt).toBe(iso(NOW + 5 * 60_000));
  });

  it('valid → pending (renewal) keeps the facts of the certificate still being served', () => {
    const valid = markIssued(newPendingRecord(), facts(NOW + 10 * DAY));
    const renewing = markPending(valid);
    expect(renewing).toMatchObject({ state: 'pending', fingerprint: 'AB:CD', notAfter: valid.notAfter });
    const renewalFailed = markFailed(renewing, 'rate limited', NOW);
    expect(renewalFailed).toMatchObject({ state: 'failed', fingerprint: 'AB:CD', error: 'rate limited' });
  });
});
