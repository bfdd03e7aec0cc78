import { eq } from 'drizzle-orm';
import type { NotificationPayload } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { notificationChannels } from '../../db/schema.js';
import { toChannelConfig } from './channels.js';
import {
  claim,
  dueRows,
  pruneDeliveries,
  recordOutcomes,
  releaseClaims,
  type DeliveryRow,
  type Outcome,
} from './queue.js';
import { describeFailure, type Outbound } from './senders/http-post.js';
import { sendToChannel } from './senders/index.js';

// The delivery worker: on the gateway holding the `notifications` lease, every tick (and at once after a message was
// queued here) it claims the due rows, sends each channel's in id order, one after another, and records what
// happened. A failure stops that channel's turn (the rest wait behind it: messages arrive in order) and is retried
// with back-off, doubling from the first delay up to the maximum, for DELIVERY_GIVE_UP_MS; then the row is failed
// for good and the audit log says so. A worker that dies while sending leaves its claim to run out: the row is
// sent again (at least once; a receiver drops a repeated `id`).

export interface DeliveryTimings {
  /** The first retry's delay; each further one doubles it. */
  retryFirstMs: number;
  retryMaxMs: number;
  /** How long a message is retried before it is given up (and audited). */
  giveUpMs: number;
  /** How often the queue is looked at. */
  tickMs: number;
  /** One delivery's deadline (connect to answer). */
  sendTimeoutMs: number;
}

export const DEFAULT_DELIVERY_TIMINGS: DeliveryTimings = {
  retryFirstMs: 10_000,
  retryMaxMs: 15 * 60_000,
  giveUpMs: 24 * 3600_000,
  tickMs: 1000,
  sendTimeoutMs: 10_000,
};

/** Rows sent per channel and turn. */
const PER_CHANNEL = 20;
/** Sent and failed rows are kept this long (the console's list of deliveries). */
const KEEP_MS = 7 * 86_400_000;
const PRUNE_EVERY_MS = 3600_000;

export function retryDelayMs(timings: DeliveryTimings, failuresBefore: number): number {
  return Math.min(timings.retryMaxMs, timings.retryFirstMs * 2 ** Math.min(failuresBefore, 30));
}

export interface DeliveryWorker {
  start(): void;
  stop(): Promise<void>;
  /** Look at the queue now (a message was queued on this gateway). */
  wake(): void;
  /** One turn now, resolved when it is done (tests). */
  runOnce(): Promise<void>;
}

type Log = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };

/** What the worker's channel sends need: the app, where messages may go, the timings and the log. */
interface SendContext {
  deps: AppDeps;
  outbound: () => Outbound & { heloName: string };
  timings: DeliveryTimings;
  log: Log;
}

/**
 * Sends one channel's claimed rows in id order and says what became of each. A failure stops the channel's turn: the
 * rows behind it are left undecided (the caller lifts their claim) so messages arrive in order.
 */
async function sendChannel(
  { deps, outbound, timings, log }: SendContext,
  channelId: number,
  rows: DeliveryRow[],
  nowMs: number,
): Promise<Outcome[]> {
  const row = await deps.db.select().from(notificationChannels).where(eq(notificationChannels.id, channelId)).get();
  if (!row) return [];
  const config = toChannelConfig(deps, row);
  const outcomes: Outcome[] = [];
  for (const delivery of rows) {
    const payload = delivery.payload as unknown as NotificationPayload;
    const at = deps.now().toISOString();
    try {
      await sendToChannel(config, payload, {
        ...outbound(),
        deliveryId: delivery.id,
        nowSeconds: Math.floor(deps.now().getTime() / 1000),
      });
      outcomes.push({ id: delivery.id, result: 'sent', at });
    } catch (error) {
      const reason = describeFailure(error);
      const age = nowMs - Date.parse(delivery.createdAt);
      if (age >= timings.giveUpMs) {
        outcomes.push({ id: delivery.id, result: 'failed', at, error: reason });
        await deps.audit
          .record({
            actor: { kind: 'system' },
            action: 'notification.failed',
            target: { type: 'notification-channel', id: channelId, name: row.name },
            after: { type: payload.type, title: payload.title, attempts: delivery.attempts + 1 },
            detail: `${payload.title}: ${reason}`,
          })
          .catch((err: unknown) => log.warn({ err }, 'notifications: could not audit a delivery given up'));
        continue;
      }
      outcomes.push({
        id: delivery.id,
        result: 'retry',
        at,
        error: reason,
        nextAttemptAt: deps.now().getTime() + retryDelayMs(timings, delivery.attempts),
      });
      log.warn({ channel: row.name, attempts: delivery.attempts + 1, reason }, 'notifications: delivery failed');
      // The rest of this channel's rows wait behind this one (the caller lifts their claim).
      break;
    }
  }
  return outcomes;
}

export function createDeliveryWorker(
  deps: AppDeps,
  outbound: () => Outbound & { heloName: string },
  timings: DeliveryTimings,
  log: Log,
): DeliveryWorker {
  const context: SendContext = { deps, outbound, timings, log };
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  // Read through a function: `turn` sets it while awaited, which the compiler's narrowing does not see.
  const isAgain = () => again;
  let prunedAt = 0;

  async function turn(): Promise<void> {
    if (!deps.leases.holds('notifications')) return;
    const nowMs = deps.now().getTime();
    if (nowMs - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = nowMs;
      await pruneDeliveries(deps.db, new Date(nowMs - KEEP_MS).toISOString());
    }
    const due = await dueRows(deps.db, nowMs, PER_CHANNEL);
    if (due.length === 0) return;
    const claimed = await claim(
      deps.db,
      due.map((row) => row.id),
      nowMs,
      nowMs + 2 * timings.sendTimeoutMs * PER_CHANNEL,
    );
    const byChannel = new Map<number, DeliveryRow[]>();
    for (const row of due) {
      if (!claimed.has(row.id)) continue;
      byChannel.set(row.channelId, [...(byChannel.get(row.channelId) ?? []), row]);
    }
    // Channels are independent: one that times out delays no other.
    const outcomes = (
      await Promise.all([...byChannel].map(([channelId, rows]) => sendChannel(context, channelId, rows, nowMs)))
    ).flat();
    const decided = new Set(outcomes.map((outcome) => outcome.id));
    const unsent = [...claimed].filter((id) => !decided.has(id));
    await deps.db.write(async (tx) => {
      await recordOutcomes(tx, outcomes);
      await releaseClaims(tx, unsent);
    });
    // Something was sent: more may be due behind it.
    if (outcomes.some((outcome) => outcome.result === 'sent')) again = true;
  }

  function tick(): void {
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      for (let more = true; more; more = isAgain()) {
        again = false;
        try {
          await turn();
        } catch (err) {
          log.warn({ err }, 'notifications: the delivery queue could not be worked; retried');
        }
      }
    })().finally(() => {
      running = null;
    });
  }

  return {
    start() {
      timer ??= setInterval(tick, timings.tickMs);
      timer.unref();
      tick();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
    wake: tick,
    async runOnce() {
      tick();
      await running;
    },
  };
}
