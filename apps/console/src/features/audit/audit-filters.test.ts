import { describe, expect, it } from 'vitest';
import { EMPTY_AUDIT_FILTER, toAuditFilter } from './audit-filters';

describe('audit filters', () => {
  it('sends only the fields filled in, times as ISO instants', () => {
    expect(toAuditFilter(EMPTY_AUDIT_FILTER)).toEqual({});
    const filter = toAuditFilter({
      ...EMPTY_AUDIT_FILTER,
      node: '3',
      domain: ' App.Example.com ',
      actor: 'node',
      action: 'service',
      from: '2030-01-01T10:00',
    });
    expect(filter).toEqual({
      node: 3,
      domain: 'app.example.com',
      actor: 'node',
      action: 'service',
      from: new Date('2030-01-01T10:00').toISOString(),
    });
  });
});
