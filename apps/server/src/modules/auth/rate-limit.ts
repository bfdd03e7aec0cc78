import ipaddr from 'ipaddr.js';

// Sign-in limiter (docs/api.md "Sign-in limits"). Every attempt is claimed synchronously, before the password
// hash is awaited, and counts as a failure until it succeeds: parallel requests see each other's claims, so
// 200 concurrent guesses from one client still reach the hash check at most LOGIN_MAX_FAILURES_PER_CLIENT times.
//
// Two sliding windows:
// - per client (an IPv4 address, or the /64 of an IPv6 one, since one subscriber usually holds a whole /64):
//   LOGIN_MAX_FAILURES_PER_CLIENT failures, then 429 until the oldest leaves the window;
// - per username: once LOGIN_MAX_FAILURES_PER_USERNAME failures from anywhere are in the window, the name is under
//   attack, and clients that have themselves failed (or have an attempt in flight) in the window wait until
//   either their own failures or the name's have aged out. A client without a recent failure is never blocked by
//   it, so a flood from other addresses cannot keep the admin out; the flood itself gets one guess per address.

export const LOGIN_WINDOW_MS = 10 * 60_000;
export const LOGIN_MAX_FAILURES_PER_CLIENT = 5;
export const LOGIN_MAX_FAILURES_PER_USERNAME = 10;
/** Bounds memory under a flood of distinct keys; the least recently failed keys are dropped first. */
const MAX_KEYS = 10_000;
/**
 * Per key only the newest failures matter (the count against the limit, and when it drops below it again), so a
 * name guessed from a million addresses keeps a short list; twice the limit leaves room for withdrawn claims.
 */
const MAX_FAILURES_KEPT = 2 * Math.max(LOGIN_MAX_FAILURES_PER_CLIENT, LOGIN_MAX_FAILURES_PER_USERNAME);

/** One claimed attempt: counted as a failure from the moment it is claimed. */
export interface LoginAttempt {
  /** The password was right: the claim is withdrawn and the client's failures are forgotten. */
  succeed(): void;
  /** The password was never checked (the server was too busy): the claim is withdrawn. */
  release(): void;
}

export type Reservation =
  { attempt: LoginAttempt; retryAfterSeconds?: undefined } | { attempt?: undefined; retryAfterSeconds: number };

export interface LoginLimiter {
  /** Claims an attempt for `ip` at `username`, or says how many seconds the client must wait. Synchronous. */
  reserve(ip: string, username: string): Reservation;
}

/** The unit a client is counted as: an IPv4 address (also when IPv4-mapped), or an IPv6 /64. */
export function clientKeyOf(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/64`).toString()}/64`;
}

interface Failure {
  at: number;
}

export function createLoginLimiter(now: () => Date): LoginLimiter {
  const failures = new Map<string, Failure[]>();

  const recent = (key: string, at: number): Failure[] => {
    const list = (failures.get(key) ?? []).filter((failure) => failure.at > at - LOGIN_WINDOW_MS);
    if (list.length === 0) failures.delete(key);
    else failures.set(key, list);
    return list;
  };

  const add = (key: string, failure: Failure): void => {
    const list = failures.get(key) ?? [];
    failures.delete(key); // re-insert so Map order tracks recency for eviction
    failures.set(key, [...list.slice(-(MAX_FAILURES_KEPT - 1)), failure]);
    while (failures.size > MAX_KEYS) {
      const oldest = failures.keys().next().value;
      if (oldest === undefined) break;
      failures.delete(oldest);
    }
  };

  const remove = (key: string, failure: Failure): void => {
    const list = failures.get(key)?.filter((entry) => entry !== failure) ?? [];
    if (list.length === 0) failures.delete(key);
    else failures.set(key, list);
  };

  /** When a window holding `list` drops below `max` entries again. */
  const freedAt = (list: Failure[], max: number, at: number): number =>
    (list[list.length - max]?.at ?? at) + LOGIN_WINDOW_MS;

  return {
    reserve(ip, username) {
      const at = now().getTime();
      const clientKey = `client:${clientKeyOf(ip)}`;
      const userKey = `user:${username.toLowerCase()}`;
      const ofClient = recent(clientKey, at);
      const ofUser = recent(userKey, at);
      let waitMs = 0;
      if (ofClient.length >= LOGIN_MAX_FAILURES_PER_CLIENT)
        waitMs = freedAt(ofClient, LOGIN_MAX_FAILURES_PER_CLIENT, at) - at;
      else if (ofUser.length >= LOGIN_MAX_FAILURES_PER_USERNAME && ofClient.length > 0) {
        const ownFailuresGone = (ofClient.at(-1)?.at ?? at) + LOGIN_WINDOW_MS;
        waitMs = Math.min(ownFailuresGone, freedAt(ofUser, LOGIN_MAX_FAILURES_PER_USERNAME, at)) - at;
      }
      if (waitMs > 0) return { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };

      const claim: Failure = { at };
      add(clientKey, claim);
      add(userKey, claim);
      const withdraw = () => {
        remove(clientKey, claim);
        remove(userKey, claim);
      };
      return {
        attempt: {
          succeed() {
            withdraw();
            failures.delete(clientKey);
          },
          release: withdraw,
        },
      };
    },
  };
}
