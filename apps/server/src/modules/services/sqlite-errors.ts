/** SQLite unique-constraint violation: a concurrent writer won a race our pre-check could not see. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** SQLite foreign-key violation: the row referred to was deleted between our check and the write. */
export function isForeignKeyViolation(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
