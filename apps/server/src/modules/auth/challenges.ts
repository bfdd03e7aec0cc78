import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, gt, inArray, lt, lte, ne, sql } from 'drizzle-orm';
import type { Tx, Store } from '../../db/client.js';
import { signInChallenges } from '../../db/schema.js';

// The first step's challenges when two-factor sign-in is on: a random id naming the user who passed the password
// check (or signed in through an identity provider), good for a few minutes and a few wrong codes, used once. Rows of
// the database (`sign_in_challenges`, keyed by the SHA-256 of the challenge), so the second step may reach any gateway
// on the database, and a password change or turning two-factor sign-in off or on voids the user's challenges
// everywhere (`voidChallenges`, in the same write as the change).

export const CHALLENGE_TTL_SECONDS = 300;
export const CHALLENGE_MAX_FAILURES = 5;
/** Bounds the rows under a flood of correct passwords (only whoever holds the password): the oldest go first. */
export const MAX_CHALLENGES_PER_USER = 20;

export interface LiveChallenge {
  /** The row's id (the challenge's hash). */
  id: string;
  userId: number;
  /** How the first step was passed: 'password', or 'single sign-on (<provider>)'. */
  via: string;
}

export interface ChallengeStore {
  issue(userId: number, via: string): Promise<{ challenge: string; expires_in: number }>;
  /** The live challenge (not expired, used, voided, nor worn out by wrong codes), or null. */
  find(challenge: string): Promise<LiveChallenge | null>;
  /** A wrong code: after CHALLENGE_MAX_FAILURES the challenge is void. */
  fail(id: string): Promise<void>;
  /** Uses the challenge up; false when it was gone already (used by a parallel request, or voided meanwhile). */
  consume(id: string): Promise<boolean>;
}

const idOf = (challenge: string): string => createHash('sha256').update(challenge).digest('base64url');

/** Voids every challenge of `userId` (its password or second factor changed in this write). */
export async function voidChallenges(tx: Tx, userId: number): Promise<void> {
  await tx.delete(signInChallenges).where(eq(signInChallenges.userId, userId)).run();
}

export function createChallengeStore(db: Store, now: () => Date): ChallengeStore {
  return {
    async issue(userId, via) {
      const challenge = randomBytes(24).toString('base64url');
      const at = now().getTime();
      const id = idOf(challenge);
      await db.write(async (tx) => {
        await tx.delete(signInChallenges).where(lte(signInChallenges.expiresAtMs, at)).run();
        await tx
          .insert(signInChallenges)
          .values({ id, userId, via, expiresAtMs: at + CHALLENGE_TTL_SECONDS * 1000, failures: 0 })
          .run();
        // The new one stays whatever the clock says (issued in the same millisecond as others, say).
        const beyond = await tx
          .select({ id: signInChallenges.id })
          .from(signInChallenges)
          .where(and(eq(signInChallenges.userId, userId), ne(signInChallenges.id, id)))
          .orderBy(desc(signInChallenges.expiresAtMs))
          .limit(1000)
          .offset(MAX_CHALLENGES_PER_USER - 1);
        if (beyond.length > 0)
          await tx
            .delete(signInChallenges)
            .where(
              inArray(
                signInChallenges.id,
                beyond.map((row) => row.id),
              ),
            )
            .run();
      });
      return { challenge, expires_in: CHALLENGE_TTL_SECONDS };
    },
    async find(challenge) {
      const row = await db
        .select({ id: signInChallenges.id, userId: signInChallenges.userId, via: signInChallenges.via })
        .from(signInChallenges)
        .where(
          and(
            eq(signInChallenges.id, idOf(challenge)),
            gt(signInChallenges.expiresAtMs, now().getTime()),
            lt(signInChallenges.failures, CHALLENGE_MAX_FAILURES),
          ),
        )
        .get();
      return row ?? null;
    },
    async fail(id) {
      await db.write(
        async (tx) =>
          await tx
            .update(signInChallenges)
            .set({ failures: sql`${signInChallenges.failures} + 1` })
            .where(eq(signInChallenges.id, id))
            .run(),
      );
    },
    async consume(id) {
      const used = await db.write((tx) =>
        tx
          .delete(signInChallenges)
          .where(and(eq(signInChallenges.id, id), gt(signInChallenges.expiresAtMs, now().getTime())))
          .returning({ id: signInChallenges.id }),
      );
      return used.length === 1;
    },
  };
}
