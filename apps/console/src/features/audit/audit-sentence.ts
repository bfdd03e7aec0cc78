import {
  auditNodeOf,
  changedAuditFields,
  ROLES,
  type AuditEntry,
  type Role,
  type SentenceEntry,
} from '@postern/contract';
import { activeLanguage, SOURCE_LANGUAGE, t, type MessageId } from '../../i18n/i18n';

// The audit entries as sentences in the active language. The contract's `describeAuditEntry` words them in English for
// the CSV export and the API; this is the same sentence, built from the console's messages so every language has its
// own word order. In English both give the same text, word for word (audit-sentence.test.ts holds them together).

type Actor = AuditEntry['actor'];

/** Who acted, as the start of a sentence. */
export function auditActorText(actor: Actor): string {
  switch (actor.kind) {
    case 'admin':
      // The gateway's first account is named admin: a name, not a word to translate.
      return actor.name ?? 'admin';

    case 'node':
      return t('audit.actor.token', { name: actor.name ?? `#${String(actor.tokenId ?? '?')}` });
    case 'system':
      return t('audit.actor.system');
    case 'anonymous':
      return actor.name ? t('audit.actor.signingInAs', { name: actor.name }) : t('audit.actor.someone');
  }
}

/** What the entry is about: `service web on node pi-1`, `node pi-1`, … in the active language. */
function targetText(entry: SentenceEntry): string {
  const target = entry.target;
  if (!target) return '';
  const name = target.name ?? (target.id === null ? '' : `#${String(target.id)}`);
  const node = auditNodeOf(entry);
  switch (target.type) {
    case 'http':
    case 'tcp':
      return node ? t('audit.target.serviceOnNode', { name, node }) : t('audit.target.service', { name });
    case 'token':
      return node ? t('audit.target.tokenOfNode', { name, node }) : t('audit.target.token', { name });
    case 'node':
      return t('audit.target.node', { name });
    case 'domain':
      return t('audit.target.domain', { name });
    case 'user':
      return t('audit.target.user', { name });
    case 'account':
    case 'invite':
    case 'identity-provider':
    case 'notification-channel':
    case 'certificate':
    case 'share-link':
      // English names these by their API type, as the CSV export does (`identity-provider idp`).
      return t(`audit.target.${target.type}`, { name }).trim();

    default:
      // A kind of target without words of its own: its type as the API names it.
      return `${target.type} ${name}`.trim();
  }
}

const VERBS: Record<string, MessageId> = {
  create: 'audit.verb.create',
  update: 'audit.verb.update',
  delete: 'audit.verb.delete',
  enable: 'audit.verb.enable',
  disable: 'audit.verb.disable',
  revoke: 'audit.verb.revoke',
};

/** The console's words for a node's enable/disable (the spec's "Screens and routes": Connect, Disconnect). */
const NODE_VERBS: Record<string, MessageId> = { enable: 'audit.verb.connect', disable: 'audit.verb.disconnect' };

const withNote = (sentence: string, note: string | null): string =>
  note ? t('audit.note', { sentence, note }) : sentence;

/** A sentence that starts with its target: capitalised, as a sentence starts (no-op where a script has no case). */
const capitalised = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** The kinds of target the catalogue words (`audit.kind.*`); English keeps the API's type, as the CSV export does. */
const TARGET_KINDS = [
  'http',
  'tcp',
  'token',
  'node',
  'domain',
  'user',
  'account',
  'invite',
  'identity-provider',
  'notification-channel',
  'certificate',
  'share-link',
] as const;

/** The fields of the audited views (node, token, domain, service) the catalogue labels (`audit.fieldName.*`). */
const FIELDS = [
  'id',
  'name',
  'nodeId',
  'address',
  'allowInternet',
  'isGateway',
  'gatewayNetwork',
  'gatewayNetworks',
  'allowTokenNetworks',
  'applyError',
  'isLocal',
  'enabled',
  'status',
  'clientIp',
  'latestHandshakeTimestamp',
  'transferRx',
  'transferTx',
  'domain',
  'ssl',
  'ownerNodeId',
  'ownerNodeName',
  'certificate',
  'challenge',
  'dnsProviderId',
  'acmeCaId',
  'backendHost',
  'backendPort',
  'backendProto',
  'allowedIps',
  'blockedIps',
  'publicAccess',
  'expiresAt',
  'createdBy',
  'disabledBy',
  'expirySetBy',
  'source',
  'pathLocation',
  'proto',
  'port',
  'expireAt',
  'revoked',
  'lastUsedAt',
] as const;

const isOneOf = <T extends string>(list: readonly T[], value: string): value is T =>
  (list as readonly string[]).includes(value);

