import { describeAuditActor, describeAuditEntry, type AuditEntry } from '@postern/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { activateLanguage } from '../../i18n/i18n';
import en from '../../i18n/catalogs/en.json';
import { auditActorText, auditFieldText, auditKindText, auditSentence } from './audit-sentence';

afterEach(() => activateLanguage('en'));

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

const system = { kind: 'system', name: null, tokenId: null } as const;
const token = { kind: 'node', name: 'ci', tokenId: 4 } as const;
const account = { type: 'account', id: 7, name: 'bob@example.test' };
const node = { type: 'node', id: 2, name: 'pi-1' };

/** One entry of every kind the audit page words, and the ways each can vary. */
const entries: AuditEntry[] = [
  entry({}),
  entry({ nodeName: null }),
  entry({ actor: token, action: 'service.create', before: null }),
  entry({ actor: { kind: 'node', name: null, tokenId: 9 }, action: 'service.delete', after: null }),
  entry({ actor: { kind: 'admin', name: null, tokenId: null }, action: 'service.enable' }),
  entry({ action: 'node.disable', target: node }),
  entry({ action: 'node.enable', target: node }),
  entry({ action: 'node.update', target: node, before: { name: 'pi' }, after: { name: 'pi-1' } }),
  entry({ action: 'token.revoke', target: { type: 'token', id: 9, name: 'ci' } }),
  entry({ action: 'token.create', target: { type: 'token', id: 9, name: 'ci' }, nodeId: null, nodeName: null }),
  entry({ action: 'domain.create', target: { type: 'domain', id: 5, name: 'app.example.test' }, nodeId: null }),
  entry({
    action: 'service.update',
    before: { backendPort: 80, name: 'web' },
    after: { backendPort: 8080, name: 'web' },
  }),
  entry({ action: 'service.update', detail: 'from the CLI' }),
  entry({
    actor: token,
    action: 'node.networks',
    target: node,
    after: { gatewayNetworks: ['10.0.0.0/24', '10.1.0.0/24'] },
  }),
  entry({ actor: token, action: 'node.networks', target: node, after: {} }),
  entry({ actor: system, action: 'dataplane.rejected', detail: 'port 30000/tcp is in use' }),
  entry({ actor: system, action: 'dataplane.rejected' }),
  entry({ actor: system, action: 'service.expired' }),
  entry({ actor: system, action: 'service.health', after: { health: 'down' }, detail: 'connection refused' }),
  entry({ actor: system, action: 'service.health', after: { health: 'down' } }),
  entry({ actor: system, action: 'service.health', after: { health: 'up' } }),
  entry({ actor: system, action: 'service.health', after: { health: null } }),
  entry({ actor: system, action: 'node.offline', target: node }),
  entry({ action: 'auth.sign-in', target: null, detail: 'with GitHub' }),
  entry({ action: 'auth.sign-in', target: null }),
  entry({ action: 'auth.password-accepted', target: null }),
  entry({
    actor: { kind: 'anonymous', name: 'root', tokenId: null },
    action: 'auth.sign-in-failed',
    target: { type: 'user', id: null, name: 'root' },
    detail: 'wrong username or password',
  }),
  entry({ actor: { kind: 'anonymous', name: null, tokenId: null }, action: 'auth.sign-in-failed', target: null }),
  entry({ action: 'auth.recheck-failed', target: null, detail: 'wrong code' }),
  entry({ action: 'auth.sign-out', target: null }),
  entry({ action: 'auth.password-change', target: null }),
  entry({ action: 'auth.two-factor-enabled', target: null }),
  entry({ action: 'auth.two-factor-disabled', target: null }),
  entry({ action: 'account.invite', target: { ...account, type: 'invite' }, after: { role: 'viewer' } }),
  entry({ action: 'account.invite', target: null, after: null }),
  entry({ action: 'account.invite-revoke', target: { ...account, type: 'invite' } }),
  entry({ action: 'account.update', target: account, before: { role: 'operator' }, after: { role: 'viewer' } }),
  entry({ action: 'account.two-factor-reset', target: account }),
  entry({ action: 'account.identity-unlink', target: account }),
  entry({ action: 'identity-provider.create', target: { type: 'identity-provider', id: 1, name: 'GitHub' } }),
  entry({ action: 'notification-channel.delete', target: { type: 'notification-channel', id: 1, name: 'ops' } }),
  entry({ action: 'share-link.revoke', target: { type: 'share-link', id: 1, name: null } }),
  entry({
    action: 'settings.update',
    target: { type: 'settings', id: null, name: null },
    before: { a: 1 },
    after: { a: 2 },
  }),
  entry({ action: 'certificate.renew', target: { type: 'certificate', id: 4, name: 'app.example.test' } }),
  entry({
    actor: { kind: 'anonymous', name: null, tokenId: null },
    action: 'access.sign-in',
    before: null,
    after: null,
    detail: 'password',
  }),
  entry({
    actor: { kind: 'anonymous', name: null, tokenId: null },
    action: 'auth.sign-in-failed',
    target: { type: 'user', id: null, name: null },
    after: { count: 3 },
    detail: '3 failed sign-ins from 198.51.100.7',
  }),
];

