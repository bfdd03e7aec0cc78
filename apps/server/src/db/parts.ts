import { sql, type Placeholder } from 'drizzle-orm';

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
 * The rows `read` gives for `values` taken `size` at a time, in the order of their id (`idOf`), each once (a value
 * given twice may fall in two parts).
 */
export async function readInParts<V, R>(
  values: readonly V[],
  size: number,
  read: (part: V[]) => Promise<R[]>,
  idOf: (row: R) => number,
): Promise<R[]> {
  if (values.length <= size) return await read([...values]);
  const rows = new Map<number, R>();
  for (const part of partsOf(values, size)) for (const row of await read(part)) rows.set(idOf(row), row);
  return [...rows.values()].sort((a, b) => idOf(a) - idOf(b));
}

/**
 * The lengths a prepared `IN (…)` list is made for: a list is padded to the next one by repeating its last value,
 * which changes nothing such a list matches, so a few statements serve every length up to the bound.
 */
const PREPARED_LENGTHS = [4, 32, VALUES_PER_QUERY] as const;

/** `part` (at most VALUES_PER_QUERY values, at least one) padded to the next prepared length. */
function paddedPart<T>(part: readonly T[]): T[] {
  const length = PREPARED_LENGTHS.find((size) => size >= part.length) ?? part.length;
  const last = part[part.length - 1] as T;
  return [...part, ...Array.from({ length: length - part.length }, () => last)];
}

/** What a prepared select of a list gives: its rows as the driver gives them (arrays, in the select's order). */
interface PreparedList {
  values(params: Record<string, unknown>): unknown;
}

/**
 * A read by a list of any length (`IN (…)`, the hot reads of a change and of a burst's run): the list in parts of
 * VALUES_PER_QUERY, each padded to a prepared length, each read by the statement `prepare(db, placeholders)` made once
 * per database and length (building a drizzle select costs more than running it: ~0.7 ms of CPU for a scope's).
 * Answers the rows as the driver gives them (`values()`: arrays, the id first), each once, in the order of their id.
 */
export function preparedInList<D extends object, R extends readonly unknown[]>(
  prepare: (db: D, list: Placeholder[]) => PreparedList,
): (db: D, values: readonly (string | number)[]) => Promise<R[]> {
  const byDb = new WeakMap<D, Map<number, PreparedList>>();
  const statement = (db: D, length: number): PreparedList => {
    let byLength = byDb.get(db);
    if (byLength === undefined) byDb.set(db, (byLength = new Map<number, PreparedList>()));
    let query = byLength.get(length);
    if (query === undefined) {
      query = prepare(
        db,
        Array.from({ length }, (_, i) => sql.placeholder(`v${i}`)),
      );
      byLength.set(length, query);
    }
    return query;
  };
  return async (db, values) => {
    if (values.length === 0) return [];
    return readInParts(
      values,
      VALUES_PER_QUERY,
      async (part) => {
        const padded = paddedPart(part);
        const params = Object.fromEntries(padded.map((value, i) => [`v${i}`, value]));
        return (await statement(db, padded.length).values(params)) as R[];
      },
      (row) => row[0] as number,
    );
  };
}
