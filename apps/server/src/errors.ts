import { errorStatus, type ErrorCode, type FieldError } from '@postern/contract';

// One error model (STYLE.md §4): services throw AppError with one of the contract's error codes; the app's error
// handler maps the code to its status and the envelope `{ message, code }` (422: plus `errors.body`). Clients branch
// on the code, never on the message text. The codes and their statuses: contract errors.ts, docs/api.md.

export type AppErrorCode = ErrorCode;

export const statusOf: Record<AppErrorCode, number> = errorStatus;

export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly fields: FieldError[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const notFound = (what: string): AppError => new AppError('not_found', `${what} not found`);
export const badRequest = (message: string): AppError => new AppError('bad_request', message);
/** A 422 on one field, for rules only the database can check (uniqueness, address in use, ...). */
export const fieldError = (field: string, message: string): AppError =>
  new AppError('validation', 'Validation failed', [{ field, message }]);
