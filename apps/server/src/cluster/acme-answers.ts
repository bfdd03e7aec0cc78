import { eq, lt } from 'drizzle-orm';
import type { SharedChallenges } from '../model/certificates.js';
import type { Store } from '../db/client.js';
import { acmeChallenges } from '../db/schema.js';
import { listLiveGateways } from '../modules/gateways/registry.js';

// HTTP-01 answers every gateway on one database serves (`acme_challenges`), and the hand-off that lets the CA ask
// whichever gateway its request reaches. The holder of the `certificates` lease stores the answer and announces it;
// every other gateway applies on the announcement (its nginx then serves the answer) and acknowledges the tokens it
// serves on the `acme-served` topic. The holder tells the CA to fetch once every other live gateway acknowledged,
// instead of sleeping a fixed time: as fast as the slowest gateway, and not too early when one is slow. A gateway that
// never answers (an older version, one dying) holds an order up until HAND_OFF_DEADLINE_MS at most; the order then
// goes ahead, as it did before (and fails only if the CA's request reaches that gateway).

export const ACME_SERVED_TOPIC = 'acme-served';
/** How long the holder waits for the other gateways' acknowledgements at most. */
export const HAND_OFF_DEADLINE_MS = 10_000;
/** How long a stored challenge answer may outlive its order (a holder killed mid-order leaves it behind). */
const CHALLENGE_TTL_MS = 3_600_000;
/** Tokens are at most 256 URL-safe characters; one announcement carries as many as fit its payload. */
const ACK_PAYLOAD_BYTES = 3000;

/** "<gateway id> <token> <token> …": who serves which answers. */
function parseAck(payload: string): { gatewayId: number; tokens: string[] } | null {
  const [id = '', ...tokens] = payload.split(' ');
  const gatewayId = Number(id);
  return Number.isInteger(gatewayId) && gatewayId > 0 ? { gatewayId, tokens } : null;
}

export interface AcmeAnswerOptions {
  /** This gateway's id (its `gateways` row): its own acknowledgements are never needed. */
  gatewayId: number;
  deadlineMs?: number;
  onLate?: (token: string, missing: number[]) => void;
}

/** The holder's side: answers stored for every gateway, and `served()` waiting for the others' acknowledgements. */
export function openSharedChallenges(db: Store, options: AcmeAnswerOptions): SharedChallenges & { stop(): void } {
  const deadlineMs = options.deadlineMs ?? HAND_OFF_DEADLINE_MS;
  /** Token → the gateways that said they serve it, while this gateway waits for them. */
  const acks = new Map<string, Set<number>>();
  const waiters = new Set<() => void>();
  const stopListening =
    db.engine === 'sqlite'
      ? () => undefined
      : db.onAnnounce(ACME_SERVED_TOPIC, (payload) => {
          const ack = payload === null ? null : parseAck(payload);
          if (ack === null) return;
          for (const token of ack.tokens) acks.get(token)?.add(ack.gatewayId);
          for (const wake of waiters) wake();
        });

  async function othersLive(): Promise<number[]> {
    const live = await listLiveGateways(db, options.gatewayId);
    return live.map((gateway) => gateway.id).filter((id) => id !== options.gatewayId);
  }

  return {
    async set(token, answer) {
      // Listening before the announcement: an acknowledgement may arrive before this call returns.
      if (!acks.has(token)) acks.set(token, new Set());
      const now = new Date();
      await db.write(async (tx) => {
        await tx
          .delete(acmeChallenges)
          .where(lt(acmeChallenges.createdAt, new Date(now.getTime() - CHALLENGE_TTL_MS).toISOString()))
          .run();
        await tx
          .insert(acmeChallenges)
          .values({ token, keyAuthorization: answer, createdAt: now.toISOString() })
          .onConflictDoUpdate({ target: acmeChallenges.token, set: { keyAuthorization: answer } })
          .run();
      });
      await db.announce().catch(() => undefined);
    },

    async served(token) {
      if (db.engine === 'sqlite') return;
      const others = await othersLive().catch(() => []);
      const heard = acks.get(token) ?? new Set<number>();
      const missing = (): number[] => others.filter((id) => !heard.has(id));
      if (missing().length > 0) {
        let wake: () => void = () => undefined;
        const done = new Promise<void>((resolve) => {
          wake = () => {
            if (missing().length === 0) resolve();
          };
        });
        waiters.add(wake);
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), deadlineMs);
        });
        const outcome = await Promise.race([done, late]);
        clearTimeout(timer);
        waiters.delete(wake);
        if (outcome === 'late') options.onLate?.(token, missing());
      }
      acks.delete(token);
    },

    async remove(token) {
      acks.delete(token);
      await db.write((tx) => tx.delete(acmeChallenges).where(eq(acmeChallenges.token, token)).run());
      await db.announce().catch(() => undefined);
    },

    stop: stopListening,
  };
}

/**
 * Every other gateway's side: after an apply, says which answers its nginx now serves (each once), so the holder
 * can let the CA ask. Tokens that are no longer served are forgotten (an order that ended).
 */
export function createAcmeAcknowledger(db: Store, gatewayId: number): (served: ReadonlySet<string>) => Promise<void> {
  const acknowledged = new Set<string>();
  return async (served) => {
    for (const token of acknowledged) if (!served.has(token)) acknowledged.delete(token);
    const fresh = [...served].filter((token) => !acknowledged.has(token));
    let payload = String(gatewayId);
    const send = async (): Promise<void> => {
      if (payload.includes(' ')) await db.announce(ACME_SERVED_TOPIC, payload);
      payload = String(gatewayId);
    };
    for (const token of fresh) {
      if (payload.length + token.length + 1 > ACK_PAYLOAD_BYTES) await send();
      payload += ` ${token}`;
      acknowledged.add(token);
    }
    await send();
  };
}
