import { z } from 'zod';
import { limits } from './constants.js';
import { flag, idValue, integerIn, oneOf, optionalNullable, port, requiredText } from './fields.js';
import { maxLengthMessage, maxMessage, messages, ruleMessages } from './messages.js';
import { isBackendHost } from './host-names.js';
import { isIPv4, isPrintableAscii } from './validators.js';

// Notifications (docs/api.md "Notifications"): channels the admin configures (a generic webhook signed
// with HMAC-SHA-256, Slack/Discord/Mattermost-compatible incoming webhooks, ntfy topics, e-mail over SMTP), the
// events each channel takes, and the JSON a generic webhook receives. Beyond the console spec.

export const NOTIFICATION_CHANNEL_KINDS = ['webhook', 'slack', 'discord', 'mattermost', 'ntfy', 'email'] as const;
export type NotificationChannelKind = (typeof NOTIFICATION_CHANNEL_KINDS)[number];

/** What a channel can be switched on for, one switch per kind of news (a pair such as down/up is one switch). */
export const NOTIFICATION_EVENTS = [
  'node',
  'backend',
  'certificate-failed',
  'certificate-expiring',
  'drift',
  'set-aside',
  'gateway',
  'new-sign-in-address',
  'two-factor-disabled',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** The console's words for each switch. */
export const notificationEventLabels: Record<NotificationEvent, string> = {
  node: 'Node offline / online again',
  backend: 'Backend down / up again (health checks)',
  'certificate-failed': 'Certificate renewal failed',
  'certificate-expiring': 'Certificate expiring soon',
  drift: 'Drift found (and repaired)',
  'set-aside': 'A change the data plane set aside',
  gateway: 'A gateway of several gone / back',
  'new-sign-in-address': 'Sign-in from a new address',
  'two-factor-disabled': 'Two-factor sign-in turned off',
};

/** What happened, as the `type` of a message; each belongs to one switch. */
export const NOTIFICATION_TYPES = [
  'node.offline',
  'node.online',
  'backend.down',
  'backend.up',
  'certificate.failed',
  'certificate.expiring',
  'drift.found',
  'change.set-aside',
  'gateway.gone',
  'gateway.back',
  'auth.new-address',
  'auth.two-factor-disabled',
  'test',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** The switch a type of message belongs to; `test` is sent only by "send test", whatever the switches say. */
export const notificationEventOf: Record<NotificationType, NotificationEvent | null> = {
  'node.offline': 'node',
  'node.online': 'node',
  'backend.down': 'backend',
  'backend.up': 'backend',
  'certificate.failed': 'certificate-failed',
  'certificate.expiring': 'certificate-expiring',
  'drift.found': 'drift',
  'change.set-aside': 'set-aside',
  'gateway.gone': 'gateway',
  'gateway.back': 'gateway',
  'auth.new-address': 'new-sign-in-address',
  'auth.two-factor-disabled': 'two-factor-disabled',
  test: null,
};

export const NOTIFICATION_SEVERITIES = ['critical', 'warning', 'resolved', 'info'] as const;
export type NotificationSeverity = (typeof NOTIFICATION_SEVERITIES)[number];

export const SMTP_SECURITY = ['starttls', 'tls'] as const;
export type SmtpSecurity = (typeof SMTP_SECURITY)[number];

export const notificationLimits = {
  urlMax: 2048,
  secretMin: 16,
  secretMax: 256,
  tokenMax: 512,
  passwordMax: 1024,
  recipientsMax: 20,
  graceSecondsMax: 3600,
  expiringDaysMax: 90,
} as const;

export const NOTIFICATION_DEFAULTS = { graceSeconds: 60, certificateExpiringDays: 14 } as const;

/** The generic webhook's signature header: `t=<unix seconds>,v1=<hex HMAC-SHA-256 of "<t>.<raw body>">`. */
export const NOTIFICATION_SIGNATURE_HEADER = 'X-Postern-Signature';

export const notificationMessages = {
  url: 'This field must be an http or https URL',
  localUrl:
    "This address is refused: notifications never go to the gateway's own addresses, loopback, link-local or cloud metadata addresses, or the tunnel network",
  secret: `This field must be ${notificationLimits.secretMin} to ${notificationLimits.secretMax} printable characters without spaces`,
  token: 'This field must be printable characters without spaces',
  passwordWithoutUser: 'A password needs a username',
  notForKind: (kind: string) => `This field is not used by ${kind} channels`,
  nameTaken: (name: string) => `A notification channel named ${name} already exists`,
} as const;

// ---- Addresses a channel may never name (checked again on every resolved address when sending) --------------

/** Host names that always mean this machine. */
const LOCAL_NAMES = /^(localhost|localhost\.localdomain|ip6-localhost|ip6-loopback)$|\.localhost$/i;

/**
 * An IPv4 address every gateway refuses whatever its settings: this host (0/8, 127/8), link-local (169.254/16, where
 * the clouds' metadata services answer), Alibaba's metadata address, multicast and broadcast. The server adds the
 * gateway's own addresses and the tunnel network (apps/server/src/modules/notifications/address-guard.ts).
 */
export function isRefusedIPv4(address: string): boolean {
  if (!isIPv4(address)) return false;
  const [a = 0, b = 0] = address.split('.').map(Number);
  return a === 0 || a === 127 || (a === 169 && b === 254) || a >= 224 || address === '100.100.100.200';
}

/** The same for IPv6 (also IPv4-mapped addresses): unspecified, loopback, link-local, multicast, AWS metadata. */
export function isRefusedIPv6(address: string): boolean {
  const lower = address.toLowerCase().replace(/^\[|\]$/g, '');
  if (!lower.includes(':')) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped?.[1]) return isRefusedIPv4(mapped[1]);
  if (lower === '::' || lower === '::1' || /^0*:0*:0*:0*:0*:0*:0*:0*1?$/.test(lower)) return true;
  if (/^fe[89ab]/.test(lower) || lower.startsWith('ff')) return true;
  return lower === 'fd00:ec2::254';
}

/** A URL host (or an SMTP host) that is refused without resolving it: a local name or a refused literal address. */
export function isRefusedHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return LOCAL_NAMES.test(bare) || isRefusedIPv4(bare) || isRefusedIPv6(bare);
}

