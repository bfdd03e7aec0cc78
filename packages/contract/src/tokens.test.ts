import { describe, expect, it } from 'vitest';
import { formatPat, isWellFormedPat, PAT_PREFIX, tokenStatus } from './tokens.js';

const bytes = (seed: number) => Uint8Array.from({ length: 36 }, (_, i) => (i * 31 + seed) % 256);

describe('personal access token format', () => {
  it('has the prefix and a checksum that catches typos', () => {
    const token = formatPat(bytes(7));
    expect(token.startsWith(PAT_PREFIX)).toBe(true);
    expect(isWellFormedPat(token)).toBe(true);
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    expect(isWellFormedPat(token.slice(0, -1) + last)).toBe(false);
    const body = token.slice(PAT_PREFIX.length);
    expect(isWellFormedPat(PAT_PREFIX + (body[0] === 'x' ? 'y' : 'x') + body.slice(1))).toBe(false);
    expect(isWellFormedPat('ghp_' + body)).toBe(false);
  });

  it('derives Revoked, Expired, Active in that order', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    expect(tokenStatus({ revoked: true, expireAt: '2020-01-01T00:00:00Z' }, now)).toBe('Revoked');
    expect(tokenStatus({ revoked: false, expireAt: '2026-11-22T11:59:59Z' }, now)).toBe('Expired');
    expect(tokenStatus({ revoked: false, expireAt: '2026-11-22T12:00:01Z' }, now)).toBe('Active');
    expect(tokenStatus({}, now)).toBe('Active');
  });
});