describe('audit entries in the active language', () => {
  it('words every entry in English exactly as the CSV export does', () => {
    for (const each of entries) {
      expect(auditSentence(each), each.action).toBe(describeAuditEntry(each));
      expect(auditActorText(each.actor)).toBe(describeAuditActor(each.actor));
    }
  });

  it('words them in the language’s own order, names and values kept', async () => {
    await activateLanguage('de');
    expect(auditSentence(entries[0]!)).toBe('admin hat Dienst web auf Knoten pi-1 deaktiviert');
    expect(auditSentence(entries[5]!)).toBe('admin hat Knoten pi-1 getrennt');
    expect(auditSentence(entries[11]!)).toBe('admin hat Dienst web auf Knoten pi-1 geändert (Backend-Port)');
    expect(auditSentence(entries[18]!)).toBe('Dienst web auf Knoten pi-1 ist ausgefallen: connection refused');
    expect(auditSentence(entries[33]!)).toBe('admin hat bob@example.test als Betrachter eingeladen');
    await activateLanguage('ja');
    expect(auditSentence(entries[0]!)).toBe('admin がノード pi-1 のサービス webを無効にしました');
    expect(auditSentence(entries[2]!)).toBe('アクセストークン ci がノード pi-1 のサービス webを作成しました');
    await activateLanguage('fr');
    expect(auditSentence(entries[22]!)).toBe('Le nœud pi-1 s’est déconnecté');
    // A summary row says it all in its detail, which the server words.
    expect(auditSentence(entries.at(-1)!)).toBe('3 failed sign-ins from 198.51.100.7');
  });

  it('labels a target’s kind and the changed fields in words, English keeping the API’s names', async () => {
    // English shows the API's own names (as the CSV export does): each label's English is its key's last part.
    for (const [id, text] of Object.entries(en)) {
      if (id.startsWith('audit.kind.') || id.startsWith('audit.fieldName.'))
        expect(id.endsWith(`.${text}`), id).toBe(true);
    }
    expect(auditKindText('token')).toBe('token');
    expect(auditFieldText('expireAt')).toBe('expireAt');
    await activateLanguage('ja');
    expect(auditKindText('token')).toBe('アクセストークン');
    expect(auditKindText('http')).toBe('HTTP サービス');
    expect(auditFieldText('expireAt')).toBe('有効期限');
    expect(auditFieldText('revoked')).toBe('取り消し済み');
    // What the console does not know stays as the API names it (the page shows it as a value).
    expect(auditKindText('dns-provider')).toBeNull();
    expect(auditFieldText('newField')).toBeNull();
    // A visitor's sign-in: how, in words.
    const visitor = entry({
      actor: { kind: 'anonymous', name: null, tokenId: null },
      action: 'access.sign-in',
      before: null,
      after: null,
      detail: 'password',
    });
    expect(auditSentence(visitor)).toBe('誰か がノード pi-1 のサービス webにサインインしました（パスワード）');
  });
});
