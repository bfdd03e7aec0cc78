// Temporary exposure, the pure part: what the form's choice sends, and how the time left reads.

/** The form's choice: '' keeps what is stored (a new service: none), 'none' clears it, digits are a ttl in seconds. */
export type ExpiryChoice = string;

/** The durations offered, in seconds: whole hours below a day, whole days from one (service-expiry.tsx names them). */
export const DURATIONS = ['3600', '28800', '86400', '604800'];

/** What the choice adds to the request body. */
export function expiryBody(choice: ExpiryChoice): { ttl?: number; expiresAt?: null } {
  if (choice === 'none') return { expiresAt: null };
  if (/^\d+$/.test(choice)) return { ttl: Number(choice) };
  return {};
}

export type TimeUnit = 'd' | 'h' | 'm' | 's';

/**
 * "2h 5m", "4m 10s", "12s": the time left, to the two largest units; `unit` writes one amount (the console's in the
 * operator's language: `2 Std. 5 Min.`, `2時間5分`) and `pair` puts two of them together.
 */
export function formatRemaining(
  ms: number,
  unit: (amount: number, unit: TimeUnit) => string = (amount, name) => `${amount}${name}`,
  pair: (first: string, second: string) => string = (first, second) => `${first} ${second}`,
): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const parts: [number, TimeUnit][] = [
    [Math.floor(total / 86_400), 'd'],
    [Math.floor((total % 86_400) / 3600), 'h'],
    [Math.floor((total % 3600) / 60), 'm'],
    [total % 60, 's'],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  if (first < 0) return unit(0, 's');
  const [larger = '', smaller] = parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, name]) => unit(n, name));
  return smaller === undefined ? larger : pair(larger, smaller);
}
