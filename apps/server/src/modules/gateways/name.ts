import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATEWAY_NAME_RE } from '../../env.js';

export const GATEWAY_NAME_FILE = 'gateway-name';

/**
 * This gateway's name: POSTERN_GATEWAY_NAME, or one made once and kept in the data dir, so a restarted or recreated
 * gateway with the same volume registers as the same gateway (same key, same tunnel address) instead of a new one.
 */
export function resolveGatewayName(configured: string | undefined, dataDir: string): string {
  if (configured !== undefined) return configured;
  const file = join(dataDir, GATEWAY_NAME_FILE);
  try {
    // 'wx': a name already kept is never overwritten.
    writeFileSync(file, `gw-${randomBytes(4).toString('hex')}\n`, { flag: 'wx', mode: 0o644 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const name = readFileSync(file, 'utf8').trim();
  if (!GATEWAY_NAME_RE.test(name))
    throw new Error(
      `${file} does not hold a valid gateway name (1-63 lowercase letters, digits and hyphens): fix or delete it, or set POSTERN_GATEWAY_NAME`,
    );
  return name;
}
