import type { AuditEntry } from './audit.js';

// Audit entries as sentences ("admin disabled service web on node pi-1"), the same in the console and in the CSV
// export. Plain functions without zod, so the audit page loads no schema for them.

type Actor = AuditEntry['actor'];
export type SentenceEntry = Pick<
  AuditEntry,
  'actor' | 'action' | 'target' | 'nodeId' | 'detail' | 'before' | 'after'
> & {
  nodeName?: string | null | undefined;
};

/** Who acted, as the start of a sentence. */
export function describeAuditActor(actor: Actor): string {
  switch (actor.kind) {
    case 'admin':
      return actor.name ?? 'admin';
    case 'node':
      return `access token ${actor.name ?? `#${String(actor.tokenId ?? '?')}`}`;
    case 'system':
      return 'The gateway';
    case 'anonymous':
      return actor.name ? `Someone signing in as ${actor.name}` : 'Someone';
  }
}

/** The node an entry is about, by name when known (the console's translated sentences name it the same way). */
export function auditNodeOf(entry: SentenceEntry): string | null {
  if (entry.nodeName) return entry.nodeName;
  if (entry.target?.type === 'node' && entry.target.name) return entry.target.name;
  return entry.nodeId === null ? null : `#${String(entry.nodeId)}`;
}

/** What the entry is about: `service web on node pi-1`, `node pi-1`, `domain app.example.com`, … */
function describeTarget(entry: SentenceEntry): string {
  const target = entry.target;
  if (!target) return '';
  const name = target.name ?? (target.id === null ? '' : `#${String(target.id)}`);
  const node = auditNodeOf(entry);
  switch (target.type) {
    case 'http':
    case 'tcp':
      return `service ${name}${node ? ` on node ${node}` : ''}`;
    case 'token':
      return `access token ${name}${node ? ` of node ${node}` : ''}`;
    case 'node':
      return `node ${name}`;
    case 'domain':
      return `domain ${name}`;
    case 'user':
      return `user ${name}`;
    default:
      return `${target.type} ${name}`.trim();
  }
}

const show = (value: unknown): string => (value === undefined ? '—' : JSON.stringify(value));

/**
 * One field an entry changed: its API name and its values as JSON; a creation or deletion has one side (`value`),
 * an update both (`before` → `value`).
 */
export type AuditChange = { field: string; before: string | null; value: string };

/** The fields an entry changed, each side as JSON (creation and deletion show one side, as `after`). */
export function auditChanges(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): AuditChange[] {
  if (!before || !after) {
    const side = after ?? before;
    return side ? Object.entries(side).map(([field, value]) => ({ field, before: null, value: show(value) })) : [];
  }
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys
    .filter((key) => show(before[key]) !== show(after[key]))
    .map((field) => ({ field, before: show(before[field]), value: show(after[field]) }));
}

/** The fields an entry changed, as `field: before → after` lines (creation and deletion show one side). */
export function describeAuditChanges(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): string[] {
  return auditChanges(before, after).map(({ field, before: was, value }) =>
    was === null ? `${field}: ${value}` : `${field}: ${was} → ${value}`,
  );
}

/** The names of the fields an update changed (none for a creation or deletion). */
export function changedAuditFields(entry: SentenceEntry): string[] {
  if (!entry.before || !entry.after) return [];
  const { before, after } = entry;
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (key) => show(before[key]) !== show(after[key]),
  );
}

const VERBS: Record<string, string> = {
  create: 'created',
  update: 'changed',
  delete: 'deleted',
  enable: 'enabled',
  disable: 'disabled',
  revoke: 'revoked',
};

/** The console's words for a node's enable/disable (the spec's "Screens and routes": Connect, Disconnect). */
const NODE_VERBS: Record<string, string> = { enable: 'connected', disable: 'disconnected' };

const withDetail = (sentence: string, detail: string | null): string => (detail ? `${sentence} (${detail})` : sentence);

/** One sentence saying what happened, e.g. `admin disabled service web on node pi-1`. */
export function describeAuditEntry(entry: SentenceEntry): string {
  const actor = describeAuditActor(entry.actor);
  const target = describeTarget(entry);
  const [family = '', verb = ''] = entry.action.split('.');
  const capital = target.charAt(0).toUpperCase() + target.slice(1);
  // Failed sign-ins and re-checks are summed per client (one row per window): the row's detail is its sentence.
  if (typeof entry.after?.count === 'number' && entry.detail) return entry.detail;
  switch (entry.action) {
    case 'auth.sign-in':
      return withDetail(`${actor} signed in`, entry.detail);
    case 'auth.password-accepted':
      return `${actor} gave the right password; the second factor is asked next`;
    case 'auth.sign-in-failed':
      return withDetail(`${actor} failed to sign in`, entry.detail);
    case 'auth.recheck-failed':
      return withDetail(`${actor} failed a re-check of the password or code`, entry.detail);
    case 'access.sign-in':
      // A visitor signed in to a protected service; the detail is how (password, sso).
      return withDetail(`${actor} signed in to ${target}`, entry.detail);
    case 'auth.sign-out':
      return `${actor} signed out`;
    case 'auth.password-change':
      return `${actor} changed the password`;
    case 'auth.two-factor-enabled':
      return `${actor} turned two-factor sign-in on`;
    case 'auth.two-factor-disabled':
      return `${actor} turned two-factor sign-in off`;
    // Accounts (docs/api.md "Accounts and roles"): invites and what owners do to other accounts.
    case 'account.invite':
      return `${actor} invited ${entry.target?.name ?? 'someone'}${typeof entry.after?.role === 'string' ? ` as ${entry.after.role}` : ''}`;
    case 'account.invite-revoke':
      return `${actor} revoked the invite of ${entry.target?.name ?? 'someone'}`;
    case 'account.two-factor-reset':
      return `${actor} turned off the two-factor sign-in of ${target}`;
    case 'account.identity-unlink':
      return `${actor} unbound the identity provider of ${target}`;
    case 'dataplane.rejected':
      return `The gateway set aside ${target}${entry.detail ? `: ${entry.detail}` : ''}`;
    case 'service.expired':
      return `The gateway disabled ${target}: its exposure time ended`;
    case 'service.health': {
      const state = entry.after?.health;
      if (state === 'down') return `${capital} went down${entry.detail ? `: ${entry.detail}` : ''}`;
      if (state === 'up') return `${capital} is up again`;
      return `${capital} is no longer checked`;
    }
    case 'node.offline':
      return `${capital} went offline`;
    case 'node.networks': {
      // A gateway node's token replaced its subnets (postern networks set).
      const networks = entry.after?.gatewayNetworks;
      const list = Array.isArray(networks) ? ` to ${networks.map(String).join(', ')}` : '';
      return `${actor} set the networks of ${target}${list}`;
    }
  }
  const word = (family === 'node' ? NODE_VERBS[verb] : undefined) ?? VERBS[verb];
  if (!word) return withDetail(`${actor}: ${entry.action} ${target}`.trim(), entry.detail);
  const fields = verb === 'update' ? changedAuditFields(entry) : [];
  const sentence = `${actor} ${word} ${target}${fields.length > 0 ? ` (${fields.join(', ')})` : ''}`.trim();
  return withDetail(sentence, entry.detail);
}
