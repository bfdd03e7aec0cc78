import {
  BYTE_UNITS,
  formatBytes as formatBytesInEnglish,
  formatDate as formatDateInEnglish,
  formatRelativeTime as formatRelativeTimeInEnglish,
  RELATIVE_STEPS,
} from '@postern/contract';
import { activeLanguage, SOURCE_LANGUAGE } from './i18n';

// Figures in the active language through Intl. English keeps the spec's own forms (the contract's formatters:
// '1.50 KB', '3 minutes ago', plain counts), which the spec and its tests word exactly.

const isEnglish = () => activeLanguage() === SOURCE_LANGUAGE;

/** A count: `1234` in English (the spec's), `1.234` in German, `1 234` in French. */
export function formatNumber(value: number): string {
  return isEnglish() ? String(value) : new Intl.NumberFormat(activeLanguage()).format(value);
}

/** Byte sizes in 1024 steps with 2 decimals, the decimal mark of the language: `1,50 KB` in German; bytes as `B`. */
export function formatBytes(bytes: number): string {
  if (isEnglish()) return formatBytesInEnglish(bytes);
  const size = bytes > 0 && Number.isFinite(bytes) ? bytes : 0;
  const exponent = Math.max(0, Math.min(Math.floor(Math.log(size) / Math.log(1024)), BYTE_UNITS.length - 1));
  const value = new Intl.NumberFormat(activeLanguage(), { maximumFractionDigits: 2, minimumFractionDigits: size && 2 });
  return `${value.format(size / 1024 ** exponent)} ${(exponent && BYTE_UNITS[exponent]) || 'B'}`;
}

/** How long ago, in the contract's steps: `vor 3 Minuten`, `3 分前`; '-' for never. */
export function formatRelativeTime(value: string | null | undefined, now: Date = new Date()): string {
  if (isEnglish() || !value || Number.isNaN(Date.parse(value))) return formatRelativeTimeInEnglish(value, now);
  const seconds = Math.max(0, Math.round((now.getTime() - Date.parse(value)) / 1000));
  const format = new Intl.RelativeTimeFormat(activeLanguage(), { numeric: 'auto' });
  if (seconds < 5) return format.format(0, 'second');
  for (const [limit, unitSeconds, unit] of RELATIVE_STEPS) {
    if (seconds < limit) return format.format(-Math.floor(seconds / unitSeconds), unit);
  }
  return '-';
}

/** A calendar date: the spec's `MM/dd/yyyy` in English, the language's numeric form otherwise (`27.11.2026`). */
export function formatDate(value: string | Date | null | undefined): string {
  const date = typeof value === 'string' ? new Date(value) : value;
  if (isEnglish() || !date || Number.isNaN(date.getTime())) return formatDateInEnglish(value);
  return new Intl.DateTimeFormat(activeLanguage(), { year: 'numeric', month: '2-digit', day: '2-digit' }).format(date);
}

/** A date and time: the browser's own form in English (as the console always showed it), the language's otherwise. */
export function formatDateTime(value: string | number | Date): string {
  const date = new Date(value);
  return isEnglish() ? date.toLocaleString() : date.toLocaleString(activeLanguage());
}
