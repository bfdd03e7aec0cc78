import type { FieldError } from '@postern/contract';

// One error model (STYLE.md §4): services throw AppError; the app's error handler maps the code to a status
// and the contract's envelope. Clients branch on status/code, never on the message text.

export type AppErrorCode =
  | 'bad_request' // 400 { message }
  | 'unauthorized' // 401
  | 'forbidden' // 403
  | 'not_found' // 404
  | 'validation' // 422 { message, errors: { body } }
  | 'rate_limited' // 429
  | 'dataplane_rejected' // 400: stored, but the data plane set the row aside (the console toasts a 400's message)
  | 'dataplane_unavailable' // 503: stored; nginx or the tunnel is down and the change is applied once it is back
  | 'internal'; // 500

export const statusOf: Record<AppErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  validation: 422,
  rate_limited: 429,
  dataplane_rejected: 400,
  dataplane_unavailable: 503,
  internal: 500,
};

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