// ---- Field builders ------------------------------------------------------------------------------------------

const isMissing = (input: unknown): boolean => input === undefined || input === null;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.hash === '';
  } catch {
    return false;
  }
}

/** An http(s) URL (stored encrypted: the URL of an incoming webhook is its credential). */
export const channelUrl = () =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : notificationMessages.url) })
    .trim()
    .min(1, messages.empty)
    .max(notificationLimits.urlMax, maxLengthMessage(notificationLimits.urlMax))
    .refine(isHttpUrl, { message: notificationMessages.url, abort: true })
    .refine((value) => !isRefusedHost(new URL(value).hostname), notificationMessages.localUrl);

const printable = (min: number, max: number, message: string) =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : message) })
    .min(min, min > 1 ? message : messages.empty)
    .max(max, message)
    .refine((value) => /^[\x21-\x7e]+$/.test(value), message);

const email = () =>
  z
    .string({ error: () => messages.email })
    .trim()
    .pipe(z.email({ error: () => messages.email }));

const smtpHost = () =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : ruleMessages.host) })
    .trim()
    .refine(isPrintableAscii, { message: ruleMessages.host, abort: true })
    .toLowerCase()
    .min(1, messages.empty)
    .refine(isBackendHost, { message: ruleMessages.host, abort: true })
    .refine((value) => !isRefusedHost(value), notificationMessages.localUrl);

const eventList = () =>
  z
    .array(oneOf(NOTIFICATION_EVENTS), { error: () => messages.array })
    .max(NOTIFICATION_EVENTS.length)
    .transform((values) => [...new Set(values)]);

// ---- Requests ------------------------------------------------------------------------------------------------

