import { and, asc, count, desc, eq, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import {
  notificationEventOf,
  type ListResponse,
  type NotificationDelivery,
  type NotificationDeliveryQuery,
  type NotificationPayload,
} from '@postern/contract';
import type { ReadDb, Store, Tx } from '../../db/client.js';
import { notificationChannels, notificationDeliveries } from '../../db/schema.js';
import { channelNames, enabledChannels } from './channels.js';

// The delivery queue (table notification_deliveries): a message becomes one row per switched-on channel that takes
// it, written in the same transaction as whatever decided it (an alert row), so a message is either queued for
// every channel or for none, and survives a restart. The worker (worker.ts) claims due rows, sends them in id order
// per channel, and records the outcome.

export type DeliveryRow = typeof notificationDeliveries.$inferSelect;

/** Queues `payloads` for every enabled channel switched on for their event; returns how many rows were written. */
export async function enqueue(tx: Tx, payloads: readonly NotificationPayload[], nowMs: number): Promise<number> {
  if (payloads.length === 0) return 0;
  const channels = await enabledChannels(tx);
  let written = 0;
  for (const payload of payloads) {
    const event = notificationEventOf[payload.type];
    for (const channel of channels) {
      if (event === null || !channel.events.includes(event)) continue;
      await tx
        .insert(notificationDeliveries)
        .values({
          channelId: channel.id,
          payload,
          status: 'pending',
          nextAttemptAt: nowMs,
          // The same clock as every other time of the queue: the give-up age is measured from it.
          createdAt: new Date(nowMs).toISOString(),
        })
        .run();
      written++;
    }
  }
  return written;
}

/** Queues in a transaction of its own (messages no alert row decides: sign-ins, drift, set-aside changes). */
export async function enqueueNow(db: Store, payloads: readonly NotificationPayload[], nowMs: number): Promise<number> {
  if (payloads.length === 0) return 0;
  return await db.write(async (tx) => await enqueue(tx, payloads, nowMs));
}

/**
 * The rows due now, at most `perChannel` per channel: for each switched-on channel its oldest pending rows, provided
 * the oldest is due (a later one never overtakes it: messages arrive in the order they were decided) and not being
 * sent by another worker.
 */
export async function dueRows(db: ReadDb, nowMs: number, perChannel: number): Promise<DeliveryRow[]> {
  const heads = await db
    .select({ channelId: notificationDeliveries.channelId, id: sql<number>`min(${notificationDeliveries.id})` })
    .from(notificationDeliveries)
    .innerJoin(notificationChannels, eq(notificationChannels.id, notificationDeliveries.channelId))
    .where(and(eq(notificationDeliveries.status, 'pending'), eq(notificationChannels.enabled, true)))
    .groupBy(notificationDeliveries.channelId)
    .all();
  const rows: DeliveryRow[] = [];
  for (const head of heads) {
    const batch = await db
      .select()
      .from(notificationDeliveries)
      .where(
        and(
          eq(notificationDeliveries.channelId, head.channelId),
          eq(notificationDeliveries.status, 'pending'),
          sql`${notificationDeliveries.id} >= ${head.id}`,
        ),
      )
      .orderBy(asc(notificationDeliveries.id))
      .limit(perChannel)
      .all();
    const first = batch[0];
    if (!first || first.nextAttemptAt > nowMs || (first.claimedUntil !== null && first.claimedUntil > nowMs)) continue;
    rows.push(...batch.filter((row) => row.claimedUntil === null || row.claimedUntil <= nowMs));
  }
  return rows;
}

/** Marks rows as being sent until `untilMs`; answers the ids this worker got (another may have claimed some). */
export async function claim(db: Store, ids: number[], nowMs: number, untilMs: number): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const claimed = await db.write(
    async (tx) =>
      await tx
        .update(notificationDeliveries)
        .set({ claimedUntil: untilMs })
        .where(
          and(
            inArray(notificationDeliveries.id, ids),
            eq(notificationDeliveries.status, 'pending'),
            or(isNull(notificationDeliveries.claimedUntil), lte(notificationDeliveries.claimedUntil, nowMs)),
          ),
        )
        .returning({ id: notificationDeliveries.id })
        .all(),
  );
  return new Set(claimed.map((row) => row.id));
}

export type Outcome =
  | { id: number; result: 'sent'; at: string }
  | { id: number; result: 'retry'; at: string; error: string; nextAttemptAt: number }
  | { id: number; result: 'failed'; at: string; error: string };

/** Records what happened to claimed rows, in one write. */
export async function recordOutcomes(tx: Tx, outcomes: readonly Outcome[]): Promise<void> {
  for (const outcome of outcomes) {
    const base = {
      attempts: sql`${notificationDeliveries.attempts} + 1`,
      claimedUntil: null,
      lastAttemptAt: outcome.at,
    };
    const set =
      outcome.result === 'sent'
        ? { ...base, status: 'sent' as const, lastError: null, finishedAt: outcome.at }
        : outcome.result === 'retry'
          ? { ...base, lastError: outcome.error, nextAttemptAt: outcome.nextAttemptAt }
          : { ...base, status: 'failed' as const, lastError: outcome.error, finishedAt: outcome.at };
    await tx.update(notificationDeliveries).set(set).where(eq(notificationDeliveries.id, outcome.id)).run();
  }
}

/** Rows claimed but not sent (they waited behind a failure): free for the next turn. */
export async function releaseClaims(tx: Tx, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await tx
    .update(notificationDeliveries)
    .set({ claimedUntil: null })
    .where(inArray(notificationDeliveries.id, [...ids]))
    .run();
}

/** Sent and failed rows older than `beforeIso` go (a week is kept for the console's list). */
export async function pruneDeliveries(db: Store, beforeIso: string): Promise<number> {
  const removed = await db.write(
    async (tx) =>
      await tx
        .delete(notificationDeliveries)
        .where(
          and(
            inArray(notificationDeliveries.status, ['sent', 'failed']),
            lt(notificationDeliveries.createdAt, beforeIso),
          ),
        )
        .returning({ id: notificationDeliveries.id })
        .all(),
  );
  return removed.length;
}

export async function listDeliveries(
  db: ReadDb,
  query: NotificationDeliveryQuery,
): Promise<ListResponse<NotificationDelivery>> {
  const where = and(
    query.channelId === undefined ? undefined : eq(notificationDeliveries.channelId, query.channelId),
    query.status === undefined ? undefined : eq(notificationDeliveries.status, query.status),
  );
  const rows = await db
    .select()
    .from(notificationDeliveries)
    .where(where)
    .orderBy(desc(notificationDeliveries.id))
    .limit(query.limit)
    .offset((query.page - 1) * query.limit)
    .all();
  const total = (await db.select({ n: count() }).from(notificationDeliveries).where(where).get())?.n ?? 0;
  const names = await channelNames(db);
  return {
    data: rows.map((row) => {
      const payload = row.payload as unknown as NotificationPayload;
      return {
        id: row.id,
        channelId: row.channelId,
        channelName: names.get(row.channelId) ?? '',
        type: payload.type,
        title: payload.title,
        status: row.status,
        attempts: row.attempts,
        nextAttemptAt: row.status === 'pending' ? new Date(row.nextAttemptAt).toISOString() : null,
        lastError: row.lastError,
        created_at: row.createdAt,
        finishedAt: row.finishedAt,
      };
    }),
    page: query.page,
    limit: query.limit,
    total,
  };
}
