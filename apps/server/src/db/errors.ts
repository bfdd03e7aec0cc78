import { DrizzleQueryError } from 'drizzle-orm';

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

/**
 * `error` as it may be logged. drizzle's asynchronous drivers wrap a failed statement's error in a DrizzleQueryError
 * whose message (and so its stack) lists the statement's parameters: password hashes, token hashes, ciphertexts. Along
 * the cause chain, each one is replaced by an error naming the statement alone, its stack frames and cause kept.
 */
export function withoutQueryParameters(error: unknown): unknown {
  return error instanceof Error ? scrubbed(error, 0) : error;
}

function scrubbed(error: Error, depth: number): Error {
  const cause = depth < 8 && error.cause instanceof Error ? scrubbed(error.cause, depth + 1) : error.cause;
  if (error instanceof DrizzleQueryError) {
    const safe = new Error(`Failed query: ${error.query}`, { cause });
    safe.name = 'DrizzleQueryError';
    const frames = (error.stack ?? '').split('\n').filter((line) => line.startsWith('    at '));
    safe.stack = [`${safe.name}: ${safe.message}`, ...frames].join('\n');
    return safe;
  }
  if (cause === error.cause) return error;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(error) as object) as Error, error);
  Object.defineProperties(copy, {
    message: { value: error.message, writable: true, configurable: true },
    stack: { value: error.stack, writable: true, configurable: true },
    cause: { value: cause, writable: true, configurable: true },
  });
  return copy;
}