/** Every field a channel may have; which ones a kind needs is checked on the whole (create, and an edit merged). */
const channelFields = {
  name: requiredText(limits.nameMax),
  enabled: flag().optional(),
  events: eventList().optional(),
  /** webhook, slack, discord, mattermost, ntfy: where to POST. Write-only. */
  url: channelUrl().optional(),
  /** webhook: the HMAC key the receiver verifies the signature with. Write-only. */
  signingSecret: printable(notificationLimits.secretMin, notificationLimits.secretMax, notificationMessages.secret)
    .nullable()
    .optional(),
  /** ntfy: an access token (sent as a bearer token). Write-only; null removes it. */
  token: printable(1, notificationLimits.tokenMax, notificationMessages.token).nullable().optional(),
  /** email: the SMTP server. */
  host: smtpHost().optional(),
  port: port().optional(),
  security: oneOf(SMTP_SECURITY).optional(),
  username: optionalNullable(
    z
      .string({ error: () => ruleMessages.string })
      .trim()
      .min(1, messages.empty)
      .max(255, maxLengthMessage(255)),
  ),
  /** email: the SMTP password. Write-only; null removes it. */
  password: z
    .string({ error: () => ruleMessages.string })
    .min(1, messages.empty)
    .max(notificationLimits.passwordMax, maxLengthMessage(notificationLimits.passwordMax))
    .nullable()
    .optional(),
  from: email().optional(),
  to: z
    .array(email(), { error: () => messages.array })
    .min(1, 'This field must hold at least one address')
    .max(notificationLimits.recipientsMax, maxMessage(notificationLimits.recipientsMax))
    .transform((values) => [...new Set(values)])
    .optional(),
};

const URL_KINDS: readonly NotificationChannelKind[] = ['webhook', 'slack', 'discord', 'mattermost', 'ntfy'];

/** Which fields each kind takes (the others must be absent or null) and needs. */
const KIND_FIELDS: Record<NotificationChannelKind, { takes: readonly string[]; needs: readonly string[] }> = {
  webhook: { takes: ['url', 'signingSecret'], needs: ['url', 'signingSecret'] },
  slack: { takes: ['url'], needs: ['url'] },
  discord: { takes: ['url'], needs: ['url'] },
  mattermost: { takes: ['url'], needs: ['url'] },
  ntfy: { takes: ['url', 'token'], needs: ['url'] },
  email: {
    takes: ['host', 'port', 'security', 'username', 'password', 'from', 'to'],
    needs: ['host', 'from', 'to'],
  },
};
const KIND_SPECIFIC = [
  'url',
  'signingSecret',
  'token',
  'host',
  'port',
  'security',
  'username',
  'password',
  'from',
  'to',
];

/** The rules across fields, for a channel's whole configuration (a create, or an edit merged with what is stored). */
export function checkChannelFields(
  value: { kind: NotificationChannelKind } & Record<string, unknown>,
  ctx: z.RefinementCtx,
): void {
  const { takes, needs } = KIND_FIELDS[value.kind];
  for (const field of KIND_SPECIFIC) {
    const given = value[field] !== undefined && value[field] !== null;
    if (given && !takes.includes(field))
      ctx.addIssue({ code: 'custom', path: [field], message: notificationMessages.notForKind(value.kind) });
    if (!given && needs.includes(field)) ctx.addIssue({ code: 'custom', path: [field], message: messages.required });
  }
  if (value.kind === 'email' && value.password != null && value.username == null)
    ctx.addIssue({ code: 'custom', path: ['password'], message: notificationMessages.passwordWithoutUser });
}

export const NotificationChannelCreateSchema = z
  .object({ kind: oneOf(NOTIFICATION_CHANNEL_KINDS), ...channelFields })
  .superRefine(checkChannelFields);
export type NotificationChannelCreate = z.infer<typeof NotificationChannelCreateSchema>;

/** An edit: absent fields keep their value; write-only secrets are kept unless given (null removes an optional one). */
export const NotificationChannelUpdateSchema = z.object({ ...channelFields, name: channelFields.name.optional() });
export type NotificationChannelUpdate = z.infer<typeof NotificationChannelUpdateSchema>;

export const NotificationSettingsSchema = z.object({
  /** How long a node, backend or gateway must stay down (or up again) before a message says so. */
  graceSeconds: z.number().int(),
  /** A CA-issued certificate with fewer days left than this is reported once. */
  certificateExpiringDays: z.number().int(),
});
export type NotificationSettings = z.infer<typeof NotificationSettingsSchema>;

export const NotificationSettingsUpdateSchema = z.object({
  graceSeconds: integerIn(0, notificationLimits.graceSecondsMax).optional(),
  certificateExpiringDays: integerIn(1, notificationLimits.expiringDaysMax).optional(),
});
export type NotificationSettingsUpdate = z.infer<typeof NotificationSettingsUpdateSchema>;

