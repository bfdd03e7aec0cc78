import { BYTE_UNITS } from './constants.js';

/** Byte sizes in 1024 steps, 2 decimals: 1536 → '1.50 KB' (the spec's "Business constants and limits"). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes <= 0) return '0 Bytes';
  // Clamped at 0: below one byte the logarithm is negative and there is no smaller unit than Bytes.
  const exponent = Math.max(0, Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), BYTE_UNITS.length - 1));
  return `${(bytes / 1024 ** exponent).toFixed(2)} ${BYTE_UNITS[exponent] ?? 'Bytes'}`;
}

/** MM/dd/yyyy in local time (the spec's "Business constants and limits"). */
export function formatDate(value: string | Date | null | undefined): string {
  if (!value) return '-';
  const date = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(date.getTime())) return '-';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getMonth() + 1)}/${pad(date.getDate())}/${date.getFullYear()}`;
}

/** The steps of a relative time, the unit below each limit; the console words them in other languages with `Intl`. */
export const RELATIVE_STEPS: readonly [
  limitSeconds: number,
  unitSeconds: number,
  unit: 'second' | 'minute' | 'hour' | 'day' | 'month' | 'year',
][] = [
  [60, 1, 'second'],
  [3600, 60, 'minute'],
  [86_400, 3600, 'hour'],
  [2_592_000, 86_400, 'day'],
  [31_536_000, 2_592_000, 'month'],
  [Infinity, 31_536_000, 'year'],
];

/** 'x minutes ago' style relative time; '-' for never. */
export function formatRelativeTime(value: string | null | undefined, now: Date = new Date()): string {
  if (!value) return '-';
  const then = Date.parse(value);
  if (Number.isNaN(then)) return '-';
  const seconds = Math.max(0, Math.round((now.getTime() - then) / 1000));
  if (seconds < 5) return 'just now';
  for (const [limit, unitSeconds, unit] of RELATIVE_STEPS) {
    if (seconds < limit) {
      const count = Math.floor(seconds / unitSeconds);
      return `${count} ${unit}${count === 1 ? '' : 's'} ago`;
    }
  }
  return '-';
}
