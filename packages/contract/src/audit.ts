import { z } from 'zod';
import { defaults, limits } from './constants.js';
import { domainName, idValue, integerIn, oneOf } from './fields.js';
import { messages, ruleMessages } from './messages.js';

// The audit log: one entry per change, sign-in, rejection or state change, newest first. Snapshots are
// entity views with every secret removed; the log is append-only (no call edits or deletes an entry).

export const AUDIT_ACTOR_KINDS = ['admin', 'node', 'system', 'anonymous'] as const;
export const AuditActorKindSchema = z.enum(AUDIT_ACTOR_KINDS);
export type AuditActorKind = z.infer<typeof AuditActorKindSchema>;

export const AuditEntrySchema = z.object({
  id: z.number().int(),
  at: z.string(),
  actor: z.object({
    kind: AuditActorKindSchema,
    /** The admin's username, the node token's name, or the username a failed sign-in tried. */
    name: z.string().nullable(),
    /** The node token's id (never its secret). */
    tokenId: z.number().int().nullable(),
    /**
     * A console account (docs/api.md "Accounts and roles"): its id (the person, also after a rename or deletion) and
     * how its session signed in ('password + authentication code', 'single sign-on (Corp IdP)'). Optional: older
     * entries have neither.
     */
    accountId: z.number().int().nullable().optional(),
    via: z.string().nullable().optional(),
  }),
  address: z.string().nullable(),
  /** `<resource>.<verb>`, e.g. `service.update`, `auth.sign-in-failed`, `service.expired`. */
  action: z.string(),
  target: z.object({ type: z.string(), id: z.number().int().nullable(), name: z.string().nullable() }).nullable(),
  nodeId: z.number().int().nullable(),
  /**
   * That node's name when it still exists (read when the list is read; the live stream leaves it out). Optional so a
   * client reads the answers of a gateway from before it existed.
   */
  nodeName: z.string().nullable().optional(),
  domain: z.string().nullable(),
  before: z.record(z.string(), z.unknown()).nullable(),
  after: z.record(z.string(), z.unknown()).nullable(),
  /** The outcome beyond the fields, e.g. why the data plane set the change aside. */
  detail: z.string().nullable(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

const isoTime = () => z.iso.datetime({ offset: true, error: () => ruleMessages.date });

const auditFilterFields = {
  node: idValue().optional(),
  domain: domainName().optional(),
  actor: oneOf(AUDIT_ACTOR_KINDS).optional(),
  /** One person: the entries of the console account with this id (what it did, and its own sign-ins). */
  account: idValue().optional(),
  /** An exact action (`service.update`) or a family (`service`: every `service.*`). */
  action: z
    .string({ error: () => messages.required })
    .trim()
    .regex(/^[a-z-]+(\.[a-z-]+)?$/, 'This field must be an action such as service or service.update')
    .optional(),
  from: isoTime().optional(),
  to: isoTime().optional(),
};

export const AuditListQuerySchema = z.object({
  page: integerIn(1, 1_000_000).optional().default(1),
  limit: integerIn(1, limits.listMaxLimit).optional().default(defaults.pageSize),
  ...auditFilterFields,
});
export type AuditListQuery = z.infer<typeof AuditListQuerySchema>;
export type AuditFilter = Omit<AuditListQuery, 'page' | 'limit'>;

/** GET /api/audit/export: the same filters; the matching entries (newest first, at most AUDIT_EXPORT_MAX_ROWS). */
export const AuditExportQuerySchema = z.object(auditFilterFields);
/** An export stops after this many entries (the file says so in its last line): narrow the filters for more. */
export const AUDIT_EXPORT_MAX_ROWS = 50_000;

/** /api/audit/stream: the same filters; `token` carries the session (EventSource sends no headers). */
export const AuditStreamQuerySchema = z.object({ token: z.string().min(1, messages.required), ...auditFilterFields });

/** /api/audit/stream: each new entry matching the filters, as it is recorded. */
export const AuditEventSchema = AuditEntrySchema;