export const NotificationDeliveryQuerySchema = z.object({
  page: integerIn(1, 1_000_000).optional().default(1),
  limit: integerIn(1, limits.listMaxLimit).optional().default(10),
  channelId: idValue().optional(),
  status: oneOf(['pending', 'sent', 'failed'] as const).optional(),
});
export type NotificationDeliveryQuery = z.infer<typeof NotificationDeliveryQuerySchema>;

// ---- Answers -------------------------------------------------------------------------------------------------

export const NotificationChannelSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  kind: z.enum(NOTIFICATION_CHANNEL_KINDS),
  enabled: z.boolean(),
  events: z.array(z.enum(NOTIFICATION_EVENTS)),
  /** Where it sends, without any secret: the URL's scheme and host (`https://hooks.slack.com/…`) or `host:port`. */
  target: z.string(),
  hasSigningSecret: z.boolean(),
  hasToken: z.boolean(),
  hasPassword: z.boolean(),
  /** E-mail channels: the SMTP settings that are not secret; null for the others. */
  email: z
    .object({
      host: z.string(),
      port: z.number().int(),
      security: z.enum(SMTP_SECURITY),
      username: z.string().nullable(),
      from: z.string(),
      to: z.array(z.string()),
    })
    .nullable(),
  /** Messages waiting to be delivered (retried with back-off while the channel is down). */
  pending: z.number().int(),
  /** The last attempt to deliver to this channel. */
  lastAttempt: z.object({ at: z.string(), ok: z.boolean(), error: z.string().nullable() }).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type NotificationChannel = z.infer<typeof NotificationChannelSchema>;

/** The outcome of "send test": the channel's answer, or why it failed (the request itself succeeded). */
export const NotificationTestResultSchema = z.object({ ok: z.boolean(), message: z.string() });
export type NotificationTestResult = z.infer<typeof NotificationTestResultSchema>;

export const NotificationDeliverySchema = z.object({
  id: z.number().int(),
  channelId: z.number().int(),
  channelName: z.string(),
  type: z.enum(NOTIFICATION_TYPES),
  title: z.string(),
  status: z.enum(['pending', 'sent', 'failed']),
  attempts: z.number().int(),
  /** Pending: when the next attempt is due. */
  nextAttemptAt: z.string().nullable(),
  lastError: z.string().nullable(),
  created_at: z.string(),
  finishedAt: z.string().nullable(),
});
export type NotificationDelivery = z.infer<typeof NotificationDeliverySchema>;

/** One thing a message is about: a service, node, gateway, domain or account. */
export const NotificationItemSchema = z.object({
  subject: z.enum(['service', 'node', 'gateway', 'domain', 'account', 'change']),
  id: z.number().int().nullable(),
  name: z.string(),
  /** A service's node. */
  node: z.object({ id: z.number().int(), name: z.string() }).nullable(),
  /** Since when the state the message reports holds (down since, offline since, expires at, …). */
  since: z.string().nullable(),
  /** A recovery: how long the outage lasted, in seconds. */
  durationSeconds: z.number().int().nullable(),
  detail: z.string().nullable(),
});
export type NotificationItem = z.infer<typeof NotificationItemSchema>;

/**
 * What a generic webhook receives (version 1): the same message for every channel, by its `id` (a receiver that gets
 * an id twice, after a gateway died between sending and recording it, drops the second). Signed: see
 * NOTIFICATION_SIGNATURE_HEADER.
 */
export const NotificationPayloadSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  type: z.enum(NOTIFICATION_TYPES),
  /** The switch it belongs to (null: a test). */
  event: z.enum(NOTIFICATION_EVENTS).nullable(),
  severity: z.enum(NOTIFICATION_SEVERITIES),
  at: z.string(),
  /** The gateway that observed it (POSTERN_GATEWAY_NAME). */
  gateway: z.string(),
  title: z.string(),
  /** Plain text, several lines: what chat, ntfy and e-mail channels show. */
  text: z.string(),
  /** The console (https://<POSTERN_PUBLIC_HOST>/). */
  consoleUrl: z.string(),
  items: z.array(NotificationItemSchema),
});
export type NotificationPayload = z.infer<typeof NotificationPayloadSchema>;

export { URL_KINDS as NOTIFICATION_URL_KINDS };
