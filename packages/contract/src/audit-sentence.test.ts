import { describe, expect, it } from 'vitest';
import type { AuditEntry } from './audit.js';
import { auditChanges, describeAuditChanges, describeAuditEntry } from './audit-sentence.js';

const entry = (overrides: Partial<AuditEntry>): AuditEntry => ({
  id: 1,
  at: '2026-11-26T10:00:00.000Z',
  actor: { kind: 'admin', name: 'admin', tokenId: null },
  address: '127.0.0.1',
  action: 'service.disable',
  target: { type: 'http', id: 3, name: 'web' },
  nodeId: 2,
  nodeName: 'pi-1',
  domain: null,
  before: { enabled: true },
  after: { enabled: false },
  detail: null,
  ...overrides,
});

describe('audit entries as sentences', () => {
  it('says who did what to which thing on which node', () => {
    expect(describeAuditEntry(entry({}))).toBe('admin disabled service web on node pi-1');
    expect(
      describeAuditEntry(
        entry({ actor: { kind: 'node', name: 'ci', tokenId: 4 }, action: 'service.create', before: null }),
      ),
    ).toBe('access token ci created service web on node pi-1');
    expect(describeAuditEntry(entry({ action: 'node.disable', target: { type: 'node', id: 2, name: 'pi-1' } }))).toBe(
      'admin disconnected node pi-1',
    );
    expect(describeAuditEntry(entry({ action: 'token.revoke', target: { type: 'token', id: 9, name: 'ci' } }))).toBe(
      'admin revoked access token ci of node pi-1',
    );
    expect(
      describeAuditEntry(
        entry({
          action: 'service.update',
          before: { name: 'web', backendPort: 80, enabled: true },
          after: { name: 'web', backendPort: 8080, enabled: true },
        }),
      ),
    ).toBe('admin changed service web on node pi-1 (backendPort)');
    expect(
      describeAuditEntry(
        entry({
          actor: { kind: 'node', name: 'default', tokenId: 4 },
          action: 'node.networks',
          target: { type: 'node', id: 2, name: 'pi-1' },
          before: { gatewayNetworks: ['192.168.1.0/24'] },
          after: { gatewayNetworks: ['192.168.1.0/24', '10.20.0.0/24'] },
        }),
      ),
    ).toBe('access token default set the networks of node pi-1 to 192.168.1.0/24, 10.20.0.0/24');
  });

  it('names a node that is gone by its id, and the gateway and sign-ins in their own words', () => {
    expect(describeAuditEntry(entry({ nodeName: null }))).toBe('admin disabled service web on node #2');
    expect(
      describeAuditEntry(
        entry({
          actor: { kind: 'system', name: null, tokenId: null },
          action: 'dataplane.rejected',
          detail: 'port 30000/tcp is in use',
        }),
      ),
    ).toBe('The gateway set aside service web on node pi-1: port 30000/tcp is in use');
    expect(
      describeAuditEntry(
        entry({
          actor: { kind: 'system', name: null, tokenId: null },
          action: 'service.health',
          after: { health: 'down' },
          detail: 'connection refused',
        }),
      ),
    ).toBe('Service web on node pi-1 went down: connection refused');
    expect(
      describeAuditEntry(
        entry({
          actor: { kind: 'anonymous', name: 'root', tokenId: null },
          action: 'auth.sign-in-failed',
          target: { type: 'user', id: null, name: 'root' },
          detail: 'wrong username or password',
        }),
      ),
    ).toBe('Someone signing in as root failed to sign in (wrong username or password)');
    expect(describeAuditEntry(entry({ action: 'auth.password-change', target: null }))).toBe(
      'admin changed the password',
    );
    const account = { type: 'account', id: 7, name: 'bob@example.test' };
    expect(
      describeAuditEntry(
        entry({ action: 'account.invite', target: { ...account, type: 'invite' }, after: { role: 'viewer' } }),
      ),
    ).toBe('admin invited bob@example.test as viewer');
    expect(
      describeAuditEntry(
        entry({ action: 'account.update', target: account, before: { role: 'operator' }, after: { role: 'viewer' } }),
      ),
    ).toBe('admin changed account bob@example.test (role)');
    expect(describeAuditEntry(entry({ action: 'account.two-factor-reset', target: account }))).toBe(
      'admin turned off the two-factor sign-in of account bob@example.test',
    );
    // A summary row of failed sign-ins says it all in its detail.
    const summary = '3 failed sign-ins from 198.51.100.7 between 2026-11-26T10:00:00.000Z and 2026-11-26T10:09:00.000Z';
    expect(
      describeAuditEntry(
        entry({
          actor: { kind: 'anonymous', name: null, tokenId: null },
          action: 'auth.sign-in-failed',
          target: { type: 'user', id: null, name: null },
          after: { count: 3 },
          detail: summary,
        }),
      ),
    ).toBe(summary);
  });

  it('lists the changed fields for the details', () => {
    expect(describeAuditChanges({ a: 1, b: 'x' }, { a: 2, b: 'x' })).toEqual(['a: 1 → 2']);
    expect(describeAuditChanges(null, { name: 'web' })).toEqual(['name: "web"']);
    expect(auditChanges({ a: 1, b: 'x' }, { a: null, b: 'x' })).toEqual([{ field: 'a', before: '1', value: 'null' }]);
    expect(auditChanges({ revoked: false }, null)).toEqual([{ field: 'revoked', before: null, value: 'false' }]);
  });
});
