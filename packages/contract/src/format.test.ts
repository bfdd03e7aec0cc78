import { describe, expect, it } from 'vitest';
import { formatBytes, formatDate, formatRelativeTime } from './format.js';

describe('formats of console spec: Business constants and limits', () => {
  it('formats bytes in 1024 steps with 2 decimals', () => {
    expect(formatBytes(0)).toBe('0 Bytes');
    expect(formatBytes(512)).toBe('512.00 Bytes');
    expect(formatBytes(1536)).toBe('1.50 KB');
    expect(formatBytes(1024 ** 2 * 3)).toBe('3.00 MB');
    expect(formatBytes(1024 ** 4 * 2.25)).toBe('2.25 TB');
    expect(formatBytes(1024 ** 5)).toBe('1024.00 TB');
    // Fractions of a byte (rates, averages) stay in Bytes.
    expect(formatBytes(0.5)).toBe('0.50 Bytes');
  });

  it('formats dates as MM/dd/yyyy', () => {
    expect(formatDate(new Date(2026, 0, 5, 10))).toBe('01/05/2026');
    expect(formatDate(null)).toBe('-');
    expect(formatDate('garbage')).toBe('-');
  });

  it('formats handshakes as relative time', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    expect(formatRelativeTime('2026-11-22T11:57:00Z', now)).toBe('3 minutes ago');
    expect(formatRelativeTime('2026-11-22T11:59:00Z', now)).toBe('1 minute ago');
    expect(formatRelativeTime('2026-11-22T09:00:00Z', now)).toBe('3 hours ago');
    expect(formatRelativeTime('2026-11-22T11:59:58Z', now)).toBe('just now');
    expect(formatRelativeTime(null, now)).toBe('-');
  });
});
