import { afterEach, describe, expect, it } from 'vitest';
import { formatBytes, formatDate, formatDateTime, formatNumber, formatRelativeTime } from './format';
import { activateLanguage } from './i18n';

afterEach(() => activateLanguage('en'));

const now = new Date('2026-11-27T12:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();

describe('figures in the active language', () => {
  it('keeps the spec’s English forms', () => {
    expect(formatBytes(1536)).toBe('1.50 KB');
    expect(formatRelativeTime(ago(180), now)).toBe('3 minutes ago');
    expect(formatRelativeTime(ago(1), now)).toBe('just now');
    expect(formatNumber(12345)).toBe('12345');
    expect(formatRelativeTime(null, now)).toBe('-');
    expect(formatDate('2026-11-27T12:00:00Z')).toBe('11/27/2026');
  });

  it('formats German and Japanese through Intl', async () => {
    await activateLanguage('de');
    expect(formatBytes(1536)).toBe('1,50 KB');
    expect(formatRelativeTime(ago(180), now)).toBe('vor 3 Minuten');
    expect(formatNumber(12345)).toBe('12.345');
    expect(formatBytes(0)).toBe('0 B');
    expect(formatDate('2026-11-27T12:00:00Z')).toBe('27.11.2026');
    expect(formatDate(null)).toBe('-');
    await activateLanguage('ja');
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(512)).toBe('512.00 B');
    expect(formatRelativeTime(ago(7200), now)).toBe('2 時間前');
    expect(formatDate('2026-11-27T12:00:00Z')).toBe('2026/11/27');
    expect(formatRelativeTime(null, now)).toBe('-');
  });

  it('writes dates and times in the language’s order', async () => {
    expect(formatDateTime(now)).toBe(now.toLocaleString());
    await activateLanguage('de');
    expect(formatDateTime(now.toISOString())).toContain('27.11.2026');
    await activateLanguage('ja');
    expect(formatDateTime(now)).toContain('2026/11/27');
  });
});
