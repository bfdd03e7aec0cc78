import { randomBytes } from 'node:crypto';
import { and, desc, eq, gt, lte } from 'drizzle-orm';
import ipaddr from 'ipaddr.js';
import type { Tx, ReadDb, Store } from '../../db/client.js';
import { signInAttempts } from '../../db/schema.js';

// Sign-in limiter (docs/api.md "Sign-in limits"). The attempts are rows of the database (`sign_in_attempts`), so every
// gateway on one database counts the same ones: N gateways do not give an attacker N times the guesses. Every attempt
// is claimed before the password hash is checked, in one write that checks the counts and inserts the claim (writes
// are serialised, across gateways on PostgreSQL), and counts as a failure until it succeeds: parallel requests see
// each other's claims, so 200 concurrent guesses from one client still reach the hash check at most
// LOGIN_MAX_FAILURES_PER_CLIENT times, whichever gateways they reach. A client already over a limit is refused after
// one read, without a write.
//
// Two sliding windows:
// - per client (an IPv4 address, or the /64 of an IPv6 one, since one subscriber usually holds a whole /64):
//   LOGIN_MAX_FAILURES_PER_CLIENT failures, then 429 until the oldest leaves the window;
// - per username: once LOGIN_MAX_FAILURES_PER_USERNAME failures from anywhere are in the window, the name is under
//   attack, and clients that have themselves failed (or have an attempt in flight) in the window wait until
//   either their own failures or the name's have aged out. A client without a recent failure is never blocked by
//   it, so a flood from other addresses cannot keep the admin out; the flood itself gets one guess per address.
//
// Rows older than the window are deleted with each claim, so the table holds at most one window of claims.

export const LOGIN_WINDOW_MS = 10 * 60_000;
export const LOGIN_MAX_FAILURES_PER_CLIENT = 5;
export const LOGIN_MAX_FAILURES_PER_USERNAME = 10;
/** One claimed attempt: counted as a failure from the moment it is claimed. */
export interface LoginAttempt {
  /** The password was right: the claim is withdrawn and the client's failures are forgotten. */
  succeed(): Promise<void>;
  /** The password was never checked (the server was too busy): the claim is withdrawn. */
  release(): Promise<void>;
}

export type Reservation =
  { attempt: LoginAttempt; retryAfterSeconds?: undefined } | { attempt?: undefined; retryAfterSeconds: number };

export interface LoginLimiter {
  /** Claims an attempt for `ip` at `username`, or says how many seconds the client must wait. */
  reserve(ip: string, username: string): Promise<Reservation>;
}

/** The unit a client is counted as: an IPv4 address (also when IPv4-mapped), or an IPv6 /64. */
export function clientKeyOf(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/64`).toString()}/64`;
}

/** The claims of one client or username in the window, newest first, as many as a limit needs. */
async function recentClaims(db: ReadDb, column: 'client' | 'username', key: string, sinceMs: number, limit: number) {
  const keyColumn = column === 'client' ? signInAttempts.clientKey : signInAttempts.username;
  const rows = await db
    .select({ atMs: signInAttempts.atMs })
    .from(signInAttempts)
    .where(and(eq(keyColumn, key), gt(signInAttempts.atMs, sinceMs)))
    .orderBy(desc(signInAttempts.atMs))
    .limit(limit);
  return rows.map((row) => row.atMs);
}

/** The limits of one limiter (the console's and visitors' passwords use the defaults). */
export interface LimiterLimits {
  maxFailuresPerClient: number;
  maxFailuresPerUsername: number;
}

const PASSWORD_LIMITS: LimiterLimits = {
  maxFailuresPerClient: LOGIN_MAX_FAILURES_PER_CLIENT,
  maxFailuresPerUsername: LOGIN_MAX_FAILURES_PER_USERNAME,
};

/** How long (ms) a client must wait before its next attempt; 0: it may try now. */
async function waitMsOf(
  db: ReadDb,
  limits: LimiterLimits,
  clientKey: string,
  username: string,
  at: number,
): Promise<number> {
  const { maxFailuresPerClient, maxFailuresPerUsername } = limits;
  const since = at - LOGIN_WINDOW_MS;
  const ofClient = await recentClaims(db, 'client', clientKey, since, maxFailuresPerClient);
  // The max-th newest claim is the one whose leaving the window drops the count below the limit.
  if (ofClient.length >= maxFailuresPerClient) return (ofClient[maxFailuresPerClient - 1] ?? at) + LOGIN_WINDOW_MS - at;
  if (ofClient.length === 0) return 0;
  const ofUser = await recentClaims(db, 'username', username, since, maxFailuresPerUsername);
  if (ofUser.length < maxFailuresPerUsername) return 0;
  const ownFailuresGone = (ofClient[0] ?? at) + LOGIN_WINDOW_MS;
  const nameFreed = (ofUser[maxFailuresPerUsername - 1] ?? at) + LOGIN_WINDOW_MS;
  return Math.min(ownFailuresGone, nameFreed) - at;
}

const refusal = (waitMs: number): Reservation => ({ retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });

export function createLoginLimiter(db: Store, now: () => Date, limits = PASSWORD_LIMITS): LoginLimiter {
  return {
    async reserve(ip, username) {
      const at = now().getTime();
      const clientKey = clientKeyOf(ip);
      const name = username.toLowerCase();
      // A client over a limit (a flood's usual answer) costs one read, and never the write lock.
      const seen = await waitMsOf(db, limits, clientKey, name, at);
      if (seen > 0) return refusal(seen);
      const claimed = await db.write(async (tx) => {
        await tx
          .delete(signInAttempts)
          .where(lte(signInAttempts.atMs, at - LOGIN_WINDOW_MS))
          .run();
        const waitMs = await waitMsOf(tx, limits, clientKey, name, at);
        if (waitMs > 0) return { waitMs };
        const id = randomBytes(12).toString('base64url');
        await tx.insert(signInAttempts).values({ id, clientKey, username: name, atMs: at }).run();
        return { id };
      });
      if (claimed.id === undefined) return refusal(claimed.waitMs);
      const { id } = claimed;
      const withdraw = async (tx: Tx): Promise<void> => {
        await tx.delete(signInAttempts).where(eq(signInAttempts.id, id)).run();
      };
      return {
        attempt: {
          succeed: () =>
            db.write(async (tx) => {
              await withdraw(tx);
              // Its failures stop counting against the client, but still count against the name.
              await tx
                .update(signInAttempts)
                .set({ clientKey: null })
                .where(eq(signInAttempts.clientKey, clientKey))
                .run();
            }),
          release: () => db.write(withdraw),
        },
      };
    },
  };
}
