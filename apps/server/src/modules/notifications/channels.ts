import { and, count, desc, eq, inArray, isNotNull, max } from 'drizzle-orm';
import {
  NOTIFICATION_EVENTS,
  NotificationChannelCreateSchema,
  toFieldErrors,
  type ListResponse,
  type NotificationChannel,
  type NotificationChannelCreate,
  type NotificationChannelUpdate,
  type PageQuery,
  type SmtpSecurity,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ReadDb } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { notificationChannels, notificationDeliveries } from '../../db/schema.js';
import { AppError, fieldError, notFound } from '../../errors.js';
import type { ChannelConfig } from './senders/index.js';

// Notification channels (admin only): stored with every secret in one encrypted box (secrets.ts), answered without
// any of them. An edit is merged with what is stored and checked whole with the create schema, so the rules of a
// kind live in one place (the contract's checkChannelFields).

type Row = typeof notificationChannels.$inferSelect;

interface Secrets {
  url?: string;
  signingSecret?: string;
  token?: string;
  password?: string;
}

interface Settings {
  target: string;
  email?: { host: string; port: number; security: SmtpSecurity; username: string | null; from: string; to: string[] };
}

const DEFAULT_SMTP_PORT: Record<SmtpSecurity, number> = { starttls: 587, tls: 465 };

/** Where a channel sends, without its secret: the URL's scheme and host, or the SMTP server. */
function targetOf(body: NotificationChannelCreate): string {
  if (body.kind === 'email')
    return `${body.host ?? ''}:${String(body.port ?? DEFAULT_SMTP_PORT[body.security ?? 'starttls'])}`;
  const url = new URL(body.url ?? '');
  return `${url.protocol}//${url.host}/…`;
}

function splitChannel(body: NotificationChannelCreate): { settings: Settings; secrets: Secrets } {
  const secrets: Secrets = {
    ...(body.url ? { url: body.url } : {}),
    ...(body.signingSecret ? { signingSecret: body.signingSecret } : {}),
    ...(body.token ? { token: body.token } : {}),
    ...(body.password ? { password: body.password } : {}),
  };
  const settings: Settings = { target: targetOf(body) };
  if (body.kind === 'email') {
    const security = body.security ?? 'starttls';
    settings.email = {
      host: body.host ?? '',
      port: body.port ?? DEFAULT_SMTP_PORT[security],
      security,
      username: body.username ?? null,
      from: body.from ?? '',
      to: body.to ?? [],
    };
  }
  return { settings, secrets };
}

function readSecrets(deps: Pick<AppDeps, 'secrets'>, row: Row): Secrets {
  return JSON.parse(deps.secrets.decrypt(row.secretsEnc)) as Secrets;
}

const settingsOf = (row: Row): Settings => row.settings as unknown as Settings;

/** The channel as it is stored, in the shape of a create request (secrets included: never answered). */
function storedBody(deps: Pick<AppDeps, 'secrets'>, row: Row): NotificationChannelCreate {
  const secrets = readSecrets(deps, row);
  const email = settingsOf(row).email;
  return {
    kind: row.kind,
    name: row.name,
    enabled: row.enabled,
    events: row.events as NotificationChannelCreate['events'],
    ...secrets,
    ...(email
      ? {
          host: email.host,
          port: email.port,
          security: email.security,
          username: email.username,
          from: email.from,
          to: email.to,
        }
      : {}),
  };
}

/** An edit over what is stored, checked whole: 422 on the fields the merged channel breaks. */
function merge(stored: NotificationChannelCreate, body: NotificationChannelUpdate): NotificationChannelCreate {
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(body)) if (value !== undefined) merged[key] = value;
  const parsed = NotificationChannelCreateSchema.safeParse(merged);
  if (!parsed.success) throw new AppError('validation', 'Validation failed', toFieldErrors(parsed.error));
  return parsed.data;
}

export function toChannelConfig(deps: Pick<AppDeps, 'secrets'>, row: Row): ChannelConfig {
  return configOf(storedBody(deps, row));
}

function configOf(body: NotificationChannelCreate): ChannelConfig {
  const security = body.security ?? 'starttls';
  return {
    kind: body.kind,
    name: body.name,
    url: body.url,
    signingSecret: body.signingSecret ?? undefined,
    token: body.token ?? undefined,
    email:
      body.kind === 'email'
        ? {
            host: body.host ?? '',
            port: body.port ?? DEFAULT_SMTP_PORT[security],
            security,
            username: body.username ?? null,
            password: body.password ?? undefined,
            from: body.from ?? '',
            to: body.to ?? [],
          }
        : undefined,
  };
}

interface DeliveryFacts {
  pending: number;
  lastAttempt: NotificationChannel['lastAttempt'];
}

async function deliveryFacts(db: ReadDb, ids: number[]): Promise<Map<number, DeliveryFacts>> {
  const facts = new Map<number, DeliveryFacts>(ids.map((id) => [id, { pending: 0, lastAttempt: null }]));
  if (ids.length === 0) return facts;
  const pending = await db
    .select({ id: notificationDeliveries.channelId, n: count() })
    .from(notificationDeliveries)
    .where(and(inArray(notificationDeliveries.channelId, ids), eq(notificationDeliveries.status, 'pending')))
    .groupBy(notificationDeliveries.channelId)
    .all();
  for (const row of pending) {
    const entry = facts.get(row.id);
    if (entry) entry.pending = row.n;
  }
  const latest = await db
    .select({ id: max(notificationDeliveries.id) })
    .from(notificationDeliveries)
    .where(and(inArray(notificationDeliveries.channelId, ids), isNotNull(notificationDeliveries.lastAttemptAt)))
    .groupBy(notificationDeliveries.channelId)
    .all();
  const latestIds = latest.map((row) => row.id).filter((id): id is number => id !== null);
  if (latestIds.length > 0) {
    const rows = await db
      .select()
      .from(notificationDeliveries)
      .where(inArray(notificationDeliveries.id, latestIds))
      .all();
    for (const row of rows) {
      const entry = facts.get(row.channelId);
      if (entry && row.lastAttemptAt)
        entry.lastAttempt = { at: row.lastAttemptAt, ok: row.status === 'sent', error: row.lastError };
    }
  }
  return facts;
}

