import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DesiredDomain } from '../types.js';
import type { Issuance } from './issuance.js';
import { createRenewalSchedule } from './renewal-schedule.js';
import { markFailed, newPendingRecord } from './renewal.js';
import type { CertificateRecord } from '../../model/certificates.js';

const DOMAINS = 5_000;
const NOW = Date.parse('2026-11-28T00:00:00Z');
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** `DOMAINS` certbot domains, each with a record; `failed` names one whose retry is due `retryInMs` from now. */
function scheduleOf(failed?: { name: string; retryInMs: number }) {
  const known = new Map<string, DesiredDomain>();
  for (let i = 0; i < DOMAINS; i++) {
    const domain = `d${i}.example.com`;
    known.set(domain, { domain, ssl: 'certbot' } as DesiredDomain);
  }
  const retry = failed && markFailed(newPendingRecord(), 'rate limited', NOW);
  const failedRecord: CertificateRecord | undefined = retry && {
    ...retry,
    nextAttemptAt: new Date(NOW + failed.retryInMs).toISOString(),
  };
  let reads = 0;
  const issued: string[] = [];
  let passes = 0;
  const schedule = createRenewalSchedule({
    checkIntervalMs: 24 * 3600 * 1000,
    now: () => NOW,
    known,
    store: {
      get: (name) => {
        reads++;
        return name === failed?.name && failedRecord ? failedRecord : newPendingRecord();
      },
      put: () => undefined,
      delete: () => undefined,
    },
    issuance: { issueIfDue: (name: string) => void issued.push(name) } as unknown as Issuance,
    runPass: () => {
      passes++;
      return Promise.resolve();
    },
    logger: silent,
  });
  return { schedule, issued, reads: () => reads, passes: () => passes };
}

/** The next turn of the event loop: what a change or an API request waiting meanwhile runs in. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('renewal schedule', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  // At 100,000 domains a check's two walks (due issuances, then the earliest retry) held the event loop 100-300 ms in
  // one turn, right after a boot's rebuild, when the first changes come.
  it('gives the event loop back while a check walks many domains, and still queues every due issuance', async () => {
    const { schedule, issued, reads, passes } = scheduleOf();
    schedule.start();
    await nextTurn();
    expect(reads()).toBeLessThan(DOMAINS);
    await schedule.passDone();
    expect(issued).toHaveLength(DOMAINS);
    expect(passes()).toBe(1);
    schedule.stop();
  });

  it('arms the timer at the earliest failed retry found by the walk', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { schedule, passes } = scheduleOf({ name: `d${DOMAINS - 1}.example.com`, retryInMs: 5_000 });
    schedule.start();
    await schedule.passDone();
    // The retry date is found at the walk's end (turns of the event loop later), then the timer is armed.
    for (let turns = 0; vi.getTimerCount() === 0 && turns < 100; turns++) await nextTurn();
    vi.advanceTimersByTime(4_999);
    await schedule.passDone();
    expect(passes()).toBe(1);
    vi.advanceTimersByTime(1);
    await schedule.passDone();
    expect(passes()).toBe(2);
    schedule.stop();
  });
});
