import { writeFileAtomic } from '../atomic-write.js';
import type { AccessTable } from '../nginx/access-table.js';
import { FALLBACK_CERT_NAME, accessSnapshotFile, snapshotFile } from '../nginx/options.js';
import type { DataPlaneLogger } from '../types.js';
import { isHostname } from '../validate.js';

/** The routes snapshot is written this long after a push (a burst of pushes writes it once). */
const SNAPSHOT_PAUSE_MS = 200;

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
 * Writes the latest value it was offered, one write at a time, off the caller's path: a burst of offers writes once
 * or twice, and nobody waits but flush().
 */
class LatestWins<T> {
  private pending: { value: T } | null = null;
  private writer: Promise<void> | null = null;

  constructor(
    private readonly write: (value: T) => Promise<void>,
    /** A pause before the first write, so a burst is written once. */
    private readonly pauseMs = 0,
  ) {}

  offer(value: T): void {
    this.pending = { value };
    this.writer ??= (async () => {
      if (this.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
      while (this.pending !== null) {
        const { value: latest } = this.pending;
        this.pending = null;
        await this.write(latest);
      }
      this.writer = null;
    })();
  }

  async flush(): Promise<void> {
    while (this.writer) await this.writer;
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
   * Written off the apply's path and after a short pause, latest wins: a burst of changes writes it once, and the
   * apply never waits for it (at 16,000 hosts of ~3.8 KB routes, serialising and writing its 61 MB on every change
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
      SNAPSHOT_PAUSE_MS,
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
