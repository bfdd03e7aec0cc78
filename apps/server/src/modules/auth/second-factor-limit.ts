import { randomBytes } from 'node:crypto';
import { and, desc, eq, gt, lte } from 'drizzle-orm';
import type { ReadDb, Store } from '../../db/client.js';
import { secondFactorFailures } from '../../db/schema.js';

// The per-account cap on wrong TOTP codes (docs/api.md "Two-factor sign-in"). The sign-in limiter counts per client,
// so an attacker who holds the password and many addresses (an IPv6 /48 is 65,536 clients) gets a guess from each;
// this cap counts the account's wrong codes wherever they came from, in the database (`second_factor_failures`), so
// every gateway on it shares the count. A code check is claimed before the code is evaluated, in one write that
// checks the count (parallel guesses see each other), and the claim is withdrawn when the code was right.
//
// Once the cap is reached, TOTP codes are refused for the account until the oldest wrong one leaves the window; the
// owner is not locked out: recovery codes (80 random bits each, nothing to guess) are still taken, and the answer says
// so. With a 10-per-hour cap and at most 3 accepted codes of 10^6 at any time, a guesser's odds are ≤ 3 × 10^-5 an
// hour (≤ 0.08 % a day), where 65,536 addresses had ~18 % per 10 minutes.

export const TOTP_MAX_FAILURES_PER_ACCOUNT = 10;
export const TOTP_FAILURE_WINDOW_MS = 60 * 60_000;

export type TotpClaim =
  { withdraw(): Promise<void>; retryAfterSeconds?: undefined } | { withdraw?: undefined; retryAfterSeconds: number };

/** How long (ms) the account's TOTP codes are refused; 0: a code may be checked now. */
async function waitMsOf(db: ReadDb, userId: number, at: number): Promise<number> {
  const rows = await db
    .select({ atMs: secondFactorFailures.atMs })
    .from(secondFactorFailures)
    .where(and(eq(secondFactorFailures.userId, userId), gt(secondFactorFailures.atMs, at - TOTP_FAILURE_WINDOW_MS)))
    .orderBy(desc(secondFactorFailures.atMs))
    .limit(TOTP_MAX_FAILURES_PER_ACCOUNT);
  if (rows.length < TOTP_MAX_FAILURES_PER_ACCOUNT) return 0;
  // The cap-th newest is the one whose leaving the window frees a check.
  return (rows[TOTP_MAX_FAILURES_PER_ACCOUNT - 1]?.atMs ?? at) + TOTP_FAILURE_WINDOW_MS - at;
}

const refusal = (waitMs: number): TotpClaim => ({ retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });

/** Claims a TOTP code check for `userId`, or says for how many seconds the account's codes are refused. */
export async function claimTotpCheck(db: Store, now: () => Date, userId: number): Promise<TotpClaim> {
  const at = now().getTime();
  // An account at its cap (a flood's usual answer) costs one read, and never the write lock.
  const seen = await waitMsOf(db, userId, at);
  if (seen > 0) return refusal(seen);
  const claimed = await db.write(async (tx) => {
    await tx
      .delete(secondFactorFailures)
      .where(lte(secondFactorFailures.atMs, at - TOTP_FAILURE_WINDOW_MS))
      .run();
    const waitMs = await waitMsOf(tx, userId, at);
    if (waitMs > 0) return { waitMs };
    const id = randomBytes(12).toString('base64url');
    await tx.insert(secondFactorFailures).values({ id, userId, atMs: at }).run();
    return { id };
  });
  if (claimed.id === undefined) return refusal(claimed.waitMs);
  const { id } = claimed;
  return {
    withdraw: () =>
      db.write(async (tx) => {
        await tx.delete(secondFactorFailures).where(eq(secondFactorFailures.id, id)).run();
      }),
  };
}
