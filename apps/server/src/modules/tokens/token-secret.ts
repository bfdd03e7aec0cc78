import { createHash, randomBytes } from 'node:crypto';
import { formatPat } from '@postern/contract';

// A PAT carries 200+ random bits, so a plain SHA-256 is enough to store it: no dictionary to slow down.

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export function generateToken(): { token: string; tokenHash: string } {
  const token = formatPat(randomBytes(36));
  return { token, tokenHash: hashToken(token) };
}
