import type { FieldError } from './envelopes.js';
import type { MessageParams } from './message-codes.js';

// The error model clients branch on (docs/api.md "Error codes"). Every error answer is `{ message, code }`; a 422
// adds `errors: { body: [{ field, message }] }`. `message` is for people and may change; `code` is stable.
// Imports no zod at run time: the console's first page reads errors through this file.

/** Each code with the one HTTP status it is sent with. */
export const errorStatus = {
  /** A business rule refused the request (local node, domain in use, quota, invalid JSON). */
  bad_request: 400,
  /** Stored, but the data plane set the row aside (nginx refused its config); the reason is `message`. */
  dataplane_rejected: 400,
  /** No session or token, or one that is no longer valid. */
  unauthorized: 401,
  /** Authenticated, but not allowed (a disabled node's token; the session handed to another site). */
  forbidden: 403,
  /** No such resource or route (a malformed id in a path names none). */
  not_found: 404,
  /** The body is larger than the route accepts. */
  payload_too_large: 413,
  /** The body's media type is not JSON. */
  unsupported_media_type: 415,
  /** Fields failed their rules; `errors.body` names them. */
  validation: 422,
  /** Too many attempts (or sign-ins in progress); `Retry-After` says when to try again. */
  rate_limited: 429,
  /** A fault on the gateway's side; details only in its log. */
  internal: 500,
  /** Stored, but nginx or the tunnel is down: the change is applied once it is back. */
  dataplane_unavailable: 503,
  /** The shared database does not answer: nothing was stored; the gateways go on serving what they serve. */
  database_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export const ERROR_CODES = Object.keys(errorStatus) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(errorStatus, value);
}

/** The code of an error the framework answers itself (unknown route, malformed JSON, body too large, ...). */
export function errorCodeForStatus(status: number): ErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 413) return 'payload_too_large';
  if (status === 415) return 'unsupported_media_type';
  if (status === 422) return 'validation';
  if (status === 429) return 'rate_limited';
  return status >= 500 ? 'internal' : 'bad_request';
}

/** The data plane's outcomes: the change is stored either way, only serving it failed. */
export function isStoredButNotApplied(code: ErrorCode | null): boolean {
  return code === 'dataplane_rejected' || code === 'dataplane_unavailable';
}

/** What the server's error body said (checked by hand: no zod on the first page). */
export interface ApiErrorDetails {
  /** The server's `message`, if it sent one. */
  serverMessage?: string | null;
  /** The server's `code`; null when there was no answer or it sent none (a gateway from before codes). */
  code?: ErrorCode | null;
  /** 422: per-field messages from `errors.body` (with their `code` and `params` as sent: unchecked). */
  fieldErrors?: FieldError[];
  /** The code of `serverMessage` (message-codes.ts) and its values; null when the server sent none. */
  messageCode?: string | null;
  params?: MessageParams | null;
}

/** A failed call: its status and what the error body said. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly serverMessage: string | null;
  readonly code: ErrorCode | null;
  readonly fieldErrors: FieldError[];
  readonly messageCode: string | null;
  readonly params: MessageParams | null;

  constructor(
    /** 0 when no response arrived. */
    readonly status: number,
    message: string = `Request failed with status code ${status}`,
    details: ApiErrorDetails = {},
  ) {
    super(message);
    this.serverMessage = details.serverMessage ?? null;
    this.code = details.code ?? null;
    this.fieldErrors = details.fieldErrors ?? [];
    this.messageCode = details.messageCode ?? null;
    this.params = details.params ?? null;
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

function isFieldError(value: unknown): value is FieldError {
  return (
    typeof value === 'object' &&
    value !== null &&
    'field' in value &&
    'message' in value &&
    typeof value.field === 'string' &&
    typeof value.message === 'string'
  );
}

/** The parts of an error body a client uses; anything missing or malformed reads as absent. */
export function readErrorBody(body: unknown): {
  message: string | null;
  code: ErrorCode | null;
  fieldErrors: FieldError[];
  messageCode: string | null;
  params: MessageParams | null;
} {
  if (typeof body !== 'object' || body === null)
    return { message: null, code: null, fieldErrors: [], messageCode: null, params: null };
  const message = 'message' in body && typeof body.message === 'string' ? body.message : null;
  const code = 'code' in body && isErrorCode(body.code) ? body.code : null;
  const messageCode = 'messageCode' in body && typeof body.messageCode === 'string' ? body.messageCode : null;
  // Values are shown as text only (the console's `error.<code>` messages): not checked one by one.
  const params = 'params' in body && typeof body.params === 'object' ? (body.params as MessageParams | null) : null;
  let fieldErrors: FieldError[] = [];
  if ('errors' in body && typeof body.errors === 'object' && body.errors !== null && 'body' in body.errors) {
    const list = body.errors.body;
    if (Array.isArray(list)) fieldErrors = list.filter(isFieldError);
  }
  return { message, code, fieldErrors, messageCode, params };
}
