/** SQLite unique-constraint violation: a concurrent writer won a race our pre-check could not see. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}
