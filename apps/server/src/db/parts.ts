/**
 * Values per query of a list the caller does not bound (`IN (…)`): a burst of changes merged into one data-plane run
 * names thousands of hosts and services, and one list of them all would go past SQLite's bound on a statement's
 * variables (999 before 3.32) and make one statement of unbounded size. Each part is a query of its own.
 */
export const VALUES_PER_QUERY = 500;

/** `values` in consecutive parts of at most `size` (none when it is empty). */
export function* partsOf<T>(values: readonly T[], size = VALUES_PER_QUERY): Generator<T[]> {
  for (let start = 0; start < values.length; start += size) yield values.slice(start, start + size);
}

/**
 * The lengths a prepared `IN (…)` list is made for (db/prepared.ts): a list is padded to the next one by repeating its
 * last value, which changes nothing such a list matches, so a few statements serve every length up to the bound.
 */
const PREPARED_LENGTHS = [4, 32, VALUES_PER_QUERY] as const;

/** `part` (at most VALUES_PER_QUERY values, at least one) padded to the next prepared length. */
export function paddedPart<T>(part: readonly T[]): T[] {
  const length = PREPARED_LENGTHS.find((size) => size >= part.length) ?? part.length;
  const last = part[part.length - 1] as T;
  return [...part, ...Array.from({ length: length - part.length }, () => last)];
}