/**
 * A target's kind in words: `token` → `アクセストークン`. English shows the API's type as before (`token`, `http`); a
 * kind the catalogue does not know is shown as the API names it, `null` here (the caller marks it as a value).
 */
export function auditKindText(type: string): string | null {
  return isOneOf(TARGET_KINDS, type) ? t(`audit.kind.${type}`) : null;
}

/**
 * A changed field's label: `expireAt` → `有効期限`. English keeps the API's field name (the CSV export's and the
 * API's word); a field the catalogue does not label, `null` here (the caller shows the API's name as a value).
 */
export function auditFieldText(field: string): string | null {
  return isOneOf(FIELDS, field) ? t(`audit.fieldName.${field}`) : null;
}

/** How a visitor signed in (the server's `password`, `sso`) in words; English and unknown details as sent. */
const methodText = (detail: string | null): string | null =>
  detail === 'password' || detail === 'sso' ? t(`audit.method.${detail}`) : detail;

const isRole = (value: unknown): value is Role => (ROLES as readonly unknown[]).includes(value);

/**
 * The role an invite gave: the API's value in English (as the CSV export words it), the role's name in any other
 * language.
 */
const roleText = (role: string): string =>
  activeLanguage() === SOURCE_LANGUAGE || !isRole(role) ? role : t(`role.${role}`);

/** One sentence saying what happened, e.g. `admin disabled service web on node pi-1`. */
export function auditSentence(entry: SentenceEntry): string {
  const actor = auditActorText(entry.actor);
  const target = targetText(entry);
  const [family = '', verb = ''] = entry.action.split('.');
  // Failed sign-ins and re-checks are summed per client (one row per window): the row's detail is its sentence.
  if (typeof entry.after?.count === 'number' && entry.detail) return entry.detail;
  switch (entry.action) {
    case 'auth.sign-in':
      return withNote(t('audit.signIn', { actor }), entry.detail);
    case 'auth.password-accepted':
      return t('audit.passwordAccepted', { actor });
    case 'auth.sign-in-failed':
      return withNote(t('audit.signInFailed', { actor }), entry.detail);
    case 'auth.recheck-failed':
      return withNote(t('audit.recheckFailed', { actor }), entry.detail);
    case 'access.sign-in':
      // A visitor signed in to a protected service; the detail is how: a value the console words (English: as sent).
      return withNote(t('audit.accessSignIn', { actor, target }), methodText(entry.detail));
    case 'auth.sign-out':
      return t('audit.signOut', { actor });
    case 'auth.password-change':
      return t('audit.passwordChange', { actor });
    case 'auth.two-factor-enabled':
      return t('audit.twoFactorOn', { actor });
    case 'auth.two-factor-disabled':
      return t('audit.twoFactorOff', { actor });
    case 'account.invite': {
      const name = entry.target?.name ?? t('audit.someone');
      const role = entry.after?.role;
      return typeof role === 'string'
        ? t('audit.inviteAs', { actor, name, role: roleText(role) })
        : t('audit.invite', { actor, name });
    }
    case 'account.invite-revoke':
      return t('audit.inviteRevoke', { actor, name: entry.target?.name ?? t('audit.someone') });
    case 'account.two-factor-reset':
      return t('audit.twoFactorReset', { actor, target });
    case 'account.identity-unlink':
      return t('audit.identityUnlink', { actor, target });
    case 'dataplane.rejected':
      return entry.detail ? t('audit.setAsideWith', { target, detail: entry.detail }) : t('audit.setAside', { target });
    case 'service.expired':
      return t('audit.expired', { target });
    case 'service.health': {
      const state = entry.after?.health;
      if (state === 'down')
        return capitalised(
          entry.detail
            ? t('audit.healthDownWith', { target, detail: entry.detail })
            : t('audit.healthDown', { target }),
        );
      return capitalised(t(state === 'up' ? 'audit.healthUp' : 'audit.healthUnchecked', { target }));
    }
    case 'node.offline':
      return capitalised(t('audit.nodeOffline', { target }));
    case 'node.networks': {
      // A gateway node's token replaced its subnets (postern networks set).
      const networks = entry.after?.gatewayNetworks;
      return Array.isArray(networks)
        ? t('audit.networksTo', { actor, target, networks: networks.map(String).join(', ') })
        : t('audit.networks', { actor, target });
    }
  }
  const word = (family === 'node' ? NODE_VERBS[verb] : undefined) ?? VERBS[verb];
  if (!word) return withNote(`${actor}: ${entry.action} ${target}`.trim(), entry.detail);
  const fields = verb === 'update' ? changedAuditFields(entry) : [];
  const sentence = t(word, { actor, target }).trim();
  const labels = fields.map((field) => auditFieldText(field) ?? field);
  return withNote(withNote(sentence, labels.length > 0 ? labels.join(', ') : null), entry.detail);
}
