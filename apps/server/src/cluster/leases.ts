import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Store } from '../db/client.js';
import { leases as leasesTable } from '../db/schema.js';

// Run-once jobs on several gateways (docs/SCALE-OUT.md "Run-once jobs: leases"): each job has a lease, a row of
// `leases` (name, holder, expires_at), and runs only on the gateway holding it. A lease is taken or renewed in one
// `store.write` (on PostgreSQL every write holds the one advisory lock, so two gateways never both see it free),
// renewed every third of its period and given up on a clean shutdown. A holder that dies (SIGKILL, a lost machine)
// stops renewing: another gateway takes it once `expires_at` has passed, so within one lease period. A holder whose
// renewals fail (database away) stops acting once its own deadline (taken at the start of the write, so never later
// than the row says) passes.
//
// `expires_at` is the holder's wall clock (ms since the epoch) and is compared with the taker's: gateways are
// assumed to keep NTP time; a clock skew of s seconds moves a takeover s seconds earlier or later.
//
// SQLite has one gateway by construction (the database is a file in its data dir): there every lease is this
// process's, with no row and no write.

/** The run-once jobs (`notifications`: writing the messages every gateway observes, and delivering them). */
export const LEASE_NAMES = [
  'certificates',
  'service-expiry',
  'audit-retention',
  'health-audit',
  'notifications',
] as const;
export type LeaseName = (typeof LEASE_NAMES)[number];

export const DEFAULT_LEASE_MS = 30_000;

export interface Leases {
  /** Who this process is in the `holder` column: `<hostname>:<pid>:<random>`. */
  readonly holder: string;
  /** Whether this gateway holds the lease now (as its last take or renewal says); never waits. */
  holds(name: LeaseName): boolean;
  /** `listener` runs when this gateway takes (true) or loses (false) a lease; returns the stop. */
  onChange(listener: (name: LeaseName, held: boolean) => void): () => void;
  /** Takes what is free and starts renewing; resolves after the first attempt. */
  start(): Promise<void>;
  /** Stops renewing and gives every lease up (clean shutdown): another gateway takes them at its next attempt. */
  release(): Promise<void>;
  /** Stops renewing and gives nothing up, as a killed process would (tests). */
  abandon(): void;
}

export interface LeaseOptions {
  /** How long a lease lasts without renewal; renewed every third of it. Default 30 s. */
  leaseMs?: number;
  holder?: string;
  /** Wall clock in ms (tests). */
  now?: () => number;
  onError?: (err: unknown) => void;
}

export function createLeases(db: Store, options: LeaseOptions = {}): Leases {
  const holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const now = options.now ?? Date.now;
  const listeners = new Set<(name: LeaseName, held: boolean) => void>();
  /** Until when (this process's clock) each lease is held; absent: not held. */
  const heldUntil = new Map<LeaseName, number>();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;

  if (db.engine === 'sqlite') {
    return {
      holder,
      holds: () => true,
      onChange: () => () => undefined,
      start: () => Promise.resolve(),
      release: () => Promise.resolve(),
      abandon: () => undefined,
    };
  }

  const holds = (name: LeaseName): boolean => (heldUntil.get(name) ?? 0) > now();

  /** What the listeners were last told is held. */
  const reported = new Set<LeaseName>();
  function report(): void {
    for (const name of LEASE_NAMES) {
      const isHeld = holds(name);
      if (isHeld === reported.has(name)) continue;
      if (isHeld) reported.add(name);
      else reported.delete(name);
      for (const listener of listeners) listener(name, isHeld);
    }
  }

  async function attempt(): Promise<void> {
    const startedAt = now();
    const expiresAt = startedAt + leaseMs;
    try {
      const taken = await db.write(async (tx) => {
        const rows: { name: string }[] = [];
        for (const name of LEASE_NAMES) {
          // Taken when free, renewed when ours, left alone while another gateway's has not expired.
          const row = await tx
            .insert(leasesTable)
            .values({ name, holder, expiresAt })
            .onConflictDoUpdate({
              target: leasesTable.name,
              set: { holder: sql`excluded.holder`, expiresAt: sql`excluded.expires_at` },
              setWhere: sql`${leasesTable.holder} = excluded.holder or ${leasesTable.expiresAt} < ${startedAt}`,
            })
            .returning({ name: leasesTable.name })
            .get();
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- no row when another holds it
          if (row) rows.push(row);
        }
        return rows;
      });
      const ours = new Set(taken.map((row) => row.name));
      for (const name of LEASE_NAMES) {
        if (ours.has(name)) heldUntil.set(name, expiresAt);
        else heldUntil.delete(name);
      }
    } catch (err) {
      // Held leases stay held until their deadline: a renewal may succeed before it.
      options.onError?.(err);
    }
    report();
  }

  function tick(): void {
    running ??= attempt().finally(() => {
      running = null;
    });
  }

  /** Losing a lease is noticed at its deadline, not only at the next attempt. */
  const deadlineCheck = setInterval(report, 1000);
  deadlineCheck.unref();

  function abandon(): void {
    if (timer) clearInterval(timer);
    timer = null;
    clearInterval(deadlineCheck);
  }

  return {
    holder,
    holds,
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async start() {
      tick();
      await running;
      timer = setInterval(tick, Math.max(Math.floor(leaseMs / 3), 50));
      timer.unref();
    },
    async release() {
      abandon();
      await running;
      const held = LEASE_NAMES.filter(holds);
      heldUntil.clear();
      report();
      if (held.length === 0) return;
      await db
        .write((tx) =>
          tx
            .delete(leasesTable)
            .where(and(inArray(leasesTable.name, held), eq(leasesTable.holder, holder)))
            .run(),
        )
        .catch((err: unknown) => options.onError?.(err));
    },
    abandon,
  };
}
