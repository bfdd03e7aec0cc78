import { writeFileAtomic } from '../atomic-write.js';
import type { AccessTable } from '../nginx/access-table.js';
import { FALLBACK_CERT_NAME, accessSnapshotFile, snapshotFile } from '../nginx/options.js';
import type { DataPlaneLogger } from '../types.js';
import { isHostname } from '../validate.js';

/**
 * The routes snapshot is written once pushes have paused this long (a burst of pushes writes it once, at its end)...
 */
const SNAPSHOT_QUIET_MS = 200;
/** ...or this long after the first push it lacks, so a burst that never pauses still leaves one now and then. */
const SNAPSHOT_MAX_DELAY_MS = 5_000;

/**
 * The snapshot's JSON (`{"version", "hosts": {host: routes JSON}, "certs": [name]}`, what lua/postern.lua `init` reads)
 * in pieces of about 1 MiB, made as they are written.
 */
export function* snapshotPieces(
  hosts: ReadonlyMap<string, string>,
  certNames: readonly string[],
  version: string,
): Generator<string> {
  yield `{"version":${JSON.stringify(version)},"hosts":{`;
  let piece = '';
  let separator = '';
  for (const [host, json] of hosts) {
    piece += `${separator}${JSON.stringify(host)}:${JSON.stringify(json)}`;
    separator = ',';
    if (piece.length >= 1 << 20) {
      yield piece;
      piece = '';
    }
  }
  yield `${piece}},"certs":${JSON.stringify([FALLBACK_CERT_NAME, ...certNames.filter(isHostname)])}}`;
}

/**
 * Writes the latest value it was offered, one write at a time, off the caller's path, and only once offers have
 * paused for `quietMs` (or `maxDelayMs` after the first offer not yet written): a burst of offers writes once at its
 * end, not once per write's duration while it lasts (at 10,000 hosts and more each write is O(n): the table copied,
 * serialised, written and fsynced). Nobody waits but flush(), which writes what is pending at once.
 */
export class LatestWins<T> {
  private pending: { value: T } | null = null;
  private writer: Promise<void> | null = null;
  private lastOfferAt = 0;
  private firstPendingAt = 0;
  /** flush(): the writer stops waiting. */
  private hurry = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly write: (value: T) => Promise<void>,
    private readonly timing: { quietMs: number; maxDelayMs: number } = { quietMs: 0, maxDelayMs: 0 },
  ) {}

  offer(value: T): void {
    const now = Date.now();
    if (this.pending === null) this.firstPendingAt = now;
    this.pending = { value };
    this.lastOfferAt = now;
    this.writer ??= this.writeAll();
  }

  async flush(): Promise<void> {
    this.hurry = true;
    this.wake?.();
    try {
      while (this.writer) await this.writer;
    } finally {
      this.hurry = false;
    }
  }

  private async writeAll(): Promise<void> {
    while (this.pending !== null) {
      await this.untilDue();
      const { value: latest } = this.pending;
      this.pending = null;
      await this.write(latest);
    }
    this.writer = null;
  }

  /** Resolves when the pending value is due: offers paused for quietMs, maxDelayMs since the first, or a flush. */
  private async untilDue(): Promise<void> {
    const { quietMs, maxDelayMs } = this.timing;
    for (;;) {
      const now = Date.now();
      const wait = Math.min(this.lastOfferAt + quietMs, this.firstPendingAt + maxDelayMs) - now;
      if (this.hurry || wait <= 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }
}

interface RoutesSnapshot {
  hosts: ReadonlyMap<string, string>;
  certNames: Iterable<string>;
  at: string;
}

/** What a fresh master (or a grown dictionary) loads before its first request: the routes and the access table. */
export class Snapshots {
  /**
   * Written off the apply's path once pushes pause (LatestWins), latest wins: a burst of changes writes it once, and
   * the apply never waits for it (at 16,000 hosts of ~3.8 KB routes, serialising and writing its 61 MB on every change
   * made each change take ~480 ms instead of ~20 ms). A master that dies before it lands is restarted by this
   * process, which reads back what it holds and pushes what differs.
   */
  private readonly routes: LatestWins<RoutesSnapshot>;
  /** The key inside: 0600, root only, like the secret key beside it. */
  private readonly access: LatestWins<string>;

  constructor(prefixDir: string, logger: DataPlaneLogger) {
    this.routes = new LatestWins<RoutesSnapshot>(
      // Copied when written (once per burst): scoped runs patch the table in place meanwhile.
      ({ hosts, certNames, at }) =>
        writeFileAtomic(snapshotFile(prefixDir), snapshotPieces(new Map(hosts), [...certNames], at), 0o600).catch(
          (err: unknown) => logger.error({ err }, 'nginx: could not save the routes snapshot'),
        ),
      { quietMs: SNAPSHOT_QUIET_MS, maxDelayMs: SNAPSHOT_MAX_DELAY_MS },
    );
    this.access = new LatestWins<string>((text) =>
      writeFileAtomic(accessSnapshotFile(prefixDir), text, 0o600).catch((err: unknown) =>
        logger.error({ err }, 'nginx: could not save the access snapshot'),
      ),
    );
  }

  offerRoutes(hosts: ReadonlyMap<string, string>, certNames: Iterable<string>, at: string): void {
    this.routes.offer({ hosts, certNames, at });
  }

  offerAccess(table: AccessTable, at: string): void {
    this.access.offer(
      JSON.stringify({
        version: at,
        key: table.key,
        policies: Object.fromEntries(table.entries),
        revoked: Object.fromEntries(table.revoked),
      }),
    );
  }

  flushRoutes(): Promise<void> {
    return this.routes.flush();
  }

  async flush(): Promise<void> {
    await this.routes.flush();
    await this.access.flush();
  }
}
