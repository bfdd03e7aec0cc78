// Failed-login limiter, checked before any password hashing so a blocked client costs no argon2 work.
// Counts failures in a sliding window per client IP and per username: the IP limit stops one client guessing,
// the (higher) username limit stops a distributed guess at the admin account without letting a single client
// lock the admin out.

export const LOGIN_WINDOW_MS = 10 * 60_000;
export const LOGIN_MAX_FAILURES_PER_IP = 5;
export const LOGIN_MAX_FAILURES_PER_USERNAME = 10;
/** Bounds memory under a flood of distinct keys; the oldest keys are dropped first. */
const MAX_KEYS = 10_000;

export interface LoginLimiter {
  /** Seconds until the client may try again, or 0 when it may try now. */
  retryAfterSeconds(ip: string, username: string): number;
  recordFailure(ip: string, username: string): void;
  recordSuccess(ip: string, username: string): void;
}

export function createLoginLimiter(now: () => Date): LoginLimiter {
  const failures = new Map<string, number[]>();
  const keysOf = (ip: string, username: string) =>
    [
      [`ip:${ip}`, LOGIN_MAX_FAILURES_PER_IP],
      [`user:${username.toLowerCase()}`, LOGIN_MAX_FAILURES_PER_USERNAME],
    ] as const;

  const recent = (key: string, at: number): number[] => {
    const list = (failures.get(key) ?? []).filter((t) => t > at - LOGIN_WINDOW_MS);
    if (list.length === 0) failures.delete(key);
    else failures.set(key, list);
    return list;
  };

  return {
    retryAfterSeconds(ip, username) {
      const at = now().getTime();
      let waitMs = 0;
      for (const [key, max] of keysOf(ip, username)) {
        const list = recent(key, at);
        if (list.length >= max) {
          // Blocked until enough failures have left the window to get below the limit again.
          const freedAt = (list[list.length - max] ?? at) + LOGIN_WINDOW_MS;
          waitMs = Math.max(waitMs, freedAt - at);
        }
      }
      return Math.ceil(waitMs / 1000);
    },
    recordFailure(ip, username) {
      const at = now().getTime();
      for (const [key] of keysOf(ip, username)) {
        const list = recent(key, at);
        failures.delete(key); // re-insert so Map order tracks recency for eviction
        failures.set(key, [...list, at]);
      }
      while (failures.size > MAX_KEYS) {
        const oldest = failures.keys().next().value;
        if (oldest === undefined) break;
        failures.delete(oldest);
      }
    },
    recordSuccess(ip, username) {
      for (const [key] of keysOf(ip, username)) failures.delete(key);
    },
  };
}
