import { describe, expect, it } from 'vitest';
import type { AuditLog, AuditRecord } from '../audit/recorder.js';
import { ACTION_MAX, CLIENT_MAX, VISITOR_AUDIT_WINDOW_MS, createVisitorAudit } from './visitor-audit.js';

function fakeLog(): AuditLog & { entries: AuditRecord[] } {
  const entries: AuditRecord[] = [];
  return {
    entries,
    record: (entry) => {
      entries.push(entry);
      return Promise.resolve();
    },
    onHealthChange: () => undefined,
    flush: () => Promise.resolve(),
    subscribe: () => () => undefined,
  };
}

describe('visitor events in the audit log', () => {
  it('cannot be flooded: a few per address, a cap per action, one summary of the rest', async () => {
    const log = fakeLog();
    let now = 1_000_000;
    const audit = createVisitorAudit(log, () => now);
    const failed = (address: string) =>
      audit.record({
        actor: { kind: 'anonymous' },
        address,
        action: 'access.sign-in-failed',
        detail: 'wrong password',
      });
    for (let i = 0; i < 10; i++) await failed('203.0.113.7');
    expect(log.entries).toHaveLength(CLIENT_MAX);
    for (let i = 0; i < 1000; i++) await failed(`198.51.${Math.floor(i / 250)}.${i % 250}`);
    expect(log.entries).toHaveLength(ACTION_MAX);
    // Another action has its own budget.
    await audit.record({
      actor: { kind: 'anonymous' },
      address: '203.0.113.7',
      action: 'access.sign-in',
      detail: 'sso',
    });
    expect(log.entries).toHaveLength(ACTION_MAX + 1);
    now += VISITOR_AUDIT_WINDOW_MS;
    await audit.flush();
    expect(log.entries.at(-1)).toMatchObject({
      action: 'access.suppressed',
      detail: `${10 - CLIENT_MAX + 1000 - (ACTION_MAX - CLIENT_MAX)} more access.sign-in-failed entries from ${1 + 1000 - (ACTION_MAX - CLIENT_MAX)} address(es) left out within 10 s`,
    });
    await failed('203.0.113.7');
    expect(log.entries.at(-1)).toMatchObject({ action: 'access.sign-in-failed' });
  });
});
