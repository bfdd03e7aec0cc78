// Temporary exposure, the pure part: what the form's choice sends, and how the time left reads.

/** The form's choice: '' keeps what is stored (a new service: none), 'none' clears it, digits are a ttl in seconds. */
export type ExpiryChoice = string;

export const DURATIONS = [
  { value: '3600', label: '1 hour' },
  { value: '28800', label: '8 hours' },
  { value: '86400', label: '1 day' },
  { value: '604800', label: '7 days' },
];

/** What the choice adds to the request body. */
export function expiryBody(choice: ExpiryChoice): { ttl?: number; expiresAt?: null } {
  if (choice === 'none') return { expiresAt: null };
  if (/^\d+$/.test(choice)) return { ttl: Number(choice) };
  return {};
}

/** "2h 5m", "4m 10s", "12s": the time left, to the two largest units. */
export function formatRemaining(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const parts: [number, string][] = [
    [Math.floor(total / 86_400), 'd'],
    [Math.floor((total % 86_400) / 3600), 'h'],
    [Math.floor((total % 3600) / 60), 'm'],
    [total % 60, 's'],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  if (first < 0) return '0s';
  return parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n}${unit}`)
    .join(' ');
}
