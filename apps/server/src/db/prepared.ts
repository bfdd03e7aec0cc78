import { Column, getTableColumns, is, Table } from 'drizzle-orm';

// Hot reads are prepared once per database and reused with placeholders: building a drizzle query costs more than
// running it (~0.5 ms against ~0.05 ms per call at 10,000 rows). Statements belong to their connection, so the
// cache is keyed by the database object; a WeakMap lets a closed test database go with its statements.

/** `prepare(db)` runs once per database; every later call for the same database returns its result. */
export function preparedPerDb<D extends object, T>(prepare: (db: D) => T): (db: D) => T {
  const byDb = new WeakMap<D, T>();
  return (db) => {
    let prepared = byDb.get(db);
    if (prepared === undefined) {
      prepared = prepare(db);
      byDb.set(db, prepared);
    }
    return prepared;
  };
}

type Params = Record<string, unknown>;

/** What `mappedRows` needs of a prepared select: its rows as drizzle maps them, and as the driver gives them. */
interface PreparedSelect {
  all(params?: Params): unknown;
  values(params?: Params): unknown;
}

type RowOf<Q extends PreparedSelect> = Awaited<ReturnType<Q['all']>> extends readonly (infer R)[] ? R : never;

interface Slot {
  /** The answer's key, and the key inside it for a column of a table selected as a whole (`{ row: table }`). */
  key: string;
  inner: string | undefined;
  column: Column;
}

function slotsOf(fields: Record<string, unknown>, outer?: string): Slot[] {
  const slots: Slot[] = [];
  for (const [name, field] of Object.entries(fields)) {
    if (is(field, Column))
      slots.push({ key: outer ?? name, inner: outer === undefined ? undefined : name, column: field });
    else if (is(field, Table) && outer === undefined) slots.push(...slotsOf(getTableColumns(field), name));
    else throw new Error('mappedRows: select columns, or tables as a whole one level down');
  }
  return slots;
}

/**
 * The rows of a prepared select of `fields` (columns, or tables as a whole one level down, as given to `select`; not
 * a left-joined table as a whole, which drizzle turns into null when its row is missing), mapped as drizzle maps
 * them (each column's own decoding, SQL NULL as null) by a loop made once per statement. drizzle's own mapper walks
 * every column's path with an iterator and checks its kind on every row: on a list of 10 nodes that was ~15 KB of
 * garbage and a tenth of the request's CPU (bench/README.md, api.ts). Both engines: `values` is the driver's rows as
 * arrays, in the order `select` lists the fields.
 */
export function mappedRows<Q extends PreparedSelect>(
  query: Q,
  fields: Record<string, unknown>,
): { all(params?: Params): Promise<RowOf<Q>[]> } {
  const slots = slotsOf(fields);
  const map = (raw: unknown[]): RowOf<Q> => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < slots.length; i++) {
      const { key, inner, column } = slots[i] as Slot;
      const value = raw[i] === null ? null : column.mapFromDriverValue(raw[i]);
      if (inner === undefined) row[key] = value;
      else ((row[key] ??= {}) as Record<string, unknown>)[inner] = value;
    }
    return row as RowOf<Q>;
  };
  return {
    async all(params) {
      const rows = (await query.values(params)) as unknown[][];
      return rows.map(map);
    },
  };
}
