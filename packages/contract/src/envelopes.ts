import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from './errors.js';
import { describeMessage } from './message-codes.js';

/** Every list answer: `{ data, page, limit, total }`. */
export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), page: z.number().int(), limit: z.number().int(), total: z.number().int() });
export type ListResponse<T> = { data: T[]; page: number; limit: number; total: number };

/** Every error code the server sends (errors.ts, documented in docs/api.md "Error codes"). */
export const ErrorCodeSchema = z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]);

/**
 * A message code (message-codes.ts `messageTexts`, docs/api.md "Message codes"): the console's `error.<code>` texts.
 * A string, not the list of codes: the list repeated in every error answer of the OpenAPI document made it megabytes,
 * and a client must take a code it does not know (a newer gateway's) anyway.
 */
export const MessageCodeSchema = z
  .string()
  .meta({ description: 'The stable code of the message (docs/api.md "Message codes"), e.g. too_long' });

/** The values a message names (`{ max: 63 }`), for the translation of its code. */
export const MessageParamsSchema = z.record(z.string(), z.union([z.string(), z.number()]));

// `messageCode`/`code` of a message are optional: a text without a code yet (or from a gateway before codes) is
// shown as the English `message`. Answers also stay valid for clients that never read them.
const messageDescription = {
  messageCode: MessageCodeSchema.optional(),
  params: MessageParamsSchema.optional(),
};

/**
 * 400, 401, 403, 404, 413, 415, 429, 5xx: the spec's `{ message }` plus a stable machine-readable `code` (what
 * happened), and `messageCode`/`params` (which message, for a translation).
 */
export const MessageErrorSchema = z.object({ message: z.string(), code: ErrorCodeSchema, ...messageDescription });
export type MessageError = z.infer<typeof MessageErrorSchema>;

/** One field's message, its stable `code` and the values in it (`{ field, message, code: 'too_long', params }`). */
export const FieldErrorSchema = z.object({
  field: z.string(),
  message: z.string(),
  code: MessageCodeSchema.optional(),
  params: MessageParamsSchema.optional(),
});
export type FieldError = z.infer<typeof FieldErrorSchema>;

/** 422: field names equal the request's keys, messages are the spec's. */
export const ValidationErrorSchema = z.object({
  message: z.string(),
  code: z.literal('validation'),
  ...messageDescription,
  errors: z.object({ body: z.array(FieldErrorSchema) }),
});
export type ValidationError = z.infer<typeof ValidationErrorSchema>;

export const VALIDATION_FAILED_MESSAGE = 'Validation failed';

/** `{ field, message }` with the message's code and values, when the message has one (message-codes.ts). */
export function describeFieldError(field: string, message: string): FieldError {
  return { field, message, ...describeMessage(message) };
}

/** Maps a zod error onto field errors: the first message per top-level field, with its code. */
export function toFieldErrors(error: z.ZodError): FieldError[] {
  const seen = new Map<string, string>();
  for (const issue of error.issues) {
    const field = issue.path.length > 0 ? String(issue.path[0]) : '_';
    if (!seen.has(field)) seen.set(field, issue.message);
  }
  return [...seen].map(([field, message]) => describeFieldError(field, message));
}

/** A 422's body for field errors (each given its code here if it has none yet). */
export function validationErrorBody(fields: readonly FieldError[]): ValidationError {
  return {
    message: VALIDATION_FAILED_MESSAGE,
    code: 'validation',
    messageCode: 'validation_failed',
    errors: { body: fields.map((entry) => (entry.code ? entry : describeFieldError(entry.field, entry.message))) },
  };
}

export function toValidationError(error: z.ZodError): ValidationError {
  return validationErrorBody(toFieldErrors(error));
}
