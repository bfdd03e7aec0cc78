import { randomBytes } from 'node:crypto';

// The password step's challenges when two-factor sign-in is on: a random id naming the user who passed the password
// check, good for a few minutes and a few wrong codes, used once. Kept in memory: a restarted control plane asks for
// the password again, which is all a lost challenge costs.

export const CHALLENGE_TTL_SECONDS = 300;
export const CHALLENGE_MAX_FAILURES = 5;
/** Bounds memory under a flood of correct passwords (only the admin's): the oldest challenges go first. */
const MAX_CHALLENGES = 1000;

interface Challenge {
  userId: number;
  expiresAtMs: number;
  failures: number;
}

export interface ChallengeStore {
  issue(userId: number): { challenge: string; expires_in: number };
  /** The user behind a live challenge, or null. */
  userOf(challenge: string): number | null;
  /** A wrong code: after CHALLENGE_MAX_FAILURES the challenge is void. */
  fail(challenge: string): void;
  consume(challenge: string): void;
}

export function createChallengeStore(now: () => Date): ChallengeStore {
  const challenges = new Map<string, Challenge>();
  const live = (id: string): Challenge | null => {
    const entry = challenges.get(id);
    if (!entry) return null;
    if (entry.expiresAtMs <= now().getTime() || entry.failures >= CHALLENGE_MAX_FAILURES) {
      challenges.delete(id);
      return null;
    }
    return entry;
  };
  return {
    issue(userId) {
      const challenge = randomBytes(24).toString('base64url');
      challenges.set(challenge, { userId, expiresAtMs: now().getTime() + CHALLENGE_TTL_SECONDS * 1000, failures: 0 });
      while (challenges.size > MAX_CHALLENGES) {
        const oldest = challenges.keys().next().value;
        if (oldest === undefined) break;
        challenges.delete(oldest);
      }
      return { challenge, expires_in: CHALLENGE_TTL_SECONDS };
    },
    userOf: (challenge) => live(challenge)?.userId ?? null,
    fail(challenge) {
      const entry = live(challenge);
      if (entry) entry.failures += 1;
    },
    consume(challenge) {
      challenges.delete(challenge);
    },
  };
}
