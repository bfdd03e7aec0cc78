import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from './errors.js';

/** Every list answer: `{ data, page, limit, total }`. */
export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), page: z.number().int(), limit: z.number().int(), total: z.number().int() });
export type ListResponse<T> = { data: T[]; page: number; limit: number; total: number };

/** Every error code the server sends (errors.ts, documented in docs/api.md "Error codes"). */
export const ErrorCodeSchema = z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]);

/** 400, 401, 403, 404, 413, 415, 429, 5xx: the spec's `{ message }` plus a stable machine-readable `code`. */
export const MessageErrorSchema = z.object({ message: z.string(), code: ErrorCodeSchema });
export type MessageError = z.infer<typeof MessageErrorSchema>;

export const FieldErrorSchema = z.object({ field: z.string(), message: z.string() });
export type FieldError = z.infer<typeof FieldErrorSchema>;

/** 422: field names equal the request's keys, messages are the spec's. */
export const ValidationErrorSchema = z.object({
  message: z.string(),
  code: z.literal('validation'),
  errors: z.object({ body: z.array(FieldErrorSchema) }),
});
export type ValidationError = z.infer<typeof ValidationErrorSchema>;

export const VALIDATION_FAILED_MESSAGE = 'Validation failed';

/** Maps a zod error onto `{ field, message }` pairs: the first message per top-level field. */
export function toFieldErrors(error: z.ZodError): FieldError[] {
  const seen = new Map<string, string>();
  for (const issue of error.issues) {
    const field = issue.path.length > 0 ? String(issue.path[0]) : '_';
    if (!seen.has(field)) seen.set(field, issue.message);
  }
  return [...seen].map(([field, message]) => ({ field, message }));
}

export function toValidationError(error: z.ZodError): ValidationError {
  return { message: VALIDATION_FAILED_MESSAGE, code: 'validation', errors: { body: toFieldErrors(error) } };
}