function toChannel(deps: Pick<AppDeps, 'secrets'>, row: Row, facts: DeliveryFacts | undefined): NotificationChannel {
  const secrets = readSecrets(deps, row);
  const settings = settingsOf(row);
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    enabled: row.enabled,
    events: row.events as NotificationChannel['events'],
    target: settings.target,
    hasSigningSecret: secrets.signingSecret !== undefined,
    hasToken: secrets.token !== undefined,
    hasPassword: secrets.password !== undefined,
    email: settings.email ?? null,
    pending: facts?.pending ?? 0,
    lastAttempt: facts?.lastAttempt ?? null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

async function rowOf(db: ReadDb, id: number): Promise<Row> {
  const row = await db.select().from(notificationChannels).where(eq(notificationChannels.id, id)).get();
  if (!row) throw notFound('Notification channel');
  return row;
}

export async function getChannel(deps: Pick<AppDeps, 'db' | 'secrets'>, id: number): Promise<NotificationChannel> {
  const row = await rowOf(deps.db, id);
  return toChannel(deps, row, (await deliveryFacts(deps.db, [id])).get(id));
}

export async function listChannels(
  deps: Pick<AppDeps, 'db' | 'secrets'>,
  { page, limit }: PageQuery,
): Promise<ListResponse<NotificationChannel>> {
  const rows = await deps.db
    .select()
    .from(notificationChannels)
    .orderBy(notificationChannels.id)
    .limit(limit)
    .offset((page - 1) * limit)
    .all();
  const total = (await deps.db.select({ n: count() }).from(notificationChannels).get())?.n ?? 0;
  const facts = await deliveryFacts(
    deps.db,
    rows.map((row) => row.id),
  );
  return { data: rows.map((row) => toChannel(deps, row, facts.get(row.id))), page, limit, total };
}

/** Every switched-on channel with the switches it is on for (the queue's fan-out). */
export async function enabledChannels(db: ReadDb): Promise<{ id: number; events: string[] }[]> {
  return await db
    .select({ id: notificationChannels.id, events: notificationChannels.events })
    .from(notificationChannels)
    .where(eq(notificationChannels.enabled, true))
    .all();
}

export async function createChannel(deps: AppDeps, body: NotificationChannelCreate): Promise<NotificationChannel> {
  const { settings, secrets } = splitChannel(body);
  try {
    const row = await deps.db.write(
      async (tx) =>
        await tx
          .insert(notificationChannels)
          .values({
            name: body.name,
            kind: body.kind,
            enabled: body.enabled ?? true,
            events: body.events ?? [...NOTIFICATION_EVENTS],
            settings: settings as unknown as Record<string, unknown>,
            secretsEnc: deps.secrets.encrypt(JSON.stringify(secrets)),
          })
          .returning()
          .get(),
    );
    return toChannel(deps, row, undefined);
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('name', `A notification channel named ${body.name} already exists`);
    throw error;
  }
}

export async function updateChannel(
  deps: AppDeps,
  id: number,
  body: NotificationChannelUpdate,
): Promise<NotificationChannel> {
  const row = await rowOf(deps.db, id);
  const merged = merge(storedBody(deps, row), body);
  const { settings, secrets } = splitChannel(merged);
  try {
    await deps.db.write(async (tx) => {
      await tx
        .update(notificationChannels)
        .set({
          name: merged.name,
          enabled: merged.enabled ?? true,
          events: merged.events ?? [...NOTIFICATION_EVENTS],
          settings: settings as unknown as Record<string, unknown>,
          secretsEnc: deps.secrets.encrypt(JSON.stringify(secrets)),
          updatedAt: deps.now().toISOString(),
        })
        .where(eq(notificationChannels.id, id))
        .run();
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw fieldError('name', `A notification channel named ${merged.name} already exists`);
    throw error;
  }
  return await getChannel(deps, id);
}

export async function deleteChannel(deps: AppDeps, id: number): Promise<void> {
  await rowOf(deps.db, id);
  await deps.db.write(async (tx) => {
    await tx.delete(notificationChannels).where(eq(notificationChannels.id, id)).run();
  });
}

/** The configuration "send test" uses: a saved channel with unsaved edits, or a new one. */
export async function draftConfig(
  deps: Pick<AppDeps, 'db' | 'secrets'>,
  id: number | null,
  body: NotificationChannelCreate | NotificationChannelUpdate,
): Promise<ChannelConfig> {
  if (id === null) return configOf(body as NotificationChannelCreate);
  return configOf(merge(storedBody(deps, await rowOf(deps.db, id)), body));
}

/** Names of channels by id (the deliveries list). */
export async function channelNames(db: ReadDb): Promise<Map<number, string>> {
  const rows = await db
    .select({ id: notificationChannels.id, name: notificationChannels.name })
    .from(notificationChannels)
    .orderBy(desc(notificationChannels.id))
    .all();
  return new Map(rows.map((row) => [row.id, row.name]));
}
