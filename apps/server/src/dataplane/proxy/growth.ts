import { BOOT_GROW_AT, type DictNeeds } from '../nginx/dict-sizes.js';
import type { HttpInstance } from '../nginx/http-instance.js';
import type { DataPlaneLogger } from '../types.js';
import type { NginxHolds } from './held.js';

/** After a failed attempt to grow the dictionaries, the next one waits this long. */
const GROW_RETRY_MS = 60_000;

/**
 * The shared dictionaries sized from the data (dict-sizes.ts): what the data needs, and growing them when it no
 * longer fits (a graceful reload; nginx then holds what the snapshot says, read back here). A failure leaves the sizes
 * as they are: what does not fit is then set aside.
 */
export class DictionaryGrowth {
  /** What the data takes in the dictionaries sized from it. */
  readonly needs: DictNeeds = { gw_routes: 0, gw_certs: 0, gw_stats: 0 };
  private growAgainAt = 0;
  /** Until the first full sync: room for the data twice over (BOOT_GROW_AT), so the first changes do not reload. */
  private isBooting = true;

  constructor(
    private readonly http: HttpInstance,
    private readonly holds: NginxHolds,
    /** Lands the snapshot the reloaded master loads. */
    private readonly flushSnapshot: () => Promise<void>,
    private readonly logger: DataPlaneLogger,
  ) {}

  /** Grows the dictionaries `needs` would fill; true when nginx was reloaded (it then holds what the snapshot says). */
  async grow(): Promise<boolean> {
    // A reload that failed (nginx could not map that much shared memory, say) is not tried on every apply.
    if (Date.now() < this.growAgainAt) return false;
    let isReloaded = false;
    try {
      isReloaded = await this.http.fit(this.needs, this.flushSnapshot, this.isBooting ? BOOT_GROW_AT : undefined);
    } catch (err) {
      this.growAgainAt = Date.now() + GROW_RETRY_MS;
      this.logger.error(
        { err },
        'nginx: could not grow its shared dictionaries; changes that do not fit are set aside',
      );
      return false;
    }
    if (isReloaded) await this.holds.learn();
    return isReloaded;
  }

  /** The first full sync is done: from now on a dictionary grows only when its data would fill GROW_AT of it. */
  booted(): void {
    this.isBooting = false;
  }
}
