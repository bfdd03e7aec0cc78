import type { DictNeeds } from '../nginx/dict-sizes.js';
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

  constructor(
    private readonly http: HttpInstance,
    private readonly holds: NginxHolds,
    /** Lands the snapshot the reloaded master loads. */
    private readonly flushSnapshot: () => Promise<void>,
    private readonly logger: DataPlaneLogger,
  ) {}

  async grow(): Promise<void> {
    // A reload that failed (nginx could not map that much shared memory, say) is not tried on every apply.
    if (Date.now() < this.growAgainAt) return;
    let isReloaded = false;
    try {
      isReloaded = await this.http.fit(this.needs, this.flushSnapshot);
    } catch (err) {
      this.growAgainAt = Date.now() + GROW_RETRY_MS;
      this.logger.error(
        { err },
        'nginx: could not grow its shared dictionaries; changes that do not fit are set aside',
      );
      return;
    }
    if (isReloaded) await this.holds.learn();
  }
}
