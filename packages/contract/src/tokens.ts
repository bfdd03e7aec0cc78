// Personal access token format: `pstn_` + 36 random base62 characters + 6 base62 characters of CRC32 over
// the random part. The prefix makes leaked tokens recognisable to secret scanners; the checksum lets the CLI
// and the server reject a mistyped token without a database lookup.

export const PAT_PREFIX = 'pstn_';
const BODY_LENGTH = 36;
const CHECKSUM_LENGTH = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = (CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function toBase62(value: number, width: number): string {
  let out = '';
  let n = value;
  for (let i = 0; i < width; i++) {
    out = BASE62.charAt(n % 62) + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** Builds a token from `BODY_LENGTH` random bytes (the caller supplies them: crypto lives outside the contract). */
export function formatPat(randomBytes: Uint8Array): string {
  if (randomBytes.length < BODY_LENGTH) throw new Error(`need ${BODY_LENGTH} random bytes`);
  // 248 = 4 × 62: rejecting bytes ≥ 248 would be unbiased; the modulo bias here is < 1 bit over 36 chars and
  // the body still carries > 200 bits of entropy.
  const body = Array.from(randomBytes.subarray(0, BODY_LENGTH), (b) => BASE62[b % 62]).join('');
  return PAT_PREFIX + body + toBase62(crc32(body), CHECKSUM_LENGTH);
}

export function isWellFormedPat(token: string): boolean {
  const re = new RegExp(`^${PAT_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);
  if (!re.test(token)) return false;
  const body = token.slice(PAT_PREFIX.length, PAT_PREFIX.length + BODY_LENGTH);
  return token.slice(PAT_PREFIX.length + BODY_LENGTH) === toBase62(crc32(body), CHECKSUM_LENGTH);
}

export type TokenStatus = 'Revoked' | 'Expired' | 'Active';

/**
 * The spec's "States and transitions": Revoked if revoked; otherwise Expired if expireAt is earlier than now; otherwise
 * Active.
 */
export function tokenStatus(
  token: { revoked?: boolean | null; expireAt?: string | null },
  now: Date = new Date(),
): TokenStatus {
  if (token.revoked) return 'Revoked';
  if (token.expireAt && Date.parse(token.expireAt) < now.getTime()) return 'Expired';
  return 'Active';
}
