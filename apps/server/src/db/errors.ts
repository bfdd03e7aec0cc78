// Constraint violations by SQLite's codes: the PostgreSQL store gives its errors the same codes (postgres.ts). drizzle
// may wrap the driver's error (DrizzleQueryError): the code is looked for along the `cause` chain.

function codeOf(error: unknown): unknown {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code !== undefined) return code;
  }
  return undefined;
}

/** Unique-constraint violation: a concurrent writer won a race our pre-check could not see. */
export function isUniqueViolation(error: unknown): boolean {
  const code = codeOf(error);
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Marks an error of the store's connection (the database is down or unreachable), not of the query. */
export const DATABASE_UNAVAILABLE = 'POSTERN_DATABASE_UNAVAILABLE';

export const DATABASE_UNAVAILABLE_MESSAGE =
  'The database does not answer: nothing was saved. The gateways go on serving what they serve; try again when it is back.';

export function isDatabaseUnavailable(error: unknown): boolean {
  return codeOf(error) === DATABASE_UNAVAILABLE;
}

/** Foreign-key violation: the row referred to was deleted between our check and the write. */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = codeOf(error);
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
